"""Where the project's code raises each rule, read from its syntax trees: an id in a comment, a docstring or a string
is no raise site.

A raise site is a call of a rule constant's `found` (`ARENA002.found(...)`), its `found` handed to a call that applies
it later (`partial(ARENA403.found, case=...)`), or a parser's violation built from the rule (`RuleViolation(ARENA104,
case, ...)` or a subclass of it), where the constant is imported from `taskpkg.rules`. Each site has its case: the
`case` given as a literal ("" when none is given), or None when the code computes it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

RULE_NAME = re.compile(r"ARENA\d{3}")
VIOLATION = "RuleViolation"


@dataclass(frozen=True)
class Site:
    """One place that raises a rule: its module's file, line and case (None: computed)."""

    rule_id: str
    file: str
    line: int
    case: str | None


def rule_names(tree: ast.Module) -> set[str]:
    """The rule constants a module imports from taskpkg.rules."""
    return {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("taskpkg.rules") for alias in node.names
            if RULE_NAME.fullmatch(alias.asname or alias.name)}


def violation_classes(trees: Iterable[ast.Module]) -> set[str]:
    """RuleViolation and the names of the classes that derive from it, however deep."""
    bases = {node.name: {b.id for b in node.bases if isinstance(b, ast.Name)} for tree in trees
             for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    found = {VIOLATION}
    while True:
        more = {name for name, parents in bases.items() if parents & found} - found
        if not more:
            return found
        found |= more


def _case(keywords: list[ast.keyword]) -> str | None:
    given = next((k.value for k in keywords if k.arg == "case"), None)
    if given is None:
        return None if any(k.arg is None for k in keywords) else ""  # `**fields` may hold the case
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None


def _found_of(node: ast.expr, rules: set[str]) -> str | None:
    """The rule id when node is `ARENAnnn.found` of an imported rule."""
    if isinstance(node, ast.Attribute) and node.attr == "found" and isinstance(node.value, ast.Name) \
            and node.value.id in rules:
        return node.value.id
    return None


def sites_in(tree: ast.Module, file: str, violations: set[str]) -> list[Site]:
    """Every raise site of a module."""
    rules = rule_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _found_of(node.func, rules)
        handed = [rule for rule in (_found_of(arg, rules) for arg in node.args) if rule]
        if called:
            found.append(Site(called, file, node.lineno, _case(node.keywords)))
        found += [Site(rule, file, node.lineno, _case(node.keywords)) for rule in handed]
        if isinstance(node.func, ast.Name) and node.func.id in violations and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in rules:
            case = node.args[1] if len(node.args) > 1 else None
            found.append(Site(node.args[0].id, file, node.lineno,
                              case.value if isinstance(case, ast.Constant) and isinstance(case.value, str) else None))
    return found


def raise_sites(sources: dict[Path, str]) -> dict[str, list[Site]]:
    """Every rule's raise sites in the given sources, by rule id. A source that names neither a rule nor a violation
    can raise none, and is not parsed."""
    trees = {path: ast.parse(text, filename=str(path)) for path, text in sources.items()
             if "ARENA" in text or VIOLATION in text}
    violations = violation_classes(trees.values())
    by_rule: dict[str, list[Site]] = {}
    for path, tree in trees.items():
        for site in sites_in(tree, str(path), violations):
            by_rule.setdefault(site.rule_id, []).append(site)
    return by_rule
