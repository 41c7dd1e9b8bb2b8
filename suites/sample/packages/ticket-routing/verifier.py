"""Score /workspace/routing.csv against the help desk's rules applied to the inbox rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The expected triage comes from the generator's records (the workspace files are
never read except the answer). Per ticket: a duplicate earns 1 when marked as one with the right original; a routed
ticket earns a third for each of queue, priority and deadline. The reward is the total divided by the tickets plus
every unknown or repeated row. Writes the reward file.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "routing.csv"
HEADER = ("ticket_id", "queue", "priority", "due_at", "duplicate_of")
MAX_BYTES = 2 * 1024 * 1024


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def routing_rows(path: Path) -> list[list[str]]:
    """The data rows under the exact header, from a small regular UTF-8 file (never through a link)."""
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
        rows = [r for r in csv.reader(io.StringIO(raw.decode("utf-8-sig"))) if any(c.strip() for c in r)]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise Rejected(f"{ANSWER} is not UTF-8 CSV: {type(exc).__name__}") from None
    if not rows or tuple(c.strip().lower() for c in rows[0]) != HEADER:
        raise Rejected(f"the first line of {ANSWER} must be the header {','.join(HEADER)}")
    if any(len(r) != len(HEADER) for r in rows[1:]):
        raise Rejected(f"every row of {ANSWER} must have exactly {len(HEADER)} cells")
    return [[c.strip() for c in r] for r in rows[1:]]


def same_instant(given: str, expected: str) -> bool:
    """Whether a deadline names the expected UTC instant (an explicit UTC offset is required)."""
    try:
        moment = dt.datetime.fromisoformat(given)
    except ValueError:
        return False
    return moment.tzinfo is not None and moment == dt.datetime.fromisoformat(expected)


def credit(row: list[str], expected: tuple[str, str, str, str]) -> float:
    """One ticket's credit."""
    _, queue, priority, due_at, duplicate_of = row
    want_queue, want_priority, want_due, want_original = expected
    if want_queue == "duplicate":
        return 1.0 if queue.lower() == "duplicate" and duplicate_of == want_original else 0.0
    if queue.lower() == "duplicate" or duplicate_of:  # marked, or half-marked, as a duplicate: it is not one
        return 0.0
    return ((queue.lower() == want_queue) + (priority.upper() == want_priority)
            + same_instant(due_at, want_due)) / 3


def judge(rows: list[list[str]], expected: dict[str, tuple[str, str, str, str]]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    seen: set[str] = set()
    total, partly, unexpected, repeated = 0.0, [], [], 0
    for row in rows:
        ticket = row[0]
        if ticket in seen:
            repeated += 1
            continue
        seen.add(ticket)
        if ticket not in expected:
            unexpected.append(ticket[:40])
            continue
        got = credit(row, expected[ticket])
        total += got
        if got < 1.0:
            partly.append(ticket)
    return {
        "reward": round(total / (len(expected) + len(unexpected) + repeated), 6),
        "details": {
            "tickets": len(expected), "not_fully_right": sorted(partly)[:20],
            "missing": sorted(set(expected) - seen)[:20], "unexpected": sorted(unexpected)[:20],
            "repeated_rows": repeated,
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    expected = generate.expected_routing(generate.build_instance(index))
    try:
        result = judge(routing_rows(workspace / ANSWER), expected)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
