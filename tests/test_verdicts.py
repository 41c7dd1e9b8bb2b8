"""Verdicts as types: the bot's sticky verdict (its state line and the labels and status it implies), scoring's
interval verdict and a record's standing, and how a training run ended; every value the word files always held."""

from __future__ import annotations

import json

from bot.markers import MARKER
from bot.sticky import OUTCOMES, StickyState, Verdict, parse_state
from estimates.learnability import Decision
from scoring.ranking import Unranked
from scoring.statistics import Verdict as ScoreVerdict
from scoring.statistics import verdict as interval_verdict
from training.evidence import RunStatus, closing_block

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
    assert closing_block({"status": RunStatus.COMPLETED}).endswith("verdict: trained")
    assert closing_block({"status": "stopped", "reason": "guard"}).endswith("verdict: stopped: guard")
