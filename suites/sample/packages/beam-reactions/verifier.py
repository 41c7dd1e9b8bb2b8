"""Score /workspace/results.csv against the exact solution of the beams rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The beams are rebuilt by the generator and solved in rational arithmetic (the
workspace's beams.json is never read). A value is right within 0.01 plus 0.2% of the exact one; each beam earns a
third per right value (nothing when a cell is not a finite number), and the reward is the total divided by the
beams plus every unknown or repeated row.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER = "results.csv"
HEADER = ("beam_id", "reaction_pin_kn", "reaction_roller_kn", "max_abs_moment_knm")
MAX_BYTES = 2 * 1024 * 1024


class Rejected(Exception):
    """The answer file cannot be scored at all; the message says why."""


def result_rows(path: Path) -> list[list[str]]:
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


def number(cell: str) -> float | None:
    """A cell's finite number, or None."""
    if len(cell) > 40:
        return None
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def close(value: float, exact: Fraction) -> bool:
    """Whether a value is within 0.01 + 0.2% of the exact one."""
    return abs(value - float(exact)) <= 0.01 + 0.002 * abs(float(exact))


def judge(rows: list[list[str]], expected: dict[str, tuple[Fraction, Fraction, Fraction]]) -> dict[str, Any]:
    """The reward and what was right and wrong."""
    seen: set[str] = set()
    total, off, unexpected, repeated = 0.0, {}, [], 0
    for beam, *values in rows:
        if beam in seen:
            repeated += 1
            continue
        seen.add(beam)
        if beam not in expected:
            unexpected.append(beam[:40])
            continue
        numbers = [number(v) for v in values]
        if None in numbers:  # a row that is not three numbers is not an answer for this beam
            off[beam] = ["not three finite numbers"]
            continue
        pin, roller, peak = expected[beam]
        right = [close(numbers[0], pin), close(numbers[1], roller), close(abs(numbers[2]), peak)]
        total += sum(right) / 3
        if not all(right):
            off[beam] = [name for name, ok in zip(HEADER[1:], right, strict=True) if not ok]
    return {
        "reward": round(total / (len(expected) + len(unexpected) + repeated), 6),
        "details": {
            "beams": len(expected), "wrong_values": dict(sorted(off.items())[:20]),
            "missing": sorted(set(expected) - seen)[:20], "unexpected": sorted(unexpected)[:20],
            "repeated_rows": repeated,
        },
    }


def main() -> None:
    """Rebuild the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    expected = generate.expected_results(generate.build_instance(index))
    try:
        result = judge(result_rows(workspace / ANSWER), expected)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
