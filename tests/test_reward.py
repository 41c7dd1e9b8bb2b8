"""The reward contract: every malformed verdict is a verifier error that says exactly what was wrong."""

from __future__ import annotations

import pytest

from sandbox.reward import MAX_REWARD_BYTES, Reward, VerifierError, parse_reward


@pytest.mark.parametrize(("raw", "expected"), [
    (b'{"reward": 1}', Reward(1.0, {})),
    (b'{"reward": 0.25, "details": {"why": "partial"}}', Reward(0.25, {"why": "partial"})),
    (b'{"reward": 0}', Reward(0.0, {})),
])
def test_valid_rewards(raw: bytes, expected: Reward) -> None:
    assert parse_reward(raw, 0, False) == expected


@pytest.mark.parametrize(("raw", "code", "timed_out", "reason"), [
    (None, 0, False, "wrote no reward file"),
    (b'{"reward": 1}', 1, False, "exited with status 1"),
    (b'{"reward": 1}', None, True, "did not finish"),
    (b"", 0, False, "not valid JSON"),
    (b"\xff\xfe", 0, False, "not valid JSON"),
    (b"[1]", 0, False, "not a JSON object"),
    (b'{"reward": true}', 0, False, "not a number"),
    (b'{"reward": "1"}', 0, False, "not a number"),
    (b'{"score": 1}', 0, False, "keys other than"),
    (b'{"details": {}}', 0, False, "not a number"),
    (b'{"reward": -0.1}', 0, False, "outside [0, 1]"),
    (b'{"reward": Infinity}', 0, False, "outside [0, 1]"),
    (b'{"reward": NaN}', 0, False, "outside [0, 1]"),
    (b'{"reward": 1, "details": [1]}', 0, False, "details must be a JSON object"),
    (b"{" + b" " * MAX_REWARD_BYTES + b"}", 0, False, "larger than"),
])
def test_invalid_rewards_are_verifier_errors(raw: bytes | None, code: int | None, timed_out: bool,
                                             reason: str) -> None:
    with pytest.raises(VerifierError, match=None) as caught:
        parse_reward(raw, code, timed_out, stderr="Traceback: boom")
    assert reason in str(caught.value)


def test_stderr_tail_is_quoted_for_crashes() -> None:
    with pytest.raises(VerifierError) as caught:
        parse_reward(None, 2, False, stderr="x" * 1000 + "ZeroDivisionError: division by zero\n")
    assert str(caught.value).endswith("ZeroDivisionError: division by zero")
