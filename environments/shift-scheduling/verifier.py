"""Score a ward roster against every hard rule of the regenerated instance.

Runs as ``python3 -I verifier.py``. The staff, availability, shifts, rest rule and budget are rebuilt from
ARENA_INSTANCE (the workspace inputs are never trusted); /workspace/schedule.csv is read defensively. Any roster that
meets every rule within budget passes; the planted roster is not consulted. Writes {"reward": 1.0 or 0.0,
"details": {...}} to ARENA_OUTPUT.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

SCHEDULE_FILE = "schedule.csv"
MAX_BYTES = 2 * 1024 * 1024
MAX_EXAMPLES = 20


class Rejected(Exception):
    """The schedule cannot be read as a roster; the message says why."""


def _short(value: str) -> str:
    return value if len(value) <= 40 else value[:37] + "..."


def read_schedule(workspace: Path) -> list[tuple[str, str]]:
    """Read schedule.csv into (shift_id, staff_id) pairs, refusing anything but a small regular UTF-8 CSV file."""
    path = workspace / SCHEDULE_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Rejected(f"{SCHEDULE_FILE} was not written") from None
    except OSError as exc:
        raise Rejected(f"{SCHEDULE_FILE} cannot be opened as a regular file ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Rejected(f"{SCHEDULE_FILE} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{SCHEDULE_FILE} is larger than {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Rejected(f"{SCHEDULE_FILE} is not UTF-8 text") from None
    if "\x00" in text:
        raise Rejected(f"{SCHEDULE_FILE} contains NUL bytes")
    try:
        records = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text, newline=""))]
    except csv.Error as exc:
        raise Rejected(f"{SCHEDULE_FILE} is not valid CSV: {_short(str(exc))}") from None
    records = [row for row in records if any(row)]
    if not records:
        raise Rejected(f"{SCHEDULE_FILE} is empty")
    if [cell.lower() for cell in records[0]] != ["shift_id", "staff_id"]:
        raise Rejected(f"{SCHEDULE_FILE} must start with the header shift_id,staff_id")
    pairs: list[tuple[str, str]] = []
    for number, row in enumerate(records[1:], start=2):
        if len(row) != 2 or not row[0] or not row[1]:
            raise Rejected(f"{SCHEDULE_FILE} row {number} does not have exactly two non-empty fields")
        pairs.append((row[0], row[1]))
    return pairs


def judge(pairs: list[tuple[str, str]], inst: generate.Instance) -> dict[str, list[str]]:
    """Check every hard rule; return the violations found, by rule."""
    shifts = {s.shift_id: s for s in inst.shifts}
    staff = {s.staff_id: s for s in inst.staff}
    rest = inst.min_rest_hours * 60
    problems: dict[str, list[str]] = defaultdict(list)

    seen: set[tuple[str, str]] = set()
    valid: list[tuple[generate.Shift, generate.Staff]] = []
    for shift_id, staff_id in pairs:
        if shift_id not in shifts:
            problems["unknown_shift"].append(_short(shift_id))
        elif staff_id not in staff:
            problems["unknown_staff"].append(_short(staff_id))
        elif (shift_id, staff_id) in seen:
            problems["duplicate_row"].append(f"{shift_id},{staff_id}")
        else:
            seen.add((shift_id, staff_id))
            valid.append((shifts[shift_id], staff[staff_id]))
    if problems:
        return problems

    counts = Counter(shift.shift_id for shift, _ in valid)
    for shift in inst.shifts:
        if counts[shift.shift_id] != shift.headcount:
            problems["coverage"].append(f"{shift.shift_id}: {counts[shift.shift_id]} assigned, needs {shift.headcount}")

    by_person: dict[str, list[generate.Shift]] = defaultdict(list)
    cost = 0
    for shift, person in valid:
        if shift.skill not in person.skills:
            problems["skill"].append(f"{person.staff_id} lacks {shift.skill} for {shift.shift_id}")
        if not generate.covered(person.windows, shift.start, shift.end):
            problems["availability"].append(f"{person.staff_id} is not available for {shift.shift_id}")
        by_person[person.staff_id].append(shift)
        cost += person.rate_cents * shift.hours

    for staff_id, taken in by_person.items():
        taken.sort(key=lambda s: (s.start, s.end))
        for i, first in enumerate(taken):
            for second in taken[i + 1 :]:
                if second.start < first.end:
                    problems["overlap"].append(f"{staff_id}: {first.shift_id} overlaps {second.shift_id}")
                elif not generate.compatible(first, second, rest):
                    problems["rest"].append(
                        f"{staff_id}: under {inst.min_rest_hours} h between {first.shift_id} and {second.shift_id}"
                    )
        hours = sum(s.hours for s in taken)
        if hours > staff[staff_id].max_hours:
            problems["max_hours"].append(f"{staff_id}: {hours} h over the {staff[staff_id].max_hours} h limit")

    if cost > inst.budget_cents:
        problems["budget"].append(f"cost {generate.money(cost)} exceeds budget {generate.money(inst.budget_cents)}")
    return problems


def main() -> None:
    """Regenerate the instance, check the workspace roster and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    output = Path(os.environ["ARENA_OUTPUT"])
    inst = generate.build_instance(index)
    details: dict[str, Any] = {"instance": index}
    try:
        pairs = read_schedule(workspace)
        details["rows"] = len(pairs)
        problems = judge(pairs, inst)
        if problems:
            details["violations"] = {rule: len(found) for rule, found in problems.items()}
            details["examples"] = {rule: found[:MAX_EXAMPLES] for rule, found in problems.items()}
        ok = not problems
    except Rejected as exc:
        details["reason"] = str(exc)
        ok = False
    except Exception as exc:  # an input the checks did not foresee must still score 0, never crash
        details["reason"] = f"schedule could not be checked: {type(exc).__name__}"
        ok = False
    output.write_text(json.dumps({"reward": 1.0 if ok else 0.0, "details": details}), encoding="utf-8")


if __name__ == "__main__":
    main()
