"""The check registry: each rule of taskpkg.rules joined to the functions that check it, as ruff's rules own theirs.

A rule (id, category, doc, message templates, examples) is defined in `taskpkg.rules`, which imports nothing of
validators; the function that raises it registers here, in validators, with `@check(ARENA..., needs=...)` naming every
rule it raises and what it needs to run to the end (a function of a lower layer, such as `taskpkg.loader.load_package`,
is registered by a call to `register`). `registry()` joins the two into one entry per rule (the rule and its checks)
and refuses a rule that no check raises; a check of no rule is refused when it registers.

What a package's report lists as run is read from here: `judged(needs met)` is every rule of every check whose needs
the package met (the report adds any rule that found something). Infrastructure rules (ARENA700, ARENA901) are
registered like the others but are about a run, never the package: they are never listed as run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from taskpkg.rules import RULES, Category, Rule

# The modules that, imported, have registered every check: the whole `arena check` imports the static and dynamic
# checks and with them every module that registers one.
CHECK_MODULES = ("validators.checking",)


class Needs(StrEnum):
    """What a check needs to run to the end, and so when its rules count as run for a package."""

    FOLDER = "folder"  # the package's folder, walked: every package folder has it
    PACKAGE = "package"  # task.md read into a package too (the loader's own rules: it stops at its first failure)
    ENGINE = "engine"  # the package built and run in the sandbox on a Docker engine (the dynamic checks)


@dataclass(frozen=True)
class Check:
    """A function that raises findings of `rules` when it has what it `needs`."""

    function: Callable[..., object]
    rules: tuple[Rule, ...]
    needs: Needs

    @property
    def name(self) -> str:
        """The function's dotted name, as a reader finds it."""
        return f"{self.function.__module__}.{self.function.__qualname__}"


@dataclass(frozen=True)
class RegisteredRule:
    """A rule and every check that raises it."""

    rule: Rule
    checks: tuple[Check, ...]


CHECKS: list[Check] = []  # every check registered so far, in the order their modules were imported

F = TypeVar("F", bound=Callable[..., object])


def register(function: Callable[..., object], *rules: Rule, needs: Needs) -> Check:
    """Register `function` as the check of `rules` (every rule it raises); ValueError when it names none."""
    made = Check(function, rules, needs)
    if not rules:
        raise ValueError(f"{made.name} is registered for no rule: name every rule it raises")
    CHECKS.append(made)
    return made


def check(*rules: Rule, needs: Needs) -> Callable[[F], F]:
    """Decorate a check function with the rules it raises (see `register`)."""

    def decorate(function: F) -> F:
        register(function, *rules, needs=needs)
        return function

    return decorate


def join(rules: Mapping[str, Rule], checks: Iterable[Check]) -> dict[str, RegisteredRule]:
    """Every rule beside its checks, in the rules' order. ValueError for a rule no check raises, a check of no rule,
    and a check naming a rule the registry does not hold (a copy, or an id defined twice)."""
    checks = list(checks)
    for made in checks:
        if not made.rules:
            raise ValueError(f"{made.name} is registered for no rule: name every rule it raises")
        for rule in made.rules:
            if rules.get(rule.id) is not rule:
                raise ValueError(f"{made.name} is registered for {rule.id}, which is not the rule taskpkg.rules holds")
    joined = {rule_id: RegisteredRule(rule, tuple(c for c in checks if rule in c.rules))
              for rule_id, rule in rules.items()}
    unchecked = [rule_id for rule_id, entry in joined.items() if not entry.checks]
    if unchecked:
        raise ValueError(f"no check is registered for {', '.join(unchecked)}: decorate the function that raises "
                         "each with @validators.registry.check")
    return joined


def registry() -> dict[str, RegisteredRule]:
    """Every rule of taskpkg.rules with the checks that raise it (ValueError where one has none)."""
    for module in CHECK_MODULES:
        importlib.import_module(module)
    return join(RULES, CHECKS)


def judged(met: Iterable[Needs]) -> frozenset[str]:
    """The ids of the package's rules (static and dynamic) judged by every registered check whose needs were met."""
    have = frozenset(met)
    return frozenset(rule.id for made in CHECKS if made.needs in have for rule in made.rules
                     if rule.category is not Category.INFRASTRUCTURE)
