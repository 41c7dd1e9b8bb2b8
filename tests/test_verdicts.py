"""Verdicts as types: the bot's sticky verdict (its state line and the labels and status it implies), scoring's
interval verdict and a record's standing, how a training run ended, and the check report's verdicts, statuses and trial
outcomes (the report schema's enums); every value is the word the files always held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args, get_type_hints

from bot.markers import MARKER
from bot.sticky import OUTCOMES, StickyState, Verdict, parse_state
from estimates.learnability import Decision
from scoring.ranking import Unranked
from scoring.statistics import Verdict as ScoreVerdict
from scoring.statistics import verdict as interval_verdict
from taskpkg.check_report import CheckStatus, PackageReport, Report, TrialOutcome
from taskpkg.check_report import Verdict as CheckVerdict
from taskpkg.run_manifest import TrainingManifest
from training.evidence import RunStatus, closing_block
from validators.dynamic import Role

ROOT = Path(__file__).resolve().parent.parent

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_every_sticky_verdict_survives_its_state_line_and_implies_labels_and_a_status() -> None:
    assert set(OUTCOMES) == set(Verdict)
    for verdict in Verdict:
        state = StickyState(SHA, "main", verdict, "echo-word", 12, 1)
        assert f"outcome={verdict.value} " in state.line()
        read = parse_state(f"{MARKER}\n{state.line()}\nbody")
        assert read == state and read is not None and read.outcome is verdict
        assert state.status in ("pending", "success", "failure", "error")
    assert StickyState(SHA, "main", Verdict.PASS).labels == ("arena: checks passed",)
    assert StickyState(SHA, "main", Verdict.ERROR).status == "error"
    assert parse_state(f"{MARKER}\n{StickyState(SHA, 'main', Verdict.PASS).line().replace('pass', 'won')}") is None


def test_scoring_verdicts_keep_their_words() -> None:
    assert [interval_verdict(i) for i in ((0.01, 0.2), (-0.1, 0.1), (-0.3, -0.02))] == \
        [ScoreVerdict.IMPROVES, ScoreVerdict.NO_DETECTABLE_CHANGE, ScoreVerdict.HURTS]
    assert json.dumps([interval_verdict((0.01, 0.2)), Unranked.INCOMPLETE]) == '["improves", "incomplete"]'
    assert {u.value for u in Unranked} == {"incomplete", "untested", "flagged", "superseded", "unpinned",
                                           "incomparable"}


def test_how_a_training_run_ended_and_what_the_pre_flight_decided_keep_their_words() -> None:
    assert [s.value for s in RunStatus] == ["completed", "stopped", "no_effective_update"]
    assert [d.value for d in Decision] == ["refuse", "go", "inconclusive", "continue"]
    assert closing_block(TrainingManifest(status=RunStatus.COMPLETED)).endswith("verdict: trained")
    assert closing_block(TrainingManifest(status=RunStatus.STOPPED, reason="guard")).endswith("verdict: stopped: guard")


def test_check_reports_keep_their_words() -> None:
    clean = PackageReport("environments/x", "x", "X", "coding", 4, [], ["ARENA101"], 1.0)
    data = json.loads(json.dumps(Report("static", [clean]).to_dict()))
    assert data["verdict"] == "pass" and data["packages"][0]["verdict"] == "pass"
    assert data["packages"][0]["checks"][0]["status"] == "passed"
    assert CheckVerdict.of(False) is CheckVerdict.FAIL and f"{CheckVerdict.FAIL}" == "fail"
    assert {r.value for r in Role} == {"oracle", "nop", "repeat", "probe", "read", "steer", "answer", "instance"}


def test_the_report_enums_are_the_schemas_enums() -> None:
    schema = json.loads((ROOT / "taskpkg" / "schema" / "report-v1.schema.json").read_text())
    package = schema["$defs"]["package"]["properties"]
    assert schema["properties"]["verdict"]["enum"] == package["verdict"]["enum"] == [v.value for v in CheckVerdict]
    assert package["checks"]["items"]["properties"]["status"]["enum"] == [s.value for s in CheckStatus]
    assert schema["$defs"]["trial"]["properties"]["outcome"]["enum"] == [o.value for o in TrialOutcome]
    assert schema["properties"]["mode"]["enum"] == list(get_args(get_type_hints(Report)["mode"]))
