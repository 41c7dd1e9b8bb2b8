"""The sticky comment and the bot's replies as GitHub Markdown: verdict first, every untrusted string made inert.

Untrusted: everything a contributor controls (PR title, branch and file names, package title) and everything in the
report artifact (messages, fixes, check titles). `neutralise` removes every invisible formatting character by its
Unicode properties (category Cf: bidi embeddings, overrides and isolates, marks, zero-width and tag characters) and
turns controls and line separators into spaces; `inline` then makes such text plain: no HTML, no @mentions or
#references, no links, images or emphasis, no table breaks, bounded length. Bodies stay under GitHub's 65,536-character
limit; findings that do not fit are counted and point at the Actions run.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from bot.markers import MARKER
from bot.sticky import StickyState
from taskpkg.check_report import CheckStatus, PackageReport, Report
from taskpkg.diagnostics import Diagnostic, Severity

LIMIT = 65_536
BUDGET = 60_000  # leaves room for the fixed parts of a body
_SPACES = re.compile(r" {2,}")
_MARKDOWN = re.compile(r"([\\`*_\[\]()!|~{}$])")
_REFERENCE = re.compile(r"(#|(?i:gh-))(?=\w)")
_AUTOLINK = re.compile(r"(?i)(://|www\.)")
_SEVERITY_ICON = {"error": "❌ error", "warning": "⚠️ warning"}
COMMANDS = (
    ("/arena help", "anyone", "this list"),
    ("/arena check", "maintainers", "re-run the validation of the PR's head commit"),
    ("/arena train [SHA]", "maintainers", "post-train on this environment at the head commit, once it passes"),
    ("/arena status", "anyone", "where this PR's training job stands"),
    ("/arena cancel", "maintainers", "cancel this PR's training job at its head commit"),
)


class _Neutral(dict[int, str | None]):
    """str.translate table, filled on demand from each character's Unicode general category."""

    def __missing__(self, code: int) -> str | None:
        category = unicodedata.category(chr(code))
        if category == "Cf":  # format: bidi controls, LRM/RLM/ALM, zero-width (non-)joiners, BOM, tags, ...
            value: str | None = None
        elif category in ("Cc", "Zl", "Zp"):  # controls, line and paragraph separators
            value = " "
        elif category in ("Cs", "Cn"):  # lone surrogates, unassigned code points
            value = "\ufffd"
        else:
            value = chr(code)
        self[code] = value
        return value


_NEUTRAL = _Neutral()


def neutralise(text: str) -> str:
    """Text without invisible formatting characters, on one line (controls and separators become spaces)."""
    return _SPACES.sub(" ", text.translate(_NEUTRAL)).strip()


