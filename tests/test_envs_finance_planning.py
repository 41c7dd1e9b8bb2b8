"""Host-run checks of the ledger-reconciliation and shift-scheduling environments.

For a spread of seeds: the oracle scores 1.0 (within the time limit), other correct answers score 1.0 too, and
forged or partial answers score 0.0; the generators plant every kind of item the forgeries need. Runs generator,
oracle and verifier as subprocesses without Docker (tests/support/host_episode.py). The properties every bundled
environment shares (doing nothing, hostile files, determinism, placeholders) are in test_environment_properties.py.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.host_episode import (
    generate,
    load_generator,
    reward_of,
    run_oracle,
    scored,
    solved,
    variant,
    write_json,
)

pytestmark = pytest.mark.slow  # each environment run on the host over many instances

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "environments" / "ledger-reconciliation"
SHIFTS = ROOT / "environments" / "shift-scheduling"
SEEDS = [0, 1, 2, 3, 8, 17, 42, 77, 101, 128, 250, 313, 402, 499, 500, 555, 640, 713, 777, 808, 864, 900, 951, 998, 999]


def plus_cent(amount: str) -> str:
    cents = round(float(amount) * 100) + 1
    return f"{'-' if cents < 0 else ''}{abs(cents) // 100}.{abs(cents) % 100:02d}"


# --- ledger-reconciliation ---------------------------------------------------------------------------------------


def ledger_forgeries(good: dict[str, Any], key: Any, other_ids: list[str]) -> dict[str, Any]:
    """Wrong answers built from the oracle's correct one (each must score 0.0)."""
    forged: dict[str, Any] = {}

    def edit(name: str, change: Callable[[dict[str, Any]], Any]) -> None:
        data = json.loads(json.dumps(good))
        change(data)
        forged[name] = data

    for name in ("deposits_in_transit", "outstanding_cheques", "unrecorded_bank_items", "duplicate_ledger_entries"):
        if good[name]:
            edit(f"drop_{name}", lambda d, n=name: d[n].pop())
            edit(f"repeat_{name}", lambda d, n=name: d[n].append(d[n][0]))
            edit(f"{name}_as_string", lambda d, n=name: d.update({n: " ".join(d[n])}))
    if good["outstanding_cheques"]:
        edit("cheque_called_deposit", lambda d: d["deposits_in_transit"].append(d["outstanding_cheques"].pop()))
    edit("matched_item_called_outstanding", lambda d: d["outstanding_cheques"].append(other_ids[0]))
    edit("invented_bank_item", lambda d: d["unrecorded_bank_items"].append("T9999-999"))
    for group in key.duplicate_groups:
        edit("both_duplicate_copies", lambda d, g=group: d.update(duplicate_ledger_entries=sorted(g)))
        break
    if good["amount_errors"]:
        edit("drop_amount_error", lambda d: d["amount_errors"].pop())

        def flip_sign(d: dict[str, Any]) -> None:
            c = d["amount_errors"][0]["correction"]
            d["amount_errors"][0]["correction"] = c[1:] if c.startswith("-") else "-" + c

        edit("correction_sign_flipped", flip_sign)
        edit(
            "correction_off_by_cent",
            lambda d: d["amount_errors"][0].update(correction=plus_cent(d["amount_errors"][0]["correction"])),
        )
        edit("amount_error_without_bank_id", lambda d: d["amount_errors"][0].pop("bank_id"))
        edit(
            "amount_error_as_outstanding",
            lambda d: d["outstanding_cheques"].append(d["amount_errors"].pop()["ledger_id"]),
        )
    edit("bank_balance_off_by_cent", lambda d: d.update(adjusted_bank_balance=plus_cent(d["adjusted_bank_balance"])))
    edit(
        "both_balances_off_by_cent",
        lambda d: d.update(
            adjusted_bank_balance=plus_cent(d["adjusted_bank_balance"]),
            adjusted_book_balance=plus_cent(d["adjusted_book_balance"]),
        ),
    )
    edit("balance_with_currency", lambda d: d.update(adjusted_book_balance="$" + d["adjusted_book_balance"]))
    edit("balance_unrounded", lambda d: d.update(adjusted_bank_balance=d["adjusted_bank_balance"] + "1"))
    edit("balance_as_bool", lambda d: d.update(adjusted_bank_balance=True))
    edit("missing_book_balance", lambda d: d.pop("adjusted_book_balance"))
    edit("missing_amount_errors", lambda d: d.pop("amount_errors"))
    edit("everything_empty", lambda d: d.update({k: [] for k in d if isinstance(d[k], list)}))
    return forged


