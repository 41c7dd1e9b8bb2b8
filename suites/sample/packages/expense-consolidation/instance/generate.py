"""Generate one month's employee expense claims, submitted as CSV exports, text memos and Markdown reports.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes policy.md, fx_rates.csv, employees.csv and the
claims/ folder into ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier imports
``build_instance`` and ``expected_totals`` to rebuild the claims and apply the policy without reading the workspace.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import random
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/expense-consolidation/v1"
CENT = Decimal("0.01")
COMPANIES = ("Lumenfield Analytics", "Barrow & Keane Consulting", "Tessaline Robotics", "Harbor Arc Architects",
             "Quillon Biotech", "Northwind Survey Group", "Carraway Legal LLP", "Solstice Energy Partners")
# currency -> (USD per unit, decimals of its amounts)
RATES = {"USD": ("1", 2), "EUR": ("1.0832", 2), "GBP": ("1.2675", 2), "CAD": ("0.7391", 2), "CHF": ("1.1348", 2),
         "JPY": ("0.006712", 0), "MXN": ("0.05873", 2), "SEK": ("0.09541", 2)}
CATEGORIES = {
    "meals": ("Lunch with client team", "Dinner, conference evening", "Breakfast at hotel", "Team lunch",
              "Airport meal"),
    "lodging": ("Hotel, one night", "Hotel room and tax", "Serviced apartment, one night", "Conference hotel"),
    "transport": ("Taxi from airport", "Train ticket", "Metro day pass", "Rental car fuel", "Ride share to venue"),
    "supplies": ("Printer toner", "Presentation clicker", "USB-C adapter", "Notebooks and pens"),
    "conference": ("Conference registration", "Workshop fee", "Trade show pass"),
    "entertainment": ("Client theatre tickets", "Team bowling night", "Client golf outing"),
    "alcohol": ("Wine with dinner", "Hotel bar", "Drinks after workshop"),
    "personal": ("Laundry", "Gym day pass", "Souvenirs", "In-room movie"),
}
ALWAYS_EXCLUDED = ("alcohol", "personal")
FIRST = ("Ava", "Bruno", "Chiara", "Dmitri", "Esther", "Felix", "Gita", "Hugo", "Imani", "Jonas", "Keiko", "Leon",
         "Mira", "Nils", "Odette", "Pablo", "Rhea", "Stefan", "Talia", "Viktor")
LAST = ("Abbott", "Bergstrom", "Coelho", "Dunmore", "Eriksen", "Faraday", "Guerrero", "Hollis", "Ivanova", "Jaramillo",
        "Kaur", "Lindqvist", "Mbeki", "Novak", "Ortega", "Pereira", "Rasmussen", "Sato", "Tran", "Whitlock")
FORMATS = ("csv", "txt", "md")


@dataclass(frozen=True)
class Receipt:
    employee_id: str
    date: dt.date
    receipt_id: str
    category: str
    description: str
    amount: Decimal  # in the receipt's currency
    currency: str


@dataclass
class Instance:
    index: int
    company: str
    month: dt.date
    meal_cap: Decimal
    lodging_cap: Decimal
    excluded: tuple[str, ...]
    employees: dict[str, str]  # employee_id -> name
    submissions: list[tuple[str, str, list[Receipt]]]  # (file name, format, receipts as submitted)
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def usd(receipt: Receipt) -> Decimal:
    """The receipt converted to US dollars, rounded to the cent half up."""
    return (receipt.amount * Decimal(RATES[receipt.currency][0])).quantize(CENT, rounding=ROUND_HALF_UP)


def expected_totals(inst: Instance) -> dict[tuple[str, str], Decimal]:
    """(employee_id, category) -> reimbursable US dollars, for every pair with a non-zero amount."""
    unique: dict[tuple[str, str], Receipt] = {}
    for _, _, receipts in inst.submissions:
        for r in receipts:
            unique.setdefault((r.employee_id, r.receipt_id), r)
    daily: dict[tuple[str, str, dt.date], Decimal] = {}
    for r in unique.values():
        if r.category not in inst.excluded:
            key = (r.employee_id, r.category, r.date)
            daily[key] = daily.get(key, Decimal(0)) + usd(r)
    totals: dict[tuple[str, str], Decimal] = {}
    caps = {"meals": inst.meal_cap, "lodging": inst.lodging_cap}
    for (employee, category, _), amount in daily.items():
        allowed = min(amount, caps[category]) if category in caps else amount
        totals[(employee, category)] = totals.get((employee, category), Decimal(0)) + allowed
    return {k: v for k, v in totals.items() if v}


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _amount(rng: random.Random, category: str, currency: str) -> Decimal:
    """A plausible amount in the currency whose conversion is never exactly half a cent (no rounding ties)."""
    usd_range = {"meals": (8, 140), "lodging": (90, 420), "transport": (6, 160), "supplies": (5, 90),
                 "conference": (150, 900), "entertainment": (40, 400), "alcohol": (9, 80), "personal": (5, 60)}
    rate, decimals = Decimal(RATES[currency][0]), RATES[currency][1]
    while True:
        value = Decimal(rng.uniform(*usd_range[category])) / rate
        amount = value.quantize(Decimal(1).scaleb(-decimals))
        scaled = amount * rate * 100
        if amount > 0 and scaled - scaled.to_integral_value(rounding="ROUND_FLOOR") != Decimal("0.5"):
            return amount


def _receipts(rng: random.Random, inst: Instance, employee: str, count: int, currencies: list[str],
              numbers: list[int]) -> list[Receipt]:
    """An employee's receipts for the month (numbers: unused receipt numbers, taken from the end)."""
    found = []
    days = sorted(rng.sample(range(1, 28), min(27, max(2, count // 2))))
    heavy = ["meals"] * 4 + ["lodging"] * 2 + ["transport"] * 3 + ["supplies", "conference", "entertainment",
                                                                    "alcohol", "personal"]
    for _ in range(count):
        category = rng.choice(heavy)
        currency = rng.choice(currencies)
        date = inst.month.replace(day=rng.choice(days))
        found.append(Receipt(employee, date, f"R-{numbers.pop()}", category, rng.choice(CATEGORIES[category]),
                             _amount(rng, category, currency), currency))
    if count >= 3:  # two meals on one day, so the daily cap can bite
        base = next((r for r in found if r.category == "meals"), found[0])
        found.append(Receipt(employee, base.date, f"R-{numbers.pop()}", "meals", "Dinner with team",
                             _amount(rng, "meals", base.currency), base.currency))
    return found


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    n_employees, per_employee, n_currencies = {"small": ((1, 1), (3, 5), 1), "medium": ((2, 4), (4, 8), 3),
                                               "large": ((5, 8), (6, 12), 5)}[tier]
    month = dt.date(2023 + rng.randint(0, 2), rng.randint(1, 12), 1)
    excluded = ALWAYS_EXCLUDED + (("entertainment",) if rng.random() < 0.5 else ())
    inst = Instance(index, rng.choice(COMPANIES), month, Decimal(rng.choice([45, 55, 60, 75, 90])),
                    Decimal(rng.choice([150, 175, 200, 225, 250])), excluded, {}, [])
    currencies = ["USD", *rng.sample(sorted(set(RATES) - {"USD"}), n_currencies - 1)]
    names = rng.sample([f"{f} {la}" for f in FIRST for la in LAST], rng.randint(*n_employees))
    for name, number in zip(names, rng.sample(range(1000, 9999), len(names)), strict=True):
        inst.employees[f"E{number}"] = name
    numbers = rng.sample(range(10000, 99999), 8 * 13)
    for employee in sorted(inst.employees):
        receipts = _receipts(rng, inst, employee, rng.randint(*per_employee), currencies, numbers)
        receipts.sort(key=lambda r: (r.date, r.receipt_id))
        kinds = ["csv"] if tier == "small" else rng.sample(FORMATS, rng.randint(1, 2 if tier == "medium" else 3))
        chunks: list[list[Receipt]] = [[] for _ in kinds]
        for n, r in enumerate(receipts):
            chunks[n % len(kinds)].append(r)
        if tier != "small" and rng.random() < 0.6:  # a receipt submitted again in another (or the same) file
            again = rng.choice(receipts)
            rng.choice(chunks).append(again)
        for kind, chunk in zip(kinds, chunks, strict=True):
            if chunk:
                inst.submissions.append((f"{employee.lower()}_{kind}_{rng.randint(100, 999)}.{kind}", kind, chunk))
    _write_files(rng, inst)
    return inst


def _plain(amount: Decimal, currency: str, thousands: bool) -> str:
    decimals = RATES[currency][1]
    return f"{amount:,.{decimals}f}" if thousands else f"{amount:.{decimals}f}"


def _claim_file(rng: random.Random, inst: Instance, kind: str, receipts: list[Receipt]) -> str:
    employee = receipts[0].employee_id
    name = inst.employees[employee]
    if kind == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["employee_id", "date", "receipt_id", "category", "description", "amount", "currency"])
        for r in receipts:
            writer.writerow([employee, r.date.isoformat(), r.receipt_id, r.category, r.description,
                             _plain(r.amount, r.currency, False), r.currency])
        return out.getvalue()
    if kind == "txt":
        lines = ["EXPENSE CLAIM FORM", f"Employee: {name} ({employee})",
                 f"Period: {inst.month:%B %Y}", "", f"{'Date':<12}{'Receipt':<10}{'Category':<15}{'Amount':>14}  "
                 "Description", "-" * 72]
        for r in receipts:
            money = f"{_plain(r.amount, r.currency, rng.random() < 0.5)} {r.currency}"
            lines.append(f"{r.date.isoformat():<12}{r.receipt_id:<10}{r.category:<15}{money:>14}  {r.description}")
        lines += ["-" * 72, "I certify that these expenses were incurred on company business.", ""]
        return "\n".join(lines)
    lines = [f"# Expense report: {name}", "", f"Employee ID: **{employee}**  ", f"Month: {inst.month:%Y-%m}", "",
             "| Date | Receipt | Category | Description | Amount |", "|---|---|---|---|---:|"]
    for r in receipts:
        lines.append(f"| {r.date:%d/%m/%Y} | {r.receipt_id} | {r.category.title()} | {r.description} | "
                     f"{r.currency} {_plain(r.amount, r.currency, True)} |")
    return "\n".join([*lines, ""])


def _policy(inst: Instance) -> str:
    excluded = ", ".join(inst.excluded)
    return f"""# {inst.company}: travel and expense policy (excerpt)

1. **Categories.** Receipts are claimed under one category. Not reimbursable: {excluded}.
   Every other category used in the claims is reimbursable.
2. **Currency.** Each receipt is converted to US dollars on its own with the month's rate in `fx_rates.csv`
   (`usd_per_unit`), and rounded to the cent (half a cent rounds up).
3. **Meals.** At most ${inst.meal_cap} per employee per calendar day: the employee's converted meal receipts of one
   date are added up and anything above the cap is not reimbursed.
4. **Lodging.** At most ${inst.lodging_cap} per employee per night, applied the same way to the lodging receipts of
   each date.
5. **Duplicates.** A receipt (the same receipt id) submitted more than once by an employee, in the same claim or in
   another one, is reimbursed once.
"""


def _write_files(rng: random.Random, inst: Instance) -> None:
    inst.files = {"policy.md": _policy(inst)}
    rates = io.StringIO()
    writer = csv.writer(rates, lineterminator="\n")
    writer.writerow(["currency", "usd_per_unit"])
    writer.writerows([c, RATES[c][0]] for c in sorted(RATES))
    inst.files["fx_rates.csv"] = rates.getvalue()
    people = io.StringIO()
    writer = csv.writer(people, lineterminator="\n")
    writer.writerow(["employee_id", "name", "department"])
    writer.writerows([e, n, rng.choice(["Sales", "Engineering", "Finance", "Operations", "Legal"])]
                     for e, n in sorted(inst.employees.items()))
    inst.files["employees.csv"] = people.getvalue()
    for name, kind, receipts in inst.submissions:
        inst.files[f"claims/{name}"] = _claim_file(rng, inst, kind, receipts)
    inst.prompt = {
        "company": inst.company,
        "month": f"{inst.month:%B %Y}",
        "employee_count": str(len(inst.employees)),
        "claim_count": str(len(inst.submissions)),
    }


def main() -> None:
    """Write the instance named by ARENA_INSTANCE into the workspace and print its prompt values."""
    inst = build_instance(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    (workspace / "claims").mkdir(parents=True, exist_ok=True)
    for name, text in inst.files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    print(json.dumps(inst.prompt, sort_keys=True))


if __name__ == "__main__":
    main()
