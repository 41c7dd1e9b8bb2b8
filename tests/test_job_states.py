"""Job states and request outcomes as types: the same words in the records' JSON as before, one set for the
record, the backends and the bot."""

from __future__ import annotations

import json

import pytest

from launch.backends import RECOVERING, BackendJob
from launch.backends.skypilot import STATES as SKYPILOT_STATES
from launch.lifecycle import Asked
from launch.spec import JobSpec
from launch.state import ACTIVE_STATES, STATES, JobRecord, JobState, RecordError, parse_record

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_a_record_moved_to_each_state_is_written_and_read_back_with_the_same_word() -> None:
    queued = JobRecord.new(JobSpec("echo-word", SHA, "cpu-small"), "local")
    assert queued.state is JobState.QUEUED and json.loads(queued.to_text())["state"] == "queued"
    for state in JobState:
        moved = queued.moved_to(state, reason="why")
        text = moved.to_text()
        assert f'"state": "{state.value}"' in text
        again = parse_record(json.loads(text))
        assert again == moved and again.to_text() == text and again.active == (state in ACTIVE_STATES)
    assert [s.value for s in STATES] == ["queued", "running", "succeeded", "failed", "cancelled", "stale"]


def test_a_word_that_is_no_state_is_refused() -> None:
    record = JobRecord.new(JobSpec("echo-word", SHA, "cpu-small"), "local")
    with pytest.raises(RecordError, match="'paused' is not one of queued, running, succeeded"):
        record.moved_to("paused")
    with pytest.raises(RecordError, match="state"):
        parse_record({**record.to_dict(), "state": "paused"})


def test_backends_speak_the_record_states_or_recovering() -> None:
    assert set(SKYPILOT_STATES.values()) <= {*JobState, RECOVERING}
    finished = {s for s in (*JobState, RECOVERING) if BackendJob("id", "name", s).finished}
    assert finished == {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED}


def test_request_outcomes_keep_their_words() -> None:
    assert [a.value for a in Asked] == ["started", "running", "done", "refused"] and f"{Asked.REFUSED}" == "refused"
