"""Validation summaries from `arena check --format json` reports (report version 1), read as untrusted data.

Each file goes through the report's trust boundary (taskpkg.check_report.read_check_report) into typed objects; only
what an environment page shows is kept: the verdict, each check's outcome and each trial's timing. A report that
breaks the schema is skipped with a warning naming the file; a package entry that does is left out with a warning
naming the file and the entry, and the file's other entries are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from leaderboard.untrusted import parsed_files
from taskpkg.check_report import CheckOutcome, CheckStatus, ReportFormatError, Trial, Verdict, read_check_report


@dataclass(frozen=True)
class ValidationSummary:
    """One package's validation, as the latest report saw it."""

    verdict: Verdict
    mode: str
    started_at: datetime
    checks: tuple[CheckOutcome, ...]
    trials: tuple[Trial, ...]

    @property
    def passed(self) -> int:
        """Checks that passed."""
        return sum(1 for check in self.checks if check.status is CheckStatus.PASSED)

    @property
    def when(self) -> str:
        """When the run started, as `arena check` writes it."""
        return self.started_at.isoformat(timespec="seconds")


@dataclass(frozen=True)
class _Read:
    """One report file's summaries by package name, and a line for each package entry left out."""

    summaries: dict[str, ValidationSummary]
    skipped: list[str]


def _summaries(data: dict) -> _Read | str:
    skipped: list[str] = []
    try:
        report = read_check_report(data, skipped)
    except ReportFormatError as exc:
        return str(exc)
    found = {package.name: ValidationSummary(package.verdict, report.mode, report.started_at,
                                             tuple(package.check_records()), tuple(package.trial_records()))
             for package in report.packages
             if package.name is not None}  # a package that did not load has no page of its own
    return _Read(found, skipped)


def load_summaries(reports_dir: Path | None, warnings: list[str]) -> dict[str, ValidationSummary]:
    """Each package's newest validation summary across the reports in reports_dir (*.json)."""
    newest: dict[str, ValidationSummary] = {}
    for path, read in parsed_files(reports_dir, "*.json", _summaries, warnings):
        assert isinstance(read, _Read)
        warnings.extend(f"{path}: {line}" for line in read.skipped)
        for name, summary in read.summaries.items():
            if name not in newest or summary.started_at >= newest[name].started_at:
                newest[name] = summary
    return newest