def inline(text: str, limit: int = 300) -> str:
    """Untrusted text as inert one-line Markdown (safe in table cells, link texts and paragraphs)."""
    text = neutralise(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN.sub(r"\\\1", text)
    text = text.replace("@", "@\u200b")
    text = _REFERENCE.sub(lambda m: m.group(1) + "\u200b", text)
    return _AUTOLINK.sub(lambda m: m.group(1)[0] + "\u200b" + m.group(1)[1:], text)


@dataclass(frozen=True)
class Context:
    """Where a body points: the repository, the PR head and its package, the Actions run."""

    server_url: str
    repo: str
    head_sha: str
    head_label: str
    package: str | None = None
    run_url: str | None = None

    def commit_link(self) -> str:
        return f"[`{self.head_sha[:7]}`]({self.server_url}/{self.repo}/commit/{self.head_sha})"

    def blob_link(self, package_path: str, file: str | None, line: int | None) -> str:
        """A link to file:line at the PR head, or plain text when the path is not inside the package."""
        label = inline(f"{file}:{line}" if file and line else (file or "package"), 120)
        if not file or file == ".":
            return label
        pure = PurePosixPath(package_path) / file
        if pure.is_absolute() or ".." in pure.parts:
            return label
        url = f"{self.server_url}/{self.repo}/blob/{self.head_sha}/{quote(pure.as_posix(), safe='/')}"
        return f"[{label}]({url}{f'#L{line}' if line else ''})"

    def reproduce(self) -> str:
        return ("**Reproduce locally** from the repository root:\n\n"
                f"```sh\narena check environments/{self.package or '<name>'}\n```")


def frame(state: StickyState, ctx: Context, heading: str, blocks: list[str]) -> str:
    """A sticky body: the markers, the heading (the verdict), the blocks, a footer; cut to fit if ever needed."""
    run = f" · [Actions run]({ctx.run_url})" if ctx.run_url else ""
    footer = (f"<sub>PostTrain Arena bot · commit {ctx.commit_link()} from {inline(ctx.head_label, 120)}{run} · "
              "comment `/arena help` for commands</sub>")
    body = "\n\n".join([f"{MARKER}\n{state.line()}\n{heading}", *blocks, footer]) + "\n"
    if len(body) >= LIMIT:  # the renderers budget their lists, so this is a last resort
        tail = f"\n\n… cut to fit a GitHub comment; the full report is in the {run or 'Actions run'}.\n"
        body = body[: LIMIT - len(tail) - 1] + tail
    return body


def verdict_body(state: StickyState, ctx: Context, report: Report, package: PackageReport) -> str:
    """The verdict on a package: failed and warned findings with links, timings, how to reproduce, passed checks."""
    passed = package.passed
    heading = (f"## {'✅' if passed else '❌'} Arena check {'passed' if passed else 'failed'}: "
               f"`{ctx.package}` · {_plural(package.count(Severity.ERROR), 'error')}, "
               f"{_plural(package.count(Severity.WARNING), 'warning')}")
    title = f" (“{inline(package.title, 200)}”)" if package.title else ""
    intro = f"Package `environments/{ctx.package}`{title} at commit {ctx.commit_link()}."
    if passed:
        intro += " It is ready for review; a maintainer can start training with `/arena train`."
    findings = sorted((d for d in package.diagnostics if d.severity is not Severity.INFO),
                      key=lambda d: d.severity is not Severity.ERROR)
    blocks = [intro, *_findings_table(ctx, package.path, findings), _timings(report, package), ctx.reproduce()]
    blocks.append(_passed_details(package))
    return frame(state, ctx, heading, [b for b in blocks if b])


def _findings_table(ctx: Context, package_path: str, findings: list[Diagnostic]) -> list[str]:
    if not findings:
        return []
    rows = ["| | check | where | problem | how to fix |", "|---|---|---|---|---|"]
    used = sum(map(len, rows))
    for shown, d in enumerate(findings):
        row = (f"| {_SEVERITY_ICON[d.severity]} | `{d.check_id}` | "
               f"{ctx.blob_link(package_path, d.file, d.line)} | {inline(d.message)} | {inline(d.fix)} |")
        if used + len(row) > BUDGET // 2:
            rows.append(f"| … | | | {len(findings) - shown} more findings not shown | see the "
                        f"{f'[Actions run]({ctx.run_url})' if ctx.run_url else 'Actions run'} |")
            break
        rows.append(row)
        used += len(row) + 1
    return ["\n".join(rows)]


def _timings(report: Report, package: PackageReport) -> str:
    text = (f"**Timings:** {report.mode} checks of this package took {_duration(package.duration_ms / 1000)} "
            f"(whole run {_duration(report.duration_s)}).")
    trials = package.trial_records()
    if trials:
        slowest = max(trials, key=lambda t: t.duration_s)
        text += (f" {len(trials)} trials, {_duration(sum(t.duration_s for t in trials))} in all; slowest "
                 f"`{slowest.check_id}` ({inline(slowest.agent, 60)}) {_duration(slowest.duration_s)}.")
    return text


def _passed_details(package: PackageReport) -> str:
    passed = [c for c in package.check_records() if c.status is CheckStatus.PASSED]
    notes = [d for d in package.diagnostics if d.severity is Severity.INFO]
    if not passed and not notes:
        return ""
    lines = [f"- ✅ `{c.check_id}` {inline(c.title, 200)}" for c in passed]
    lines += [f"- ℹ️ `{d.check_id}` {inline(d.message)}" for d in notes]
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > BUDGET // 3:
            kept.append(f"- … and {len(lines) - len(kept)} more")
            break
        kept.append(line)
        used += len(line) + 1
    summary = f"{_plural(len(passed), 'check')} passed" + (f", {_plural(len(notes), 'note')}" if notes else "")
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(kept) + "\n\n</details>"


def pending_body(state: StickyState, ctx: Context, retargeted: bool = False) -> str:
    """While the validation of a new head runs (or, after a base change, until a push validates it again)."""
    if retargeted:
        return frame(state, ctx, f"## ⏳ Arena check waiting: `{ctx.package}`",
                     [f"The base branch changed, so no verdict from before counts. Push a commit (or close and reopen "
                      f"this pull request) to validate `environments/{ctx.package}` at {ctx.commit_link()} against "
                      "it.", ctx.reproduce()])
    return frame(state, ctx, f"## ⏳ Arena check running: `{ctx.package}`",
                 [f"Validating `environments/{ctx.package}` at commit {ctx.commit_link()}. This comment will show "
                  "the verdict when the checks finish.", ctx.reproduce()])


def notice_body(state: StickyState, ctx: Context, heading: str, paragraphs: list[str]) -> str:
    """Anything that is not a verdict: needs a maintainer, over the cap, an unreadable report, a bot failure."""
    return frame(state, ctx, f"## {heading}", paragraphs)


def help_body() -> str:
    """The list of commands."""
    rows = "\n".join(f"| `{command}` | {who} | {what} |" for command, who, what in COMMANDS)
    return ("**PostTrain Arena commands** (one per comment, at its very start):\n\n"
            f"| command | who | what |\n|---|---|---|\n{rows}\n\n"
            "Maintainers are people with write, maintain or admin access to this repository.")


def unknown_body(word: str) -> str:
    """Reply to an /arena command the bot does not know."""
    return f"I don't know the `/arena` command “{inline(word, 40)}”.\n\n{help_body()}"


def refusal_body(login: str, command: str, reason: str) -> str:
    """A polite no, with the reason."""
    return f"Sorry {inline(login, 40)}, I can't run `/arena {command}`: {reason}"


def accepted_body(login: str, environment: str, sha: str, launching: bool, run_url: str | None) -> str:
    """The reply that records an accepted `/arena train` (written before anything is launched)."""
    head = (f"Training accepted, requested by {inline(login, 40)}: `environments/{environment}` at commit {sha} "
            "(pinned: later pushes do not change it).")
    if not launching:
        return f"{head}\n\n**Launch is not configured** for this arena yet, so nothing was started."
    run = f"[this Actions run]({run_url})" if run_url else "this command's Actions run"
    return (f"{head}\n\nThe launch job of {run} starts it once a maintainer approves the `gpu-training` environment; "
            "nothing is started for this environment and commit a second time.")


def duplicate_body(environment: str, sha: str, link: str) -> str:
    """The reply to a `/arena train` whose (environment, commit) was already accepted."""
    return (f"Training of `environments/{environment}` at commit {sha} was already accepted [here]({link}); "
            "nothing more was started.")


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
