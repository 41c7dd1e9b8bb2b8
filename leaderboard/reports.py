"""Validation summaries from `arena check --format json` reports (report version 1), read as untrusted data.

Only what an environment page shows is taken: the verdict, each check's status and each trial's timing. A report or
package entry that breaks that shape is skipped with a warning naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from leaderboard.untrusted import parsed_files, text_field

CHECK_ID = re.compile(r"^ARENA[0-9]{3}$")
CHECK_STATUSES = frozenset({"passed", "failed", "warned", "noted", "skipped"})
OUTCOMES = frozenset({"ok", "failed", "error", "timeout"})


@dataclass(frozen=True)
class Trial:
    """One dynamic trial's timing."""

    check_id: str
    agent: str
    outcome: str
    duration_s: float


@dataclass(frozen=True)
class ValidationSummary:
    """One package's validation, as the latest report saw it."""

    verdict: str
    mode: str
    started_at: str
    checks: tuple[tuple[str, str, str], ...]  # (check id, title, status)
    trials: tuple[Trial, ...]

    @property
    def passed(self) -> int:
        """Checks that passed."""
        return sum(1 for _, _, status in self.checks if status == "passed")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _checks(entry: dict) -> tuple[tuple[str, str, str], ...] | None:
    checks = entry.get("checks")
    if not isinstance(checks, list):
        return None
    out = []
    for check in checks:
        if not isinstance(check, dict) or not CHECK_ID.match(text_field(check, "check_id", 8) or ""):
            return None
        title = text_field(check, "title")
        if title is None or check.get("status") not in CHECK_STATUSES:
            return None
        out.append((check["check_id"], title, check["status"]))
    return tuple(out)


def _trials(entry: dict) -> tuple[Trial, ...] | None:
    trials = entry.get("trials")
    if not isinstance(trials, list):
        return None
    out = []
    for trial in trials:
        if not isinstance(trial, dict) or not CHECK_ID.match(text_field(trial, "check_id", 8) or ""):
            return None
        agent = text_field(trial, "agent", 100)
        if agent is None or trial.get("outcome") not in OUTCOMES or not _number(trial.get("duration_s")):
            return None
        out.append(Trial(trial["check_id"], agent, trial["outcome"], float(trial["duration_s"])))
    return tuple(out)


def _summaries(data: dict) -> dict[str, ValidationSummary] | str:
    if data.get("report_version") != 1:
        return "report_version: expected 1"
    mode, started = data.get("mode"), text_field(data, "started_at", 40)
    packages = data.get("packages")
    if mode not in ("static", "full") or started is None or not isinstance(packages, list):
        return "mode, started_at or packages: missing or not valid (see validators/schema/report-v1.schema.json)"
    found = {}
    for index, entry in enumerate(packages):
        if not isinstance(entry, dict):
            return f"packages/{index}: expected an object"
        name = entry.get("name")
        if name is None:
            continue  # a package that did not load has no page of its own
        checks, trials = _checks(entry), _trials(entry)
        if not isinstance(name, str) or entry.get("verdict") not in ("pass", "fail") or checks is None or (
                trials is None):
            return f"packages/{index}: name, verdict, checks or trials missing or not valid"
        found[name] = ValidationSummary(entry["verdict"], mode, started, checks, trials)
    return found


def load_summaries(reports_dir: Path | None, warnings: list[str]) -> dict[str, ValidationSummary]:
    """Each package's newest validation summary across the reports in reports_dir (*.json)."""
    newest: dict[str, ValidationSummary] = {}
    for _, found in parsed_files(reports_dir, "*.json", _summaries, warnings):
        assert isinstance(found, dict)
        for name, summary in found.items():
            if name not in newest or summary.started_at >= newest[name].started_at:
                newest[name] = summary
    return newest
