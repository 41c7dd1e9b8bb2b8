"""The reward contract: what a verifier must write, and the precise reason when it did not."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

MAX_REWARD_BYTES = 64 * 1024
ALLOWED_KEYS = frozenset({"reward", "details"})


@dataclass(frozen=True)
class Reward:
    """A valid verdict."""

    value: float
    details: dict[str, Any]


class VerifierError(ValueError):
    """The verifier did not produce a valid reward; never scored as 0 or 1."""


def parse_reward(raw: bytes | None, exit_code: int | None, timed_out: bool, stderr: str = "") -> Reward:
    """Turn what the verifier left behind into a Reward, or raise VerifierError saying exactly what was wrong."""
    tail = f"; its stderr ends: {stderr[-400:].strip()}" if stderr.strip() else ""
    if timed_out:
        raise VerifierError(f"the verifier did not finish within limits.verifier_timeout_s{tail}")
    if exit_code != 0:
        raise VerifierError(f"the verifier exited with status {exit_code}{tail}")
    if raw is None:
        raise VerifierError(f"the verifier wrote no reward file at $ARENA_OUTPUT{tail}")
    if len(raw) > MAX_REWARD_BYTES:
        raise VerifierError(f"the reward file is larger than {MAX_REWARD_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerifierError(f"the reward file is not valid JSON ({exc}): {raw[:80]!r}") from None
    if not isinstance(data, dict):
        raise VerifierError(f"the reward file holds a {type(data).__name__}, not a JSON object")
    extra = sorted(set(data) - ALLOWED_KEYS)
    if extra:
        raise VerifierError(f"the reward file has keys other than reward and details: {', '.join(extra)}")
    value = data.get("reward")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VerifierError(f"reward is {json.dumps(value)[:40]}, not a number")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise VerifierError(f"reward is {value}, outside [0, 1]")
    details = data.get("details", {})
    if not isinstance(details, dict):
        raise VerifierError("details must be a JSON object")
    return Reward(float(value), details)
