"""Score /workspace/audit.json against the rule set rebuilt from ARENA_INSTANCE and evaluated here.

Runs as ``python3 -I verifier.py``. Verdicts and shadowed rules are recomputed from the generator's structured rules
(the workspace's iptables.rules and flows.csv are never read). Reward: 0.7 x the verdict score (per flow 1 for the
right action and rule, 0.5 for the right action only; divided by the flows plus unknown or repeated flows) + 0.3 x
the Jaccard index of the shadowed-rule sets. Writes the reward file.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "audit.json"
MAX_BYTES = 2 * 1024 * 1024


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def load_answer(path: Path) -> Any:
    """The parsed answer: a small regular UTF-8 JSON file (never through a link; NaN and Infinity refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise Rejected(f"{ANSWER} cannot be opened as a regular file ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Rejected(f"{ANSWER} is not a regular file")
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{ANSWER} is larger than {MAX_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Rejected(f"{ANSWER} is not valid UTF-8 JSON: {type(exc).__name__}") from None


def judge(answer: Any, expected: dict[str, tuple[str, str]], shadowed: set[str]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    if not isinstance(answer, dict) or not isinstance(answer.get("verdicts"), list) \
            or not isinstance(answer.get("shadowed_rules"), list):
        raise Rejected("the answer must be an object with the lists verdicts and shadowed_rules")
    seen: set[str] = set()
    total, partly, unexpected, repeated = 0.0, [], [], 0
    for entry in answer["verdicts"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("flow_id", "action", "rule")):
            raise Rejected("each verdict must be an object with the strings flow_id, action and rule")
        flow = entry["flow_id"].strip()
        if flow in seen:
            repeated += 1
            continue
        seen.add(flow)
        if flow not in expected:
            unexpected.append(flow[:40])
            continue
        action, rule = expected[flow]
        if entry["action"].strip().upper() == action:
            got = 1.0 if entry["rule"].strip() in (rule, rule.upper()) else 0.5
        else:
            got = 0.0
        total += got
        if got < 1.0:
            partly.append(flow)
    if not all(isinstance(r, str) for r in answer["shadowed_rules"]):
        raise Rejected("shadowed_rules must be a list of rule id strings")
    listed = {r.strip() for r in answer["shadowed_rules"]}
    verdict_score = total / (len(expected) + len(unexpected) + repeated)
    shadow_score = len(listed & shadowed) / len(listed | shadowed)
    return {
        "reward": round(0.7 * verdict_score + 0.3 * shadow_score, 6),
        "details": {
            "flows": len(expected), "verdict_score": round(verdict_score, 6), "not_fully_right": sorted(partly)[:20],
            "missing_flows": sorted(set(expected) - seen)[:20], "unexpected_flows": sorted(unexpected)[:20],
            "repeated_flows": repeated, "shadow_score": round(shadow_score, 6),
            "shadowed_missing": len(shadowed - listed), "shadowed_unexpected": sorted(listed - shadowed)[:20],
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    inst = generate.build_instance(index)
    try:
        result = judge(load_answer(workspace / ANSWER), generate.verdicts(inst), generate.shadowed(inst))
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
