"""The repository's lint on a package's Python (ARENA008): what CI enforces, reported by `arena check` first.

The repository's test suite runs `ruff check .` with pyproject.toml's `[tool.ruff]` settings, so every Python file of
a package outside `environment/` must pass them. RUFF_SETTINGS are those settings (a test keeps them equal), given
to the pinned ruff with `--isolated`, so the result depends neither on where the package lies nor on any config
near it. One ruff process lints any number of packages (it spreads files over the cores itself).
"""

from __future__ import annotations

import json
import os
import subprocess

from taskpkg.diagnostics import Diagnostic
from taskpkg.rules.package_files import ARENA008
from validators.static.files import PackageTree

RULES = (ARENA008,)
RUFF_SETTINGS: dict[str, object] = {
    "line-length": 120,
    "target-version": "py311",
    "lint": {"select": ["E", "F", "W", "I", "B", "UP", "SIM", "RUF"], "ignore": ["RUF001", "RUF002", "RUF003"]},
}
NOT_LINTED = "environment/"  # the image's own files: pyproject.toml's extend-exclude
SUFFIXES = (".py", ".pyi", ".ipynb")
OWN_SYNTAX_CHECK = frozenset({"verifier.py"})  # ARENA501 reports its syntax errors
RUFF_TIMEOUT_S = 120


class LintUnavailable(RuntimeError):
    """ruff, installed with the arena, could not run: a broken installation, not a package's fault."""


def linted_files(tree: PackageTree) -> list[str]:
    """The package-relative paths the repository's lint covers."""
    return [f.relative for f in tree.files if f.relative.endswith(SUFFIXES) and not f.relative.startswith(NOT_LINTED)]


def ruff_command(paths: list[str]) -> list[str]:
    """The ruff command line for files, with the repository's settings."""
    overrides = []
    for key, value in RUFF_SETTINGS.items():
        settings = {f"{key}.{sub}": v for sub, v in value.items()} if isinstance(value, dict) else {key: value}
        for name, setting in settings.items():
            overrides += ["--config", f"{name} = {json.dumps(setting)}"]
    return [_ruff(), "check", "--isolated", "--no-cache", "--quiet", "--output-format", "json", "--exit-zero",
            *overrides, "--", *paths]


def lint_packages(trees: list[PackageTree]) -> list[list[Diagnostic]]:
    """ARENA008 findings for each package, from one ruff run over all of them."""
    files: dict[str, tuple[int, str]] = {}  # by absolute and by real path: ruff may report either
    paths = []
    for index, tree in enumerate(trees):
        for relative in linted_files(tree):
            path = os.path.abspath(tree.root / relative)
            paths.append(path)
            files[path] = files[os.path.realpath(path)] = (index, relative)
    found: list[list[Diagnostic]] = [[] for _ in trees]
    if not paths:
        return found
    try:
        done = subprocess.run(ruff_command(paths), capture_output=True, text=True, timeout=RUFF_TIMEOUT_S,
                              check=False)
        reported = json.loads(done.stdout or "[]")
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        raise LintUnavailable(f"ruff, installed with the arena, could not lint the packages ({exc}); reinstall the "
                              "arena (`scripts/setup`)") from None
    syntax_seen: set[str] = set()
    for item in reported:
        place = files.get(item["filename"]) or files.get(os.path.realpath(item["filename"]))
        if place is None:
            continue
        index, relative = place
        syntax = item["code"] in (None, "invalid-syntax")
        if syntax and (relative in OWN_SYNTAX_CHECK or relative in syntax_seen):
            continue
        syntax_seen |= {relative} if syntax else set()
        found[index].append(_finding(item, relative, syntax))
    return found


def _finding(item: dict, relative: str, syntax: bool) -> Diagnostic:
    line, column = item["location"]["row"], item["location"]["column"]
    if syntax:
        return ARENA008.found(relative, line, column, case="syntax", problem=item["message"])
    if (item.get("fix") or {}).get("applicability") == "safe":  # what `ruff check --fix` applies
        return ARENA008.found(relative, line, column, case="fixable", code=item["code"], problem=item["message"],
                              path=relative)
    return ARENA008.found(relative, line, column, code=item["code"], problem=item["message"])


def _ruff() -> str:
    """The ruff installed with the arena (its pinned version), else one on PATH."""
    try:
        from ruff.__main__ import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return "ruff"