@pytest.mark.parametrize("seed", SEEDS)
def test_ledger_oracle_passes_and_forgeries_fail(seed: int, tmp_path: Path) -> None:
    key = load_generator(LEDGER).build_instance(seed).answer
    workspace = solved(LEDGER, seed, tmp_path)
    assert reward_of(LEDGER, seed, workspace) == 1.0
    good = json.loads((workspace / "reconciliation.json").read_text())

    # Other correct answers: any order, numbers instead of strings, the other copy of a duplicate, extra keys.
    alternative = {k: v[::-1] if isinstance(v, list) else v for k, v in good.items()}
    alternative["adjusted_bank_balance"] = float(good["adjusted_bank_balance"])
    alternative["duplicate_ledger_entries"] = [
        sorted(g - set(good["duplicate_ledger_entries"]))[0] for g in key.duplicate_groups
    ]
    alternative["notes"] = "prepared by the oracle"
    other = variant(workspace, tmp_path, "alternative")
    write_json(other / "reconciliation.json", alternative)
    assert reward_of(LEDGER, seed, other) == 1.0, "any correct answer must pass"

    ledger_ids = re.findall(r"^(GL-\d+),", (workspace / "general_ledger.csv").read_text(), flags=re.MULTILINE)
    listed = {i for v in good.values() if isinstance(v, list) for i in v if isinstance(i, str)}
    listed |= {e["ledger_id"] for e in good["amount_errors"]} | set().union(*key.duplicate_groups)
    matched = [i for i in ledger_ids if i not in listed]
    for name, data in ledger_forgeries(good, key, matched).items():
        forged = variant(workspace, tmp_path, name)
        write_json(forged / "reconciliation.json", data)
        assert reward_of(LEDGER, seed, forged) == 0.0, name

    # Forged inputs: the agent rewrites both files so that everything matches, and answers for that.
    forged = variant(workspace, tmp_path, "forged_inputs")
    bank = (forged / "bank_statement.csv").read_text().splitlines()
    (forged / "general_ledger.csv").write_text("entry_id,date,description,reference,debit,credit,balance\n")
    (forged / "prior_outstanding.csv").write_text("entry_id,date,type,reference,amount\n")
    (forged / "bank_statement.csv").write_text(bank[0] + "\n")
    closing = bank[-1].rsplit(",", 1)[1]
    write_json(
        forged / "reconciliation.json",
        {
            "deposits_in_transit": [],
            "outstanding_cheques": [],
            "unrecorded_bank_items": [],
            "duplicate_ledger_entries": [],
            "amount_errors": [],
            "adjusted_bank_balance": closing,
            "adjusted_book_balance": closing,
        },
    )
    assert reward_of(LEDGER, seed, forged) == 0.0

    # Another instance's correct answer.
    neighbour = (seed + 1) % 1000
    elsewhere = tmp_path / "neighbour" / "workspace"
    generate(LEDGER, neighbour, elsewhere)
    run_oracle(LEDGER, elsewhere)
    shutil.copy(elsewhere / "reconciliation.json", forged / "reconciliation.json")
    assert reward_of(LEDGER, seed, forged) == 0.0


def test_ledger_instances_cover_every_kind_of_reconciling_item() -> None:
    gen = load_generator(LEDGER)
    seen: dict[str, int] = {}
    for seed in SEEDS:
        key = gen.build_instance(seed).answer
        for name in (
            "deposits_in_transit",
            "outstanding_cheques",
            "unrecorded_bank_items",
            "duplicate_groups",
            "amount_errors",
        ):
            seen[name] = seen.get(name, 0) + bool(getattr(key, name))
    assert all(count >= 5 for count in seen.values()), seen


