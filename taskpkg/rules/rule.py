"""What a rule is: one check the arena can report, with everything about it in one place.

A rule has a stable id, a category (static, dynamic or infrastructure), a severity, a title, a short doc, general
advice, the message and fix templates its findings are built from, and a failing and a passing example that the test
suite runs for real. Raise sites never write text of their own: they name the case and fill in the template's fields.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.rules.examples import Example

RESERVED_FIELDS = frozenset({"file", "line", "column", "case"})


class Category(StrEnum):
    """What a rule judges, which decides when it runs and whose fault a finding is."""

    STATIC = "static"  # the package's files, without a Docker engine, in milliseconds
    DYNAMIC = "dynamic"  # the package run in the sandbox on a Docker engine
    INFRASTRUCTURE = "infrastructure"  # the arena or the engine, not the package: never the contributor's failing


@dataclass(frozen=True)
class Message:
    """A finding's text: `text` and `fix` are str.format templates with named fields, such as `{path}`."""

    text: str
    fix: str

    def fields(self) -> frozenset[str]:
        """The named fields both templates use."""
        return frozenset(name for template in (self.text, self.fix)
                         for _, name, _, _ in string.Formatter().parse(template) if name)


@dataclass(frozen=True)
class Rule:
    """One check. `messages` holds its cases by name; a rule with one way to fail has the single case ""."""

    id: str
    category: Category
    severity: Severity
    title: str
    doc: str
    advice: str
    messages: Mapping[str, Message]
    failing: Example
    passing: Example
    cases: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not (len(self.id) == 8 and self.id.startswith("ARENA") and self.id[5:].isdigit()):
            raise ValueError(f"rule id {self.id!r} is not of the form ARENAnnn")
        if not self.messages:
            raise ValueError(f"{self.id} has no message")
        for case, message in self.messages.items():
            if message.fields() & RESERVED_FIELDS:
                raise ValueError(f"{self.id} case {case!r} uses a reserved field: {message.fields() & RESERVED_FIELDS}")
        object.__setattr__(self, "cases", tuple(self.messages))

    def found(self, file: str | None = None, line: int | None = None, column: int | None = None, *, case: str = "",
              **fields: object) -> Diagnostic:
        """This rule's finding at a place, its case's templates filled in with exactly the fields they name."""
        try:
            message = self.messages[case]
        except KeyError:
            raise KeyError(f"{self.id} has no case {case!r}; its cases: {list(self.messages)}") from None
        if set(fields) != message.fields():
            raise TypeError(f"{self.id} case {case!r} takes the fields {sorted(message.fields())}, "
                            f"got {sorted(fields)}")
        return Diagnostic(self.id, self.severity, message.text.format(**fields), message.fix.format(**fields), file,
                          line, column)


class RuleViolation(Exception):
    """A finding raised by a parser: one case of a rule with the fields of its message, at a 1-based line and column
    of the text parsed (None where unknown). `finding(file)` places it in a file."""

    def __init__(self, rule: Rule, case: str, line: int | None, column: int | None, **fields: object) -> None:
        self.rule, self.case, self.fields = rule, case, fields
        self.line = line
        self.column = column
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """What is wrong, in words."""
        return self.finding(None).message

    @property
    def fix(self) -> str:
        """How to fix it."""
        return self.finding(None).fix

    def finding(self, file: str | None, line: int | None = None) -> Diagnostic:
        """The diagnostic in a file, at `line` when given (the parsed text may be offset in the file), else at the
        violation's own line."""
        return self.rule.found(file, self.line if line is None else line, self.column, case=self.case, **self.fields)


def one(text: str, fix: str) -> dict[str, Message]:
    """The messages of a rule with a single case."""
    return {"": Message(text, fix)}
