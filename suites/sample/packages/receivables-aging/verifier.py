"""Score an accounts-receivable aging report against the one rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The expected report comes from the generator's records (the workspace CSVs are
never read); only /workspace/aging_report.csv is judged. Reward: the customers whose row is exactly right, divided
by the customers expected plus every row that should not be there. Writes {"reward", "details"} to ARENA_OUTPUT.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "aging_report.csv"
MAX_BYTES = 2 * 1024 * 1024
AMOUNT = re.compile(r"-?\d{1,12}(\.\d{1,2})?")


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def read_answer(path: Path) -> str:
    """The answer file's text: a small regular UTF-8 file, never followed through a link."""
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
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Rejected(f"{ANSWER} is not UTF-8 text") from None


def cents(text: str) -> int | None:
    """A two-decimal amount in cents, or None when the cell is not one."""
    text = text.strip()
    if not AMOUNT.fullmatch(text):
        return None
    whole, _, frac = text.lstrip("-").partition(".")
    value = int(whole) * 100 + int(frac.ljust(2, "0") or 0)
    return -value if text.startswith("-") else value


def parse(text: str) -> list[tuple[str, tuple[int | None, ...]]]:
    """(customer_id, amounts) for every non-blank row under the exact header."""
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise Rejected(f"{ANSWER} is not readable CSV: {str(exc)[:80]}") from None
    if not rows or tuple(cell.strip().lower() for cell in rows[0]) != generate.HEADER:
        raise Rejected(f"the first line of {ANSWER} must be the header {','.join(generate.HEADER)}")
    parsed = []
    for row in rows[1:]:
        if len(row) != len(generate.HEADER):
            raise Rejected(f"a row of {ANSWER} has {len(row)} cells, not {len(generate.HEADER)}")
        parsed.append((row[0].strip(), tuple(cents(cell) for cell in row[1:])))
    return parsed


def judge(rows: list[tuple[str, tuple[int | None, ...]]], expected: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    seen: set[str] = set()
    right, wrong, unexpected, repeated = [], [], [], 0
    for customer, amounts in rows:
        if customer in seen:
            repeated += 1
            continue
        seen.add(customer)
        if customer not in expected:
            unexpected.append(customer[:40])
        elif amounts == expected[customer]:
            right.append(customer)
        else:
            wrong.append(customer)
    missing = sorted(set(expected) - seen)
    reward = len(right) / (len(expected) + len(unexpected) + repeated)
    return {
        "reward": round(reward, 6),
        "details": {
            "expected_rows": len(expected), "right": len(right), "wrong": sorted(wrong)[:20],
            "missing": missing[:20], "unexpected": sorted(unexpected)[:20], "repeated_rows": repeated,
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    expected = generate.expected_aging(generate.build_instance(index))
    try:
        result = judge(parse(read_answer(workspace / ANSWER)), expected)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
