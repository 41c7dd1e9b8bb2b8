"""Generate one week of hospital-ward staffing: staff, availability, shifts to cover and a labour budget.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes staff.csv, availability.csv, shifts.csv and
scheduling_rules.json into ARENA_WORKSPACE and prints the prompt values as one JSON object. A feasible roster is
planted while generating; its cost is the budget. ``build_instance(index)`` is the pure function the verifier imports.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/shift-scheduling/v1"
DAY = 1440  # minutes

CHARGE, RN, NA, PHLEB = "charge_nurse", "registered_nurse", "nursing_assistant", "phlebotomist"
UNITS = [
    "Ward 4B (acute medicine)",
    "Ward 6A (general surgery)",
    "Ward 3C (respiratory)",
    "Ward 5D (orthopaedics)",
    "Ward 2A (cardiology step-down)",
    "Ward 7B (elderly care)",
    "Ward 8C (renal)",
    "Ward 1D (short-stay surgery)",
]
FIRST = [
    "Amara",
    "Ben",
    "Chloe",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Isla",
    "Jonah",
    "Kemi",
    "Liam",
    "Maya",
    "Nikhil",
    "Olga",
    "Priya",
    "Quinn",
    "Rosa",
    "Sam",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Aisha",
    "Bruno",
    "Carmen",
    "Diego",
    "Eva",
    "Felix",
    "Gita",
    "Hannah",
    "Ivan",
    "Jade",
]
LAST = [
    "Okafor",
    "Nguyen",
    "Schmidt",
    "Patel",
    "Rossi",
    "Haddad",
    "Kowalski",
    "Tanaka",
    "Murphy",
    "Silva",
    "Cohen",
    "Andersen",
    "Mensah",
    "Ivanova",
    "Garcia",
    "Byrne",
    "Lindqvist",
    "Moreau",
    "Kaur",
    "Fischer",
    "Adeyemi",
    "Novak",
]
# Availability patterns: (start, end) minutes after midnight of an available day; end may run into the next day.
PATTERNS = {
    "days": (360, 1170),
    "lates": (840, 1410),
    "days_lates": (360, 1410),
    "nights": (1080, 1920),
    "any": (0, 1440),
}


@dataclass(frozen=True)
class Staff:
    """A member of staff; windows are (start, end) minutes after the week start."""

    staff_id: str
    name: str
    skills: frozenset[str]
    rate_cents: int
    max_hours: int
    windows: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Shift:
    """A shift requirement: ``headcount`` people with ``skill`` from ``start`` to ``end`` (minutes)."""

    shift_id: str
    start: int
    end: int
    skill: str
    headcount: int

    @property
    def hours(self) -> int:
        return (self.end - self.start) // 60


@dataclass
class Instance:
    """A generated instance: the world, the rules, the planted roster and the workspace files."""

    index: int
    week_start: dt.date
    staff: tuple[Staff, ...]
    shifts: tuple[Shift, ...]
    min_rest_hours: int
    budget_cents: int
    planted: tuple[tuple[str, str], ...]  # (shift_id, staff_id); a witness that the instance is feasible
    files: dict[str, str]
    values: dict[str, str]


def money(cents: int) -> str:
    """Format cents as a plain 2-decimal amount."""
    return f"{cents // 100}.{cents % 100:02d}"


def stamp(week_start: dt.date, minute: int) -> str:
    """Format minutes after the week start as an ISO local date-time without seconds."""
    moment = dt.datetime.combine(week_start, dt.time()) + dt.timedelta(minutes=minute)
    return moment.strftime("%Y-%m-%dT%H:%M")


def covered(windows: tuple[tuple[int, int], ...], start: int, end: int) -> bool:
    """True when [start, end) lies inside the union of the windows (touching windows join up)."""
    point = start
    for low, high in sorted(windows):
        if low <= point < high:
            point = high
        if point >= end:
            return True
    return point >= end


def compatible(a: Shift, b: Shift, rest_minutes: int) -> bool:
    """True when one person may work both shifts: no overlap and at least the minimum rest between them."""
    return b.start >= a.end + rest_minutes or a.start >= b.end + rest_minutes


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _csv(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _requirements(rng: random.Random) -> tuple[str, list[tuple[int, int, str, int]]]:
    """Return the shift system and the raw requirements (start, end, skill, headcount) for the week."""
    system = rng.choice(["8h", "8h", "12h"])
    rn_day, na_day = rng.choice([1, 2, 2]), rng.choice([1, 1, 2])
    late_charge, night_na, draws = rng.random() < 0.4, rng.random() < 0.5, rng.random() < 0.6
    reqs: list[tuple[int, int, str, int]] = []
    for day in range(7):
        base, weekend = day * DAY, day >= 5
        rn = max(1, rn_day - (1 if weekend else 0))
        if system == "8h":
            periods = [("day", 420, 900), ("late", 900, 1380), ("night", 1380, 1860)]
        else:
            periods = [("day", 420, 1140), ("night", 1140, 1860)]
        for period, start, end in periods:
            need: dict[str, int] = {}
            if period == "day":
                need = {CHARGE: 1, RN: rn, NA: na_day}
            elif period == "late":
                need = {RN: rn, NA: 1}
                if late_charge:
                    need[CHARGE] = 1
            else:
                need = {RN: 1 if system == "8h" else rn}
                if night_na:
                    need[NA] = 1
            reqs.extend((base + start, base + end, skill, count) for skill, count in need.items())
        if draws and not weekend:
            reqs.append((base + 360, base + 600, PHLEB, 1))
    return system, reqs


def _make_staff(rng: random.Random, system: str, reqs: list[tuple[int, int, str, int]]) -> list[Staff]:
    hours = {skill: 0 for skill in (CHARGE, RN, NA, PHLEB)}
    for start, end, skill, count in reqs:
        hours[skill] += (end - start) // 60 * count
    caps = [24, 32, 36, 40] if system == "8h" else [24, 36, 36, 48]
    plan: list[tuple[str, frozenset[str], tuple[int, int], list[str]]] = []
    factor = rng.uniform(1.5, 1.9)
    n_charge = max(2, math.ceil(hours[CHARGE] / 32 * factor))
    n_rn = max(2, math.ceil(max(0, hours[RN] - hours[CHARGE] * 0.2) / 32 * factor))
    n_na = max(2, math.ceil(hours[NA] / 32 * factor))
    n_phleb = math.ceil(hours[PHLEB] / 20 * factor * 0.6) if hours[PHLEB] else 0
    day_patterns = ["days", "days", "days_lates", "any"]
    all_patterns = ["days", "lates", "days_lates", "nights", "nights", "any"]
    if system == "12h":
        all_patterns = ["days", "days", "nights", "nights", "any"]
    for _ in range(n_charge):
        plan.append(("charge", frozenset({CHARGE, RN}), (5200, 6400), day_patterns))
    for _ in range(n_rn):
        extra = {PHLEB} if rng.random() < 0.2 else set()
        plan.append(("rn", frozenset({RN} | extra), (4000, 5200), all_patterns))
    for _ in range(n_na):
        extra = {PHLEB} if rng.random() < 0.35 else set()
        plan.append(("na", frozenset({NA} | extra), (1900, 2650), all_patterns))
    for _ in range(n_phleb):
        extra = {NA} if rng.random() < 0.4 else set()
        plan.append(("phleb", frozenset({PHLEB} | extra), (2100, 2850), ["days", "days_lates"]))
    rng.shuffle(plan)
    plan.append(("agency", frozenset({RN}), (8800, 9800), ["any"]))
    plan.append(("agency", frozenset({NA, PHLEB}), (3800, 4500), ["any"]))

    names: set[str] = set()
    staff: list[Staff] = []
    next_id = rng.randint(100, 700)
    for kind, skills, (low, high), patterns in plan:
        while True:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            if name not in names:
                names.add(name)
                break
        if kind == "agency":
            name = f"Agency {'RN' if RN in skills else 'HCA'} ({name})"
            days, cap = list(range(7)), caps[-1]
        else:
            days, cap = sorted(rng.sample(range(7), rng.randint(4, 7))), rng.choice(caps)
        pattern = PATTERNS[rng.choice(patterns)]
        windows = tuple((d * DAY + pattern[0], d * DAY + pattern[1]) for d in days)
        rate = rng.randint(low // 25, high // 25) * 25
        next_id += rng.randint(1, 9)
        staff.append(Staff(f"E{next_id}", name, skills, rate, cap, windows))
    return staff


def _plant(
    rng: random.Random, staff: list[Staff], reqs: list[tuple[int, int, str, int]], rest: int
) -> tuple[list[Shift], list[tuple[str, str]], int]:
    """Build shifts and a feasible roster by a cheap-biased randomized greedy; headcounts come from what it fills."""
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i][0], rng.random()))
    booked: dict[str, list[tuple[int, int]]] = {s.staff_id: [] for s in staff}
    used: dict[str, int] = {s.staff_id: 0 for s in staff}
    filled: dict[int, list[Staff]] = {}
    for i in order:
        start, end, skill, count = reqs[i]
        hours = (end - start) // 60
        team: list[Staff] = []
        for _ in range(count):
            eligible = [
                s
                for s in staff
                if skill in s.skills
                and s not in team
                and used[s.staff_id] + hours <= s.max_hours
                and covered(s.windows, start, end)
                and all(start >= e + rest or s0 >= end + rest for s0, e in booked[s.staff_id])
            ]
            if not eligible:
                break
            eligible.sort(key=lambda s: (s.rate_cents, rng.random()))
            pick = 0
            while pick < len(eligible) - 1 and rng.random() < 0.45:
                pick += 1
            chosen = eligible[pick]
            team.append(chosen)
            booked[chosen.staff_id].append((start, end))
            used[chosen.staff_id] += hours
        filled[i] = team
    shifts: list[Shift] = []
    roster: list[tuple[str, str]] = []
    cost = 0
    for i in sorted(range(len(reqs)), key=lambda i: (reqs[i][0], reqs[i][2])):
        start, end, skill, _ = reqs[i]
        team = filled[i]
        if not team:
            continue
        shift = Shift(f"SH{len(shifts) + 1:03d}", start, end, skill, len(team))
        shifts.append(shift)
        for member in team:
            roster.append((shift.shift_id, member.staff_id))
            cost += member.rate_cents * shift.hours
    return shifts, roster, cost


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} out of range 0..{COUNT - 1}")
    rng = _rng(index)
    week_start = dt.date(2024, 1, 1) + dt.timedelta(weeks=rng.randrange(156))  # always a Monday
    unit = rng.choice(UNITS)
    system, reqs = _requirements(rng)
    rest_hours = rng.choice([10, 11, 12])
    staff = _make_staff(rng, system, reqs)
    shifts, roster, cost = _plant(rng, staff, reqs, rest_hours * 60)

    staff_rows = [
        [s.staff_id, s.name, ";".join(sorted(s.skills)), money(s.rate_cents), str(s.max_hours)]
        for s in sorted(staff, key=lambda s: s.staff_id)
    ]
    avail_rows = [
        [s.staff_id, stamp(week_start, low), stamp(week_start, high)]
        for s in sorted(staff, key=lambda s: s.staff_id)
        for low, high in s.windows
    ]
    shift_rows = [
        [sh.shift_id, stamp(week_start, sh.start), stamp(week_start, sh.end), sh.skill, str(sh.headcount)]
        for sh in shifts
    ]
    rules = {
        "unit": unit,
        "week_start": week_start.isoformat(),
        "min_rest_hours": rest_hours,
        "labour_budget": money(cost),
        "currency": "USD",
    }
    files = {
        "staff.csv": _csv(["staff_id", "name", "skills", "hourly_rate", "max_hours"], staff_rows),
        "availability.csv": _csv(["staff_id", "available_from", "available_to"], avail_rows),
        "shifts.csv": _csv(["shift_id", "start", "end", "skill", "headcount"], shift_rows),
        "scheduling_rules.json": json.dumps(rules, indent=2) + "\n",
    }
    values = {
        "unit": unit,
        "week_start": week_start.isoformat(),
        "week_end": (week_start + dt.timedelta(days=6)).isoformat(),
        "budget": money(cost),
        "min_rest_hours": str(rest_hours),
        "staff_count": str(len(staff)),
        "shift_count": str(len(shifts)),
        "slot_count": str(sum(s.headcount for s in shifts)),
    }
    return Instance(index, week_start, tuple(staff), tuple(shifts), rest_hours, cost, tuple(roster), files, values)


def main() -> None:
    """Write the instance named by ARENA_INSTANCE into the workspace and print its prompt values."""
    instance = build_instance(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in instance.files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    sys.stdout.write(json.dumps(instance.values, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
