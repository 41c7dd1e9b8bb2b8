"""Verdicts as types: the bot's sticky verdict (its state line and the labels and status it implies), scoring's
interval verdict and a record's standing, and how a training run ended; every value the word files always held."""

from __future__ import annotations

from bot.markers import MARKER
from bot.sticky import OUTCOMES, StickyState, Verdict, parse_state

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