# --- shift-scheduling --------------------------------------------------------------------------------------------


def roster_text(pairs: list[tuple[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["shift_id", "staff_id"])
    writer.writerows(pairs)
    return out.getvalue()


def read_roster(workspace: Path) -> list[tuple[str, str]]:
    rows = list(csv.reader(io.StringIO((workspace / "schedule.csv").read_text())))
    return [(a, b) for a, b in rows[1:]]


class Roster:
    """An instance and a roster for it, with the rule checks needed to build targeted forgeries."""

    def __init__(self, gen: ModuleType, inst: Any, pairs: list[tuple[str, str]]) -> None:
        self.gen, self.inst = gen, inst
        self.pairs = list(pairs)
        self.shift = {s.shift_id: s for s in inst.shifts}
        self.staff = {s.staff_id: s for s in inst.staff}

    def taken(self, staff_id: str, without: tuple[str, str] | None = None) -> list[Any]:
        return [self.shift[sh] for sh, st in self.pairs if st == staff_id and (sh, st) != without]

    def cost(self) -> int:
        return sum(self.staff[st].rate_cents * self.shift[sh].hours for sh, st in self.pairs)

    def fits(self, staff_id: str, shift_id: str, without: tuple[str, str] | None = None) -> dict[str, bool]:
        """Which rules person staff_id meets if given shift_id (after dropping the pair `without`)."""
        person, shift = self.staff[staff_id], self.shift[shift_id]
        others = self.taken(staff_id, without)
        rest = self.inst.min_rest_hours * 60
        return {
            "skill": shift.skill in person.skills,
            "availability": self.gen.covered(person.windows, shift.start, shift.end),
            "overlap": all(shift.start >= o.end or o.start >= shift.end for o in others),
            "rest": all(self.gen.compatible(shift, o, rest) for o in others),
            "max_hours": sum(o.hours for o in others) + shift.hours <= person.max_hours,
            "free": shift_id not in {sh for sh, st in self.pairs if st == staff_id},
        }

    def swap_breaking(self, rule: str) -> list[tuple[str, str]] | None:
        """Replace one assignment by someone who breaks exactly `rule` (and no other per-person rule)."""
        for pair in self.pairs:
            shift_id, _ = pair
            on_shift = {st for sh, st in self.pairs if sh == shift_id}
            for staff_id in sorted(self.staff):
                if staff_id in on_shift:
                    continue
                verdict = self.fits(staff_id, shift_id)
                # An overlap leaves no rest either, and adds the hours of a shift worked at the same time.
                implied = {rule, "rest", "max_hours"} if rule == "overlap" else {rule}
                if not verdict[rule] and all(ok for r, ok in verdict.items() if r not in implied):
                    return [(shift_id, staff_id) if p == pair else p for p in self.pairs]
        return None

    def double_booked(self) -> list[tuple[str, str]]:
        """Put someone on a second shift at the same time as one they hold (other rules may break too)."""
        for shift_id, staff_id in self.pairs:
            first = self.shift[shift_id]
            for other in self.inst.shifts:
                if other.shift_id != shift_id and other.start < first.end and first.start < other.end:
                    replaced = next(p for p in self.pairs if p[0] == other.shift_id)
                    return [(other.shift_id, staff_id) if p == replaced else p for p in self.pairs]
        raise AssertionError("no two shifts overlap")

    def over_budget(self) -> list[tuple[str, str]] | None:
        """Keep every rule but the budget: move shifts onto dearer staff until the cost exceeds the budget."""
        for _ in range(len(self.pairs)):
            if self.cost() > self.inst.budget_cents:
                return self.pairs
            moves = []
            for pair in self.pairs:
                shift_id, current = pair
                on_shift = {st for sh, st in self.pairs if sh == shift_id}
                for staff_id, person in self.staff.items():
                    gain = (person.rate_cents - self.staff[current].rate_cents) * self.shift[shift_id].hours
                    if staff_id not in on_shift and gain > 0:
                        moves.append((gain, pair, (shift_id, staff_id)))
            moves.sort(reverse=True)
            move = next((m for m in moves if all(self.fits(m[2][1], m[2][0]).values())), None)
            if move is None:
                return None
            self.pairs = [move[2] if p == move[1] else p for p in self.pairs]
        return None


@pytest.mark.parametrize("seed", SEEDS)
def test_shifts_oracle_passes_and_forgeries_fail(seed: int, tmp_path: Path) -> None:
    gen = load_generator(SHIFTS)
    inst = gen.build_instance(seed)
    workspace = solved(SHIFTS, seed, tmp_path)
    assert reward_of(SHIFTS, seed, workspace) == 1.0
    good = read_roster(workspace)
    assert Roster(gen, inst, good).cost() <= inst.budget_cents

    # Other valid rosters: the planted one (cost exactly the budget) and the oracle's reordered with CRLF and spaces.
    other = variant(workspace, tmp_path, "planted")
    (other / "schedule.csv").write_text(roster_text(list(inst.planted)))
    assert reward_of(SHIFTS, seed, other) == 1.0, "any valid roster within budget must pass"
    other = variant(workspace, tmp_path, "reordered")
    lines = ["shift_id,staff_id"] + [f"{a} , {b}" for a, b in reversed(good)]
    (other / "schedule.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    assert reward_of(SHIFTS, seed, other) == 1.0, "order and layout must not matter"

    forged: dict[str, tuple[list[tuple[str, str]], str | None]] = {
        "drop_row": (good[:-1], "coverage"),
        "duplicate_row": ([*good, good[0]], "duplicate_row"),
        "unknown_staff": ([(good[0][0], "E000"), *good[1:]], "unknown_staff"),
        "unknown_shift": ([("SH999", good[0][1]), *good[1:]], "unknown_shift"),
    }
    roster = Roster(gen, inst, good)
    extra = next((s for s in sorted(roster.staff) if s not in {st for sh, st in good if sh == good[0][0]}), None)
    forged["extra_person"] = ([*good, (good[0][0], extra)], "coverage")
    for rule in ("skill", "availability", "overlap", "rest", "max_hours"):
        pairs = roster.swap_breaking(rule)
        if pairs is not None:
            forged[f"breaks_{rule}"] = (pairs, rule)
    if "breaks_overlap" not in forged:
        forged["double_booked"] = (roster.double_booked(), "overlap")
    pairs = Roster(gen, inst, good).over_budget()
    if pairs is not None:
        forged["over_budget"] = (pairs, "budget")
    assert {"breaks_skill", "breaks_availability"} <= set(forged), sorted(forged)
    for name, (pairs, rule) in forged.items():
        target = variant(workspace, tmp_path, name)
        (target / "schedule.csv").write_text(roster_text(pairs))
        result = scored(SHIFTS, seed, target)
        assert result["reward"] == 0.0, name
        assert rule in result["details"].get("violations", {}), (name, result["details"])

    # Forged inputs: the agent drops half of shifts.csv, then solves what is left.
    target = variant(workspace, tmp_path, "forged_inputs")
    shifts = (target / "shifts.csv").read_text().splitlines()
    (target / "shifts.csv").write_text("\n".join(shifts[: len(shifts) // 2]) + "\n")
    run_oracle(SHIFTS, target)
    assert reward_of(SHIFTS, seed, target) == 0.0


def test_shift_forgeries_reach_every_rule() -> None:
    gen = load_generator(SHIFTS)
    reached: dict[str, int] = {}
    for seed in SEEDS[:10]:
        inst = gen.build_instance(seed)
        roster = Roster(gen, inst, list(inst.planted))
        for rule in ("rest", "max_hours"):
            reached[rule] = reached.get(rule, 0) + (roster.swap_breaking(rule) is not None)
        reached["budget"] = reached.get("budget", 0) + (Roster(gen, inst, list(inst.planted)).over_budget() is not None)
    assert all(count >= 3 for count in reached.values()), reached
