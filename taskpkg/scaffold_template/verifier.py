"""Score the final state: is /workspace/answer.txt the sum of the instance's numbers?

TODO(arena): replace the example with your verifier. Judge files only, regenerate what you need from ARENA_INSTANCE,
and never trust a file the agent could have changed.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))
from generate import build_instance


def score() -> dict:
    """Return the reward and the reasons."""
    expected = sum(build_instance(int(os.environ["ARENA_INSTANCE"])))
    answer = Path(os.environ.get("ARENA_WORKSPACE", "/workspace")) / "answer.txt"
    if not answer.is_file():
        return {"reward": 0.0, "details": {"reason": "answer.txt is missing"}}
    text = answer.read_bytes()[:100].decode("utf-8", errors="replace").strip()
    if text != str(expected):
        return {"reward": 0.0, "details": {"reason": "wrong sum", "got": text[:40]}}
    return {"reward": 1.0, "details": {"reason": "correct"}}


if __name__ == "__main__":
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(score()))
