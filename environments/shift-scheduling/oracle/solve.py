"""Reference solution: build a ward roster within budget by branch-and-bound with constraint propagation.

Reads staff.csv, availability.csv, shifts.csv and scheduling_rules.json from the current directory (the workspace),
as an agent would, and writes schedule.csv. At each node the search staffs the shift with the least slack (fewest
people still able to take it, relative to its headcount), trying the cheapest teams first; a branch is cut when some
shift can no longer be staffed or when its cost plus a lower bound on the remaining shifts exceeds the budget.
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import json
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

EPOCH = dt.datetime(2000, 1, 1)


def minutes(text: str) -> int:
    """Minutes since a fixed epoch for an ISO date-time."""
    return int((dt.datetime.fromisoformat(text.strip()) - EPOCH).total_seconds() // 60)


def rows(name: str) -> list[dict[str, str]]:
    """Read a CSV file of the workspace as dicts."""
    with Path(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def covered(windows: list[tuple[int, int]], start: int, end: int) -> bool:
    """True when [start, end) lies inside the union of the windows."""
    point = start
    for low, high in sorted(windows):
        if low <= point < high:
            point = high
        if point >= end:
            return True
    return point >= end


@dataclass
class Shift:
    """One shift to staff and the people who could ever take it (skill and availability)."""

    shift_id: str
    start: int
    end: int
    need: int
    eligible: list[int] = field(default_factory=list)
    team: tuple[int, ...] = ()


class Solver:
    """Branch-and-bound over whole-shift team choices."""

    def __init__(self) -> None:
        rules = json.loads(Path("scheduling_rules.json").read_text(encoding="utf-8"))
        self.rest = int(rules["min_rest_hours"]) * 60
        self.budget = int(Decimal(str(rules["labour_budget"])) * 100)
        staff = rows("staff.csv")
        self.ids = [s["staff_id"] for s in staff]
        self.rate = [int(Decimal(s["hourly_rate"]) * 100) for s in staff]
        self.cap = [int(s["max_hours"]) * 60 for s in staff]
        skills = [set(s["skills"].split(";")) for s in staff]
        windows: dict[str, list[tuple[int, int]]] = {s: [] for s in self.ids}
        for row in rows("availability.csv"):
            windows[row["staff_id"]].append((minutes(row["available_from"]), minutes(row["available_to"])))
        self.shifts: list[Shift] = []
        for row in rows("shifts.csv"):
            shift = Shift(row["shift_id"], minutes(row["start"]), minutes(row["end"]), int(row["headcount"]))
            shift.eligible = sorted(
                (
                    p
                    for p, sid in enumerate(self.ids)
                    if row["skill"] in skills[p] and covered(windows[sid], shift.start, shift.end)
                ),
                key=lambda p: (self.rate[p], p),
            )
            self.shifts.append(shift)
        self.booked: list[list[tuple[int, int]]] = [[] for _ in self.ids]
        self.used = [0] * len(self.ids)
        self.nodes = 0

    def cost(self, p: int, shift: Shift) -> int:
        """Cents person p earns for the shift."""
        return self.rate[p] * (shift.end - shift.start) // 60

    def can_work(self, p: int, shift: Shift) -> bool:
        """True when person p may take the shift given what they already hold."""
        if self.used[p] + shift.end - shift.start > self.cap[p]:
            return False
        start, end = shift.start, shift.end
        return all(start >= e + self.rest or s >= end + self.rest for s, e in self.booked[p])

    def search(self, cost: int) -> bool:
        """Staff every open shift within budget; True on success (teams are left in place)."""
        self.nodes += 1
        best: tuple[int, int, Shift, list[int]] | None = None
        bound = cost
        for shift in self.shifts:
            if shift.team:
                continue
            free = [p for p in shift.eligible if self.can_work(p, shift)]
            slack = len(free) - shift.need
            if slack < 0:
                return False
            bound += sum(self.cost(p, shift) for p in free[: shift.need])
            key = (slack, -(shift.end - shift.start))
            if best is None or key < best[:2]:
                best = (*key, shift, free)
        if best is None:
            return cost <= self.budget
        if bound > self.budget:
            return False
        _, _, shift, free = best
        teams = sorted(itertools.combinations(free, shift.need), key=lambda t: sum(self.cost(p, shift) for p in t))
        for team in teams:
            extra = sum(self.cost(p, shift) for p in team)
            if bound - sum(self.cost(p, shift) for p in free[: shift.need]) + extra > self.budget:
                break
            for p in team:
                self.booked[p].append((shift.start, shift.end))
                self.used[p] += shift.end - shift.start
            shift.team = team
            if self.search(cost + extra):
                return True
            shift.team = ()
            for p in team:
                self.booked[p].pop()
                self.used[p] -= shift.end - shift.start
        return False


def main() -> None:
    """Solve and write schedule.csv."""
    sys.setrecursionlimit(10000)
    solver = Solver()
    if not solver.search(0):
        sys.exit("no roster within budget found")
    with Path("schedule.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["shift_id", "staff_id"])
        for shift in sorted(solver.shifts, key=lambda s: s.shift_id):
            for p in shift.team:
                writer.writerow([shift.shift_id, solver.ids[p]])


if __name__ == "__main__":
    main()
