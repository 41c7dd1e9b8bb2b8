"""Score /workspace/decisions.csv against the ordinance applied to the batch rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The expected decisions come from the generator's records and rule functions (the
workspace files are never read except the answer). Per application: 1 for the right decision with exactly the failed
sections, 0.5 for a right denial citing some of them, else 0; the reward is the total divided by the applications
plus every unknown or repeated row. Writes the reward file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "decisions.csv"
HEADER = ("application_id", "decision", "sections")
MAX_BYTES = 2 * 1024 * 1024


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def decision_rows(path: Path) -> list[list[str]]:
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
        table = [r for r in csv.reader(io.StringIO(raw.decode("utf-8-sig"))) if any(c.strip() for c in r)]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise Rejected(f"{ANSWER} is not UTF-8 CSV: {type(exc).__name__}") from None
    if not table or tuple(c.strip().lower() for c in table[0]) != HEADER:
        raise Rejected(f"the first line of {ANSWER} must be the header {','.join(HEADER)}")
    if any(len(r) != len(HEADER) for r in table[1:]):
        raise Rejected(f"every row of {ANSWER} must have exactly {len(HEADER)} cells")
    return table[1:]


def cited(cell: str) -> frozenset[str]:
    """The section numbers in a cell: separated by semicolons or spaces, a leading section sign allowed."""
    return frozenset(part.strip().lstrip("§").strip() for part in cell.replace(";", " ").split() if part.strip())


def credit(decision: str, sections: frozenset[str], failed: frozenset[str]) -> float:
    """One application's credit."""
    if not failed:
        return 1.0 if decision == "APPROVE" and not sections else 0.0
    if decision != "DENY":
        return 0.0
    if sections == failed:
        return 1.0
    return 0.5 if sections & failed else 0.0


def judge(rows: list[list[str]], expected: dict[str, frozenset[str]]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    seen: set[str] = set()
    total, wrong, unexpected, repeated = 0.0, [], [], 0
    for app_id, decision, sections in rows:
        app_id = app_id.strip()
        if app_id in seen:
            repeated += 1
            continue
        seen.add(app_id)
        if app_id not in expected:
            unexpected.append(app_id[:40])
            continue
        got = credit(decision.strip().upper(), cited(sections), expected[app_id])
        total += got
        if got < 1.0:
            wrong.append(app_id)
    return {
        "reward": round(total / (len(expected) + len(unexpected) + repeated), 6),
        "details": {
            "applications": len(expected), "not_fully_right": sorted(wrong)[:20],
            "missing": sorted(set(expected) - seen)[:20], "unexpected": sorted(unexpected)[:20],
            "repeated_rows": repeated,
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    expected = generate.expected_decisions(generate.build_instance(index))
    try:
        result = judge(decision_rows(workspace / ANSWER), expected)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
