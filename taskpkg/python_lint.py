"""The repository's lint on a package's Python: the pinned ruff with pyproject.toml's `[tool.ruff]` settings.

One runner for everyone who lints or fixes a package: `arena check` (ARENA008 for the correctness rules, ARENA010 for
house style), `arena fix` and `arena import` (ruff's safe fixes, then its formatter). RUFF_SETTINGS are the
repository's settings (a test keeps them equal), given with `--isolated`, so the result depends neither on where the
package lies nor on any config near it. One ruff process handles any number of files (it spreads them over the cores).

The policy for contributed code (docs/SPEC.md says why): a finding is *correctness* (an error) when it means the code
is wrong or hides a bug: a syntax error, or a pyflakes rule (undefined names, unused or shadowed bindings, broken
format strings, comparisons that are always true) other than the four below; everything else is *style* (a warning,
fixed by `arena fix`). STYLE_RULES is what pyproject.toml ignores under `environments/`, so the repository's own
`ruff check .` never rejects what `arena check` accepts.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

RUFF_SETTINGS: dict[str, object] = {
    "line-length": 120,
    "target-version": "py311",
    "lint": {"select": ["E", "F", "W", "I", "B", "UP", "SIM", "RUF"], "ignore": ["RUF001", "RUF002", "RUF003"]},
}
# pyflakes rules that are house style, not correctness: unused imports, star imports, f-strings without fields.
STYLE_PYFLAKES = ("F401", "F403", "F405", "F541")
STYLE_RULES = ("B", "E", "I", "RUF", "SIM", "UP", "W", *STYLE_PYFLAKES)
PACKAGES_GLOB = "environments/**"  # where contributed packages live: pyproject.toml's per-file-ignores key
NOT_LINTED = "environment/"  # a package's image files: pyproject.toml's extend-exclude
LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")
RUFF_TIMEOUT_S = 120


class LintUnavailable(RuntimeError):
    """ruff, installed with the arena, could not run: a broken installation, not a package's fault."""


@dataclass(frozen=True)
class LintFinding:
    """One ruff finding: the file as ruff names it, 1-based line and column, the rule (None for a syntax error)."""

    filename: str
    line: int
    column: int
    code: str | None
    message: str
    fixable: bool  # `ruff check --fix` (safe fixes) removes it

    @property
    def syntax(self) -> bool:
        """Whether the file is not valid Python here."""
        return self.code is None

    @property
    def correctness(self) -> bool:
        """An error under the policy (syntax, or a pyflakes rule that is not style); otherwise style."""
        return self.code is None or not self.code.startswith(STYLE_RULES)


def is_linted(relative: str) -> bool:
    """Whether the repository's lint covers a package file (its package-relative POSIX path)."""
    return relative.endswith(LINTED_SUFFIXES) and not relative.startswith(NOT_LINTED)


def ruff_binary() -> str:
    """The ruff installed with the arena (its pinned version), else one on PATH."""
    try:
        from ruff.__main__ import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return "ruff"


def settings_arguments() -> list[str]:
    """`--isolated` and the repository's settings as `--config` overrides."""
    overrides = ["--isolated"]
    for key, value in RUFF_SETTINGS.items():
        settings = {f"{key}.{sub}": v for sub, v in value.items()} if isinstance(value, dict) else {key: value}
        for name, setting in settings.items():
            overrides += ["--config", f"{name} = {json.dumps(setting)}"]
    return overrides


def check_command(paths: list[str]) -> list[str]:
    """The ruff command that lints files with the repository's settings and prints JSON."""
    return [ruff_binary(), "check", *settings_arguments(), "--no-cache", "--quiet", "--output-format", "json",
            "--exit-zero", "--", *paths]


def lint(paths: list[str]) -> list[LintFinding]:
    """Every finding in the files, from one ruff run. Raises LintUnavailable when ruff cannot run."""
    return _findings(check_command(paths)) if paths else []


def fix(paths: list[str]) -> list[LintFinding]:
    """Apply ruff's safe fixes, then its formatter (in that order, so the result is formatted and a second run
    changes nothing), to the files (a file ruff cannot parse is left as it is); return what is left, as `lint`
    does. Three ruff runs for any number of files."""
    if paths:
        settings = settings_arguments()
        _run([ruff_binary(), "check", *settings, "--no-cache", "--quiet", "--fix-only", "--exit-zero", "--", *paths])
        _run([ruff_binary(), "format", *settings, "--no-cache", "--quiet", "--", *paths])
    return lint(paths)


def _findings(command: list[str]) -> list[LintFinding]:
    done = _run(command)
    try:
        reported = json.loads(done.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise _unavailable(exc) from None
    return [LintFinding(item["filename"], item["location"]["row"], item["location"]["column"],
                        None if item["code"] in (None, "invalid-syntax") else item["code"], item["message"],
                        (item.get("fix") or {}).get("applicability") == "safe") for item in reported]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=RUFF_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _unavailable(exc) from None


def _unavailable(cause: Exception) -> LintUnavailable:
    return LintUnavailable(f"ruff, installed with the arena, could not lint the packages ({cause}); reinstall the "
                           "arena (`scripts/setup`)")
