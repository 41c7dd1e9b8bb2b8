"""Score /workspace/reimbursement.csv against the expense policy applied to the claims rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The expected totals come from the generator's records (the claim documents in the
workspace are never read). Reward: (employee, category) amounts right to the cent, divided by the amounts expected
plus every row that should not be there. Writes the reward file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "reimbursement.csv"
HEADER = ("employee_id", "category", "amount_usd")
MAX_BYTES = 2 * 1024 * 1024
AMOUNT = re.compile(r"\d{1,9}(\.\d{1,2})?")


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def table(path: Path) -> list[list[str]]:
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


def judge(rows: list[list[str]], expected: dict[tuple[str, str], Decimal]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    seen: set[tuple[str, str]] = set()
    right, wrong, unexpected, repeated = 0, [], [], 0
    for employee, category, amount in rows:
        key = (employee, category.lower())
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        if key not in expected:
            unexpected.append(f"{employee[:20]}/{category[:20]}")
        elif AMOUNT.fullmatch(amount) and Decimal(amount) == expected[key]:
            right += 1
        else:
            wrong.append(f"{employee}/{category}")
    missing = [f"{e}/{c}" for e, c in sorted(set(expected) - seen)]
    return {
        "reward": round(right / (len(expected) + len(unexpected) + repeated), 6),
        "details": {
            "expected_rows": len(expected), "right": right, "wrong_amount": sorted(wrong)[:20],
            "missing": missing[:20], "unexpected": sorted(unexpected)[:20], "repeated_rows": repeated,
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    expected = generate.expected_totals(generate.build_instance(index))
    try:
        result = judge(table(workspace / ANSWER), expected)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
