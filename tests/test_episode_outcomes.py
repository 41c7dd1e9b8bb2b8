"""How an episode ended, as a type: one rule for what each outcome is worth (training, scoring and the pre-flight
read it alike), values that stay the strings the files have always held."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from sandbox.outcomes import EpisodeOutcome, EpisodeResult
from training.environment import reward_of
from training.metrics import EpisodeRecord, summarize


def test_what_each_outcome_is_worth() -> None:
    assert EpisodeOutcome.SCORED.worth(0.25) == 0.25 and EpisodeOutcome.SCORED.worth(1.0) == 1.0
    assert EpisodeOutcome.LIMIT_EXCEEDED.worth(None) == 0.0  # stopped at the storage limit: a failure, not a pass
    assert EpisodeOutcome.LIMIT_EXCEEDED.worth(0.9) == 0.0
    for unjudged in (EpisodeOutcome.VERIFIER_ERROR, EpisodeOutcome.SETUP_ERROR, EpisodeOutcome.AGENT_ERROR,
                     EpisodeOutcome.SKIPPED):
        assert unjudged.worth(None) is None and unjudged.worth(1.0) is None and not unjudged.judged
    assert {o for o in EpisodeOutcome if o.judged} == {EpisodeOutcome.SCORED, EpisodeOutcome.LIMIT_EXCEEDED}


@pytest.mark.parametrize("outcome", list(EpisodeOutcome))
def test_training_rewards_each_outcome_by_the_same_rule(outcome: EpisodeOutcome) -> None:
    record = EpisodeRecord(0, outcome.value, 0.5, 1, 0, 0.0, 0.0, 0.0, None)
    assert record.outcome is outcome and reward_of(record) == outcome.worth(0.5)


def test_outcomes_are_written_as_the_same_strings() -> None:
    result = EpisodeResult("pkg", 3, "oracle", "limit_exceeded")  # given by value, as a reader of old files would
    assert result.outcome is EpisodeOutcome.LIMIT_EXCEEDED and result.outcome == "limit_exceeded"
    assert json.dumps({"outcome": result.outcome}) == '{"outcome": "limit_exceeded"}'
    assert f"{result.outcome}: {result.error}" == "limit_exceeded: None"
    record = EpisodeRecord(0, EpisodeOutcome.SETUP_ERROR, None, 0, 0, 0.0, 0.0, 0.0, "no instance")
    assert json.dumps(asdict(record)) == json.dumps({**asdict(record), "outcome": "setup_error"})
    assert summarize([record])["setup_errors"] == 1


def test_an_unknown_outcome_is_refused() -> None:
    with pytest.raises(ValueError, match="'won'"):
        EpisodeResult("pkg", 0, "oracle", "won")
