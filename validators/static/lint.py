"""The repository's lint on a package's Python: ARENA008 (correctness, an error) and ARENA010 (house style, a warning),
from one ruff run over any number of packages; and `arena fix`, which applies ruff's safe fixes and formatter.

The settings, the runner and the policy that splits correctness from style are taskpkg.python_lint's (the import uses
them too). Every Python file of a package outside `environment/` is linted, as pyproject.toml's extend-exclude has it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from taskpkg.diagnostics import Diagnostic
from taskpkg.python_lint import NOT_LINTED, LintFinding, LintUnavailable, fix, is_linted, lint
from taskpkg.rules.package_files import ARENA008, ARENA010
from taskpkg.rules.sources import ARENA501
from validators.registry import Needs, check
from validators.static.files import PackageTree, walk
from validators.static.verifier_source import VERIFIER, syntax_error

__all__ = ["NOT_LINTED", "FixOutcome", "LintUnavailable", "fix_package", "lint_packages", "linted_files"]


@dataclass
class FixOutcome:
    """What `arena fix` did to one package: the files it changed and the findings left (ARENA008 and ARENA010)."""

    root: Path
    changed: list[str] = field(default_factory=list)
    left: list[Diagnostic] = field(default_factory=list)


def linted_files(tree: PackageTree) -> list[str]:
    """The package-relative paths the repository's lint covers."""
    return [f.relative for f in tree.files if is_linted(f.relative)]


@check(ARENA008, ARENA010, ARENA501, needs=Needs.FOLDER)
def lint_packages(trees: list[PackageTree], display_paths: list[str] | None = None) -> list[list[Diagnostic]]:
    """ARENA008 and ARENA010 findings for each package, from one ruff run over all of them. display_paths name the
    packages in the fix `arena fix` offers (default: their roots)."""
    paths, places = _linted_paths(trees)
    return _diagnostics(lint(paths), places, display_paths or [str(tree.root) for tree in trees])


def fix_package(root: Path, display_path: str | None = None) -> FixOutcome:
    """Apply ruff's safe fixes and formatter (the repository's settings) to the package's linted files; return the
    files changed and what is left."""
    tree = walk(root)
    paths, places = _linted_paths([tree])
    before = {path: tree.by_path[places[path][1]].data for path in paths}
    left = fix(paths)
    changed = [places[path][1] for path in paths if Path(path).read_bytes() != before[path]]
    return FixOutcome(root, changed, _diagnostics(left, places, [display_path or str(root)])[0])


def _linted_paths(trees: list[PackageTree]) -> tuple[list[str], dict[str, tuple[int, str]]]:
    """The absolute paths to lint, and each one's (package index, package-relative path), by absolute and by real
    path: ruff may report either."""
    paths, places = [], {}
    for index, tree in enumerate(trees):
        for relative in linted_files(tree):
            path = os.path.abspath(tree.root / relative)
            paths.append(path)
            places[path] = places[os.path.realpath(path)] = (index, relative)
    return paths, places


def _diagnostics(items: list[LintFinding], places: dict[str, tuple[int, str]],
                 displays: list[str]) -> list[list[Diagnostic]]:
    found: list[list[Diagnostic]] = [[] for _ in displays]
    syntax_seen: set[tuple[int, str]] = set()
    for item in items:
        place = places.get(item.filename) or places.get(os.path.realpath(item.filename))
        if place is None:
            continue
        index, relative = place
        if item.syntax and place in syntax_seen:
            continue  # one syntax finding a file is enough: the rest follow from the first
        if item.syntax:
            syntax_seen.add(place)
        found[index].append(finding(item, relative, displays[index]))
    return found


def finding(item: LintFinding, relative: str, package: str) -> Diagnostic:
    """The diagnostic for one ruff finding in a package's file: ARENA008 for correctness, ARENA010 for style."""
    where = (relative, item.line, item.column)
    if item.syntax and relative == VERIFIER:
        return syntax_error(item.line, item.column, item.message)
    if item.syntax:
        return ARENA008.found(*where, case="syntax", problem=item.message)
    if item.correctness:
        return ARENA008.found(*where, code=item.code, problem=item.message)
    if item.fixable:
        return ARENA010.found(*where, case="fixable", code=item.code, problem=item.message, package=package)
    return ARENA010.found(*where, code=item.code, problem=item.message)
