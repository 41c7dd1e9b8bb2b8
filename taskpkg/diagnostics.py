"""Diagnostics: one finding about a package, with a stable check id, a place and a fix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How much a finding matters. Only errors fail a check."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `file` is relative to the package folder; `line` and `column` are 1-based when known."""

    check_id: str
    severity: Severity
    message: str
    fix: str
    file: str | None = None
    line: int | None = None
    column: int | None = None

    def location(self) -> str:
        """Return `file:line:column` with the parts that are known."""
        parts = [self.file or "."]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    @classmethod
    def from_dict(cls, data: dict) -> Diagnostic:
        """A diagnostic from its JSON form in a report (already validated against the report schema)."""
        return cls(data["check_id"], Severity(data["severity"]), data["message"], data["fix"], data["file"],
                   data["line"], data["column"])

    def to_dict(self) -> dict:
        """Return the JSON form used in reports."""
        return {
            "check_id": self.check_id,
            "severity": self.severity.value,
            "message": self.message,
            "fix": self.fix,
            "file": self.file,
            "line": self.line,
            "column": self.column,
        }
