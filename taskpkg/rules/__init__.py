"""The rule registry: every check the arena can report, each one unit (id, category, severity, title, doc, advice,
message and fix templates, a failing and a passing example).

Ids never change meaning once released. The hundreds digit is the family: ARENA0xx package files, ARENA1xx task.md and
its frontmatter, ARENA2xx the prompt, roles and scenes, ARENA3xx the instance generator (and the determinism the
verifier shares with it), ARENA4xx the Dockerfile, ARENA5xx verifier.py, ARENA6xx oracle/, ARENA7xx the dynamic
checks, ARENA9xx the arena's own faults. Category, never the id, decides when a rule
runs: static rules without an engine, dynamic rules in the sandbox; infrastructure findings are about a run, not the
package.

To add a rule: define it in its family's module (the constant's name is its id; it joins the registry by itself),
raise it with `ARENAnnn.found(file, line, case=..., **fields)` imported from that module, register the function that
raises it in validators (`@validators.registry.check(ARENAnnn, needs=...)`: this package imports nothing of
validators, so the check names its rules and `validators.registry` joins the two), and regenerate CONTRIBUTING.md's
table (`arena explain --markdown --write CONTRIBUTING.md`). The test suite then runs its examples.
"""

from __future__ import annotations

from types import ModuleType

from taskpkg.rules import dockerfile, dynamic, generator, infrastructure, package_files, prompt, sources, task_file
from taskpkg.rules.examples import Example
from taskpkg.rules.rule import Category, Message, Rule

FAMILIES: tuple[ModuleType, ...] = (package_files, task_file, prompt, generator, dockerfile, sources, dynamic,
                                   infrastructure)


def _collect() -> dict[str, Rule]:
    found: dict[str, Rule] = {}
    for family in FAMILIES:
        for name, value in vars(family).items():
            if not isinstance(value, Rule):
                continue
            if name != value.id:
                raise ValueError(f"{family.__name__}.{name} holds {value.id}: name each rule's constant by its id")
            if value.id in found:
                raise ValueError(f"{value.id} is defined twice")
            found[value.id] = value
    return dict(sorted(found.items()))


RULES: dict[str, Rule] = _collect()


def rule(rule_id: str) -> Rule:
    """The rule of an id (KeyError for an unknown id)."""
    return RULES[rule_id]


def ids(category: Category) -> tuple[str, ...]:
    """The ids of every rule of a category, in order."""
    return tuple(i for i, r in RULES.items() if r.category is category)


def category_of(rule_id: str) -> Category | None:
    """The category of an id, or None for an id this arena does not know (say, in an older cached result)."""
    found = RULES.get(rule_id)
    return found.category if found else None


__all__ = ["FAMILIES", "RULES", "Category", "Example", "Message", "Rule", "category_of", "ids", "rule"]
