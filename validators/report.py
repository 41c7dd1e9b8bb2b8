"""The check report: per package, every diagnostic and the outcome of every check; versioned JSON for machines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.rules import RULES, Category, category_of

REPORT_VERSION = 1
REPORT_SCHEMA_RESOURCE = "schema/report-v1.schema.json"


class Verdict(StrEnum):
    """A package's verdict, or a whole run's: no error, or at least one."""

    PASS = "pass"
    FAIL = "fail"

    @classmethod
    def of(cls, passed: bool) -> Verdict:
        """PASS when passed, else FAIL."""
        return cls.PASS if passed else cls.FAIL


class CheckStatus(StrEnum):
    """How one check came out for a package: its worst finding's severity, or none."""

    PASSED = "passed"
    FAILED = "failed"  # an error
    WARNED = "warned"
    NOTED = "noted"  # an info note
    SKIPPED = "skipped"


class TrialOutcome(StrEnum):
    """How one sandbox trial of the dynamic checks came out (a trial record's `outcome`)."""

    OK = "ok"  # as expected
    FAILED = "failed"  # it raised an error finding
    ERROR = "error"  # the episode did not end judged (a setup, verifier or agent error)
    TIMEOUT = "timeout"  # the oracle ran out of time
    SKIPPED = "skipped"  # an answer probe with nothing to submit


_STATUS_BY_SEVERITY = {Severity.ERROR: CheckStatus.FAILED, Severity.WARNING: CheckStatus.WARNED,
                       Severity.INFO: CheckStatus.NOTED}


@dataclass
class PackageReport:
    """Everything found about one package."""

    path: str
    name: str | None
    title: str | None
    domain: str | None
    instances: int | None
    diagnostics: list[Diagnostic]
    checks_run: list[str]
    duration_ms: float
    trials: list[dict[str, Any]] = field(default_factory=list)
    dynamic_cached_at: str | None = None
    digest: str | None = None  # "sha256:<tree digest>" of the files checked: training refuses any other
    checks: list[dict[str, str]] | None = None  # as read from a report file (from_dict); None: from the registry

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PackageReport:
        """One package of a report file's JSON (validated against the report schema: bot.report_input)."""
        return cls(path=data["path"], name=data["name"], title=data["title"], domain=data["domain"],
                   instances=data["instances"], diagnostics=[Diagnostic.from_dict(d) for d in data["diagnostics"]],
                   checks_run=[c["check_id"] for c in data["checks"] if c["status"] != "skipped"],
                   duration_ms=float(data["duration_ms"]), trials=list(data["trials"]),
                   dynamic_cached_at=data.get("dynamic_cached_at"), digest=data.get("digest"),
                   checks=[dict(c) for c in data["checks"]])

    @property
    def passed(self) -> bool:
        """Whether the package has no error."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def count(self, severity: Severity) -> int:
        """How many diagnostics of a severity."""
        return sum(d.severity is severity for d in self.diagnostics)

    def check_outcomes(self) -> list[dict[str, Any]]:
        """Every catalogue check the run reached, with its outcome; the rest as skipped."""
        if self.checks is not None:
            return list(self.checks)
        worst: dict[str, Severity] = {}
        order = list(Severity)
        for d in self.diagnostics:
            if d.check_id not in worst or order.index(d.severity) < order.index(worst[d.check_id]):
                worst[d.check_id] = d.severity
        outcomes = []
        for check_id in sorted(set(self.checks_run) | set(worst)):
            status = _STATUS_BY_SEVERITY[worst[check_id]] if check_id in worst else CheckStatus.PASSED
            outcomes.append({"check_id": check_id, "title": RULES[check_id].title, "status": status})
        return outcomes

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "name": self.name,
            "title": self.title,
            "domain": self.domain,
            "instances": self.instances,
            "verdict": Verdict.of(self.passed),
            "counts": {s.value: self.count(s) for s in Severity},
            "duration_ms": round(self.duration_ms, 3),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "checks": self.check_outcomes(),
            "trials": self.trials,
            "dynamic_cached_at": self.dynamic_cached_at,
            **({"digest": self.digest} if self.digest else {}),
        }


@dataclass
class Report:
    """A whole `arena check` run."""

    mode: Literal["static", "full"]
    packages: list[PackageReport]
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    duration_s: float = 0.0
    arena_version: str | None = None  # the version that wrote a report read from a file; None: this installation

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """A report file's JSON (validated against the report schema: bot.report_input) as a typed Report.
        ValueError when started_at is not an ISO 8601 time."""
        started = datetime.fromisoformat(str(data["started_at"]).replace("Z", "+00:00"))
        return cls(mode=data["mode"], packages=[PackageReport.from_dict(p) for p in data["packages"]],
                   started_at=started, duration_s=float(data["duration_s"]), arena_version=data["arena_version"])

    @property
    def passed(self) -> bool:
        """Whether every package passed."""
        return all(p.passed for p in self.packages)

    @property
    def arena_fault(self) -> bool:
        """Whether the run failed only through the arena's or the engine's fault: it has errors, and every one of them
        is of an infrastructure rule, none a package's failing check."""
        errors = [d for p in self.packages for d in p.diagnostics if d.severity is Severity.ERROR]
        return bool(errors) and all(category_of(d.check_id) is Category.INFRASTRUCTURE for d in errors)

    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON form, described by validators/schema/report-v1.schema.json."""
        return {
            "report_version": REPORT_VERSION,
            "arena_version": self.arena_version or arena_version(),
            "mode": self.mode,
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "duration_s": round(self.duration_s, 3),
            "verdict": Verdict.of(self.passed),
            "summary": {
                "packages": len(self.packages),
                "passed": sum(p.passed for p in self.packages),
                "failed": sum(not p.passed for p in self.packages),
                **{f"{s.value}s": sum(p.count(s) for p in self.packages) for s in Severity},
            },
            "packages": [p.to_dict() for p in self.packages],
        }

    def to_json(self) -> str:
        """Pretty JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)


def arena_version() -> str:
    """The installed distribution's version."""
    try:
        return version("posttrain-arena")
    except PackageNotFoundError:
        return "0+unknown"


@cache
def report_schema() -> dict[str, Any]:
    """The JSON Schema of the report."""
    schema: dict[str, Any] = json.loads(
        resources.files("validators").joinpath(REPORT_SCHEMA_RESOURCE).read_text(encoding="utf-8"))
    return schema
