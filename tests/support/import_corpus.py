"""Import a corpus of foreign tasks as a new user would (one `arena import` each, then the static check) and say, for
each task, whether the package passes and, where not, the real reasons, each with its fix.

Used by the slow corpus test (tests/test_interop_corpus.py) on the fixture corpus and by bench/import_corpus.py on
any folder of tasks (the README's figures for public corpora come from it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from interop import InteropError, import_task
from interop.read import detect_format
from validators.static import run_static_checks

# Why a check rejects an imported package, by the rule that says so: the reason in a few words, and the fix.
REASONS = {
    "ARENA202": ("the source has no reference solution", "write oracle/solve.sh"),
    "ARENA502": ("the verifier reads the agent's logs", "check the final files instead"),
    "ARENA504": ("the tests install at verification time, unguarded (needs the network)",
                 "install the tools in environment/Dockerfile, pinned, and delete the line"),
    "ARENA407": ("the tests pipe a download into a shell (needs the network)",
                 "install the tool in environment/Dockerfile, pinned"),
    "ARENA503": ("the verifier uses the network", "verify from local files only"),
    "ARENA401": ("the base image has no version tag", "pin a tag (e.g. ubuntu:24.04)"),
    "ARENA403": ("a Python package no registry could pin", "pin it (NAME==VERSION)"),
    "ARENA008": ("Python that is wrong (a syntax error or a bug)", "fix the code at the line shown"),
}
STYLE_RULES = frozenset({"ARENA010"})


@dataclass
class Outcome:
    """One task of the corpus: refused by the import, or imported and passed or failed, with the reasons."""

    task: Path
    status: str  # "pass", "fails" or "refused"
    errors: list[str] = field(default_factory=list)  # rule ids of the errors, or the refusal
    reasons: list[str] = field(default_factory=list)

    @property
    def fails_only_for_style(self) -> bool:
        """Whether every error is house style (never true under the lint policy: style is a warning)."""
        return self.status == "fails" and set(self.errors) <= STYLE_RULES


def import_and_check(task: Path, out: Path, domain_when_asked: str | None = None, **options: str) -> Outcome:
    """One `arena import` of task into out, then the static check, as `arena import` runs it. With
    domain_when_asked, a task refused only because no domain maps is imported again with that `--domain`, as the
    refusal's fix says (a second import, reported in the reasons)."""
    try:
        result = import_task(task, out, **options)
    except InteropError as exc:
        coding = "coding is deliberately" in str(exc)
        if domain_when_asked and "Pass --domain" in str(exc):
            outcome = import_and_check(task, out, None, **options, domain=domain_when_asked)
            outcome.reasons.append(f"asked for --domain{' (a coding task)' if coding else ''}")
            return outcome
        why = "a coding task: coding is deliberately not an arena domain" if coding else str(exc).split(". Fix:")[0]
        return Outcome(task, "refused", [str(exc)], [why])
    report = run_static_checks(result.package_path)
    errors = sorted({d.check_id for d in report.diagnostics if d.severity.value == "error"})
    reasons = [f"{rule}: {REASONS[rule][0]} (fix: {REASONS[rule][1]})" if rule in REASONS else rule for rule in errors]
    return Outcome(task, "pass" if report.passed else "fails", errors, reasons)


def task_folders(root: Path) -> list[Path]:
    """Every task folder under root (a folder a format reader recognises), in order."""
    found = []
    for config in sorted([*root.rglob("task.toml"), *root.rglob("task.yaml"), *root.rglob("task.md")]):
        folder = config.parent
        try:
            detect_format(folder)
        except InteropError:
            continue
        if folder not in found:
            found.append(folder)
    return found


def summary(outcomes: list[Outcome]) -> list[str]:
    """Lines for a reader: the pass share, then how often each reason stopped a package."""
    passed = sum(o.status == "pass" for o in outcomes)
    lines = [f"{passed} of {len(outcomes)} pass ({100 * passed / max(1, len(outcomes)):.0f}%); "
             f"{sum(o.status == 'refused' for o in outcomes)} refused by the import; "
             f"{sum(o.fails_only_for_style for o in outcomes)} fail only for style"]
    asked = sum(any(r.startswith("asked for --domain") for r in o.reasons) for o in outcomes)
    lines[0] += f"; {asked} imported again with --domain when asked" if asked else ""
    counts = Counter(reason for o in outcomes for reason in o.reasons)
    lines += [f"  {count:4d}  {reason}" for reason, count in counts.most_common()]
    return lines
