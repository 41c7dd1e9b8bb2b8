"""The leaderboard reads `arena check --format json` reports through the report's one validating call into the same
typed objects validators wrote; a package entry that breaks the schema is left out with a warning naming the file and
the entry, and the file's other entries are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.reports import load_summaries
from taskpkg.check_report import CheckStatus, Report, TrialOutcome, Verdict
from taskpkg.rules import RULES
from tests.support.packages import make_valid_package
from validators.checking import check_packages

TRIAL = {"check_id": "ARENA702", "agent": "oracle", "instance": 3, "outcome": "ok", "reward": 1.0, "details": None,
         "duration_s": 2.345, "peak_memory_mb": 12.5, "log": "$ solve.sh\nexit 0; "}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """A real static check of two packages, one clean and one with an error, the clean one given a trial record."""
    root = tmp_path_factory.mktemp("environments")
    clean, broken = make_valid_package(root, "clean-task"), make_valid_package(root / "other")  # sample-task
    RULES["ARENA002"].failing.apply(broken)
    report = check_packages([clean, broken], "static", show_progress=False, use_cache=False)
    report.packages[0].trials = [TRIAL, {**TRIAL, "agent": "nop", "outcome": "skipped", "note": "nothing to submit"}]
    return report


def _write(folder: Path, name: str, data: dict) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_report_validators_wrote_reads_into_the_same_values(checked: Report, tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "check.json").write_text(checked.to_json(), encoding="utf-8")
    warnings: list[str] = []
    summaries = load_summaries(tmp_path / "reports", warnings)
    assert warnings == [] and set(summaries) == {"clean-task", "sample-task"}
    for package in checked.packages:
        assert package.name is not None
        summary = summaries[package.name]
        assert summary.verdict is Verdict.of(package.passed)
        assert summary.mode == "static" and summary.started_at == checked.started_at.replace(microsecond=0)
        assert [(c.check_id, c.title, c.status) for c in summary.checks] == [
            (c["check_id"], c["title"], c["status"]) for c in package.check_outcomes()]
        assert [(t.check_id, t.agent, t.instance, t.outcome, t.duration_s, t.note) for t in summary.trials] == [
            (t["check_id"], t["agent"], t["instance"], t["outcome"], t["duration_s"], t.get("note"))
            for t in package.trials]
    clean, broken = summaries["clean-task"], summaries["sample-task"]
    assert clean.verdict is Verdict.PASS and broken.verdict is Verdict.FAIL
    assert CheckStatus.FAILED in {c.status for c in broken.checks} and 0 < broken.passed < len(broken.checks)
    assert [t.outcome for t in clean.trials] == [TrialOutcome.OK, TrialOutcome.SKIPPED] and broken.trials == ()


def test_a_malformed_package_entry_is_left_out_with_a_warning_naming_the_file(checked: Report,
                                                                                tmp_path: Path) -> None:
    data = json.loads(checked.to_json())
    data["packages"][0]["trials"][0]["outcome"] = "exploded"
    data["packages"].append("not an entry")
    path = _write(tmp_path / "reports", "mixed.json", data)
    warnings: list[str] = []
    summaries = load_summaries(tmp_path / "reports", warnings)
    assert set(summaries) == {"sample-task"}, "the entry that keeps to the schema is kept"
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(f"{path}: package entry 0 (\"clean-task\") left out: packages/0/trials/0/outcome:")
    assert warnings[1].startswith(f"{path}: package entry 2 (no name) left out: packages/2:")


def test_an_entry_that_contradicts_itself_is_left_out_and_a_broken_report_skipped(checked: Report,
                                                                                   tmp_path: Path) -> None:
    data = json.loads(checked.to_json())
    data["packages"][1]["verdict"] = "pass"  # an error among its diagnostics
    path = _write(tmp_path / "reports", "lying.json", data)
    other = _write(tmp_path / "reports", "no-mode.json", {**json.loads(checked.to_json()), "mode": "quick"})
    warnings: list[str] = []
    assert set(load_summaries(tmp_path / "reports", warnings)) == {"clean-task"}, warnings
    assert warnings == [f"{path}: package entry 1 (\"sample-task\") left out: packages/1: its verdict or error count "
                        "contradicts its diagnostics",
                        f"{other}: skipped: mode: 'quick' is not one of ['static', 'full']"]
