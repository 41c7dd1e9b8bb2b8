"""The check report (`arena check --format json`, report version 1): per package, every diagnostic and the outcome of
every check. One typed class owns its reading and writing; its JSON Schema is taskpkg/schema/report-v1.schema.json
(tests/test_formats.py holds the classes to it).

It lives at the bottom layer because three layers meet at this file: validators write it, the bot reads the artifact
of a pull request's run, and the leaderboard reads the reports it is given (neither may import validators).
`read_check_report` is the trust boundary: parsed JSON in, a typed Report out, or a ReportFormatError naming the
field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

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


@dataclass(frozen=True)
class CheckOutcome:
    """One check's outcome for a package (an entry of a package's `checks`)."""

    check_id: str
    title: str
    status: CheckStatus

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckOutcome:
        """One schema-valid `checks` entry."""
        return cls(data["check_id"], data["title"], CheckStatus(data["status"]))


@dataclass(frozen=True)
class Trial:
    """One sandbox trial of the dynamic checks (an entry of a package's `trials`): an episode or a probe."""

    check_id: str
    agent: str
    instance: int | None
    outcome: TrialOutcome
    duration_s: float
    reward: float | None = None
    details: dict[str, Any] | None = None
    peak_memory_mb: float | None = None
    log: str | None = None
    donor: int | None = None  # an answer probe's: the instance whose answer it submitted
    note: str | None = None  # an answer probe's: what it submitted, or why it was skipped
    summary: str | None = None  # the constant-answer probe's mean and best instance

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Trial:
        """One schema-valid `trials` entry."""
        return cls(data["check_id"], data["agent"], data["instance"], TrialOutcome(data["outcome"]),
                   float(data["duration_s"]), data.get("reward"), data.get("details"), data.get("peak_memory_mb"),
                   data.get("log"), data.get("donor"), data.get("note"), data.get("summary"))


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
    trials: list[dict[str, Any]] = field(default_factory=list)  # as the dynamic checks write them: trial_records()
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

    @property
    def verdict(self) -> Verdict:
        """PASS when the package has no error."""
        return Verdict.of(self.passed)

    def check_records(self) -> list[CheckOutcome]:
        """check_outcomes() as typed records."""
        return [CheckOutcome.from_json(c) for c in self.check_outcomes()]

    def trial_records(self) -> list[Trial]:
        """The trials as typed records."""
        return [Trial.from_json(t) for t in self.trials]

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
            "verdict": self.verdict,
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
        """A report file's JSON, already validated against the report schema (read_check_report validates first),
        as a typed Report; a time without a zone is UTC. ValueError when started_at is not an ISO 8601 time."""
        started = datetime.fromisoformat(str(data["started_at"]).replace("Z", "+00:00"))
        if started.tzinfo is None:
            started = started.replace(tzinfo=UTC)
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
        """The versioned JSON form, described by taskpkg/schema/report-v1.schema.json."""
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
        resources.files("taskpkg").joinpath(REPORT_SCHEMA_RESOURCE).read_text(encoding="utf-8"))
    return schema


class ReportFormatError(ValueError):
    """Data that is not a usable report: `where` is the JSON path of the problem (`packages/0/checks/2/status`),
    `problem` what is wrong there."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(report_schema())


def read_check_report(data: object, skipped: list[str] | None = None) -> Report:
    """The trust boundary for a check report: parsed JSON (untrusted) in, a typed Report out. The data must be report
    version 1, match the report schema and agree with itself (each package's verdict and error count with its
    diagnostics, the run's verdict with its packages), else ReportFormatError names the place and the problem.
    Given a `skipped` list, a package entry that fails is left out instead, with a line naming it appended."""
    if not isinstance(data, dict):
        raise ReportFormatError("the top level", "expected a JSON object")
    if data.get("report_version") != REPORT_VERSION:
        found = json.dumps(data.get("report_version"))[:40]
        raise ReportFormatError("report_version", f"expected {REPORT_VERSION}, found {found} (report version "
                                f"{REPORT_VERSION} is the one this arena reads)")
    bad: dict[int, list[ValidationError]] = {}
    whole: list[ValidationError] = []
    for error in _validator().iter_errors(data):
        path = list(error.absolute_path)
        if skipped is not None and len(path) >= 2 and path[0] == "packages" and isinstance(path[1], int):
            bad.setdefault(path[1], []).append(error)
        else:
            whole.append(error)
    if whole:
        raise _format_error(best_match(whole))
    kept = []
    for index, package in enumerate(data["packages"]):
        try:
            if index in bad:
                raise _format_error(best_match(bad[index]))
            _check_package_consistent(index, package)
        except ReportFormatError as exc:
            if skipped is None:
                raise
            skipped.append(f"package entry {index} ({_name_of(package)}) left out: {exc}")
            continue
        kept.append(package)
    if len(kept) == len(data["packages"]) and data["verdict"] != Verdict.of(
            all(p["verdict"] == Verdict.PASS for p in kept)):
        raise ReportFormatError("verdict", "contradicts its packages' verdicts")
    try:
        return Report.from_dict({**data, "packages": kept})
    except ValueError:
        raise ReportFormatError("started_at", f"{str(data['started_at'])[:40]!r} is not an ISO 8601 time") from None


def _format_error(error: ValidationError | None) -> ReportFormatError:
    assert error is not None  # called with at least one error
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return ReportFormatError(where, error.message[:200])


def _check_package_consistent(index: int, package: dict[str, Any]) -> None:
    errors = sum(d["severity"] == Severity.ERROR for d in package["diagnostics"])
    if package["counts"]["error"] != errors or package["verdict"] != Verdict.of(not errors):
        raise ReportFormatError(f"packages/{index}", "its verdict or error count contradicts its diagnostics")


def _name_of(package: object) -> str:
    name = package.get("name") if isinstance(package, dict) else None
    return json.dumps(name[:100]) if isinstance(name, str) else "no name"

