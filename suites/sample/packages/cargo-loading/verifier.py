"""Score /workspace/loading_plan.csv against the pallets and rules rebuilt from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. The pallets, the rules and the optimal number of trucks come from the generator,
which plants a packing whose total weight proves it optimal (the workspace's pallets.csv is never read). An
incomplete or rule-breaking plan scores 0; a valid one 1 with the optimal number of trucks, 0.5 with one more, else 0.
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

ANSWER = "loading_plan.csv"
HEADER = ("pallet_id", "truck")
MAX_BYTES = 2 * 1024 * 1024


class Rejected(Exception):
    """The plan cannot be accepted; the message says why."""


def plan_rows(path: Path) -> list[list[str]]:
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


def judge(rows: list[list[str]], inst: generate.Instance) -> dict[str, Any]:
    """The reward and why."""
    known = {p.pallet_id for p in inst.pallets}
    plan: dict[str, str] = {}
    for pallet, truck in rows:
        if pallet not in known:
            raise Rejected(f"unknown pallet {pallet[:40]!r}")
        if pallet in plan:
            raise Rejected(f"pallet {pallet} is listed twice")
        if not truck:
            raise Rejected(f"pallet {pallet} has no truck")
        plan[pallet] = truck
    missing = sorted(known - set(plan))
    if missing:
        raise Rejected(f"{len(missing)} pallet(s) left on the dock, for example {missing[0]}")
    problems = generate.check_plan(inst, plan)
    if problems:
        raise Rejected("the plan breaks the rules: " + "; ".join(problems[:5]))
    used = len(set(plan.values()))
    reward = 1.0 if used <= inst.trucks else 0.5 if used == inst.trucks + 1 else 0.0
    return {"reward": reward, "details": {"trucks_used": used, "fewest_possible": inst.trucks}}


def main() -> None:
    """Rebuild the instance, judge the workspace plan and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    inst = generate.build_instance(index)
    try:
        result = judge(plan_rows(workspace / ANSWER), inst)
    except Rejected as exc:
        result = {"reward": 0.0, "details": {"rejected": str(exc)}}
    except Exception as exc:  # an answer nobody foresaw still scores 0, never crashes the verifier
        result = {"reward": 0.0, "details": {"rejected": f"answer could not be checked: {type(exc).__name__}"}}
    result["details"]["instance"] = index
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
