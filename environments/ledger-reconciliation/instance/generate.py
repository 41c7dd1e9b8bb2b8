"""Generate one month of bank-statement and general-ledger cash activity with realistic reconciling items.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes bank_statement.csv, general_ledger.csv and
prior_outstanding.csv into ARENA_WORKSPACE and prints the prompt values as one JSON object. ``build_instance(index)``
is the pure function the verifier imports to regenerate the instance and its answer key.
"""

from __future__ import annotations

import calendar
import csv
import datetime as dt
import hashlib
import io
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/ledger-reconciliation/v1"

COMPANIES = [
    "Harbourview Dental Group",
    "Northfield Tool & Die Ltd",
    "Blue Heron Catering Co",
    "Maple Ridge Veterinary Clinic",
    "Cobalt Freight Services",
    "Juniper Street Bakery",
    "Ironwood Landscaping Inc",
    "Summit Physiotherapy LLP",
    "Redwood Office Interiors",
    "Lakeshore Auto Repair",
    "Granite Peak Outfitters",
    "Silverline Print Works",
    "Cedar Valley Pharmacy",
    "Orchard Hill Daycare",
    "Bright Spark Electrical",
    "Copperleaf Architects",
]
BANKS = ["First Provincial Bank", "Union Trust Bank", "Commonwealth Savings", "Meridian Commercial Bank"]
CUSTOMERS = [
    "Acme Holdings",
    "Birchwood Properties",
    "Castle Rock Hotels",
    "Delta Logistics",
    "Evergreen Schools",
    "Fairview Medical",
    "Greystone Partners",
    "Hillcrest Foods",
    "Indigo Media",
    "Jasper County",
    "Kestrel Energy",
    "Lumen Labs",
    "Mariner Shipping",
    "Nova Retail",
    "Oakline Builders",
    "Pioneer Insurance",
    "Quarry Road Cafe",
    "Riverside Clinic",
    "Stonegate Realty",
    "Tidewater Marine",
]
VENDORS = [
    "Allied Office Supply",
    "Bolt Fasteners",
    "City Waste Services",
    "Dynamo Electric",
    "Eastside Paper Co",
    "Fleetway Fuel",
    "Global Parts Inc",
    "Horizon Telecom",
    "Integra Software",
    "Keystone Insurance",
    "Liberty Uniforms",
    "Metro Janitorial",
    "Northern Lumber",
    "Pacific Packaging",
    "Quantum IT Services",
    "Rapid Couriers",
    "Sterling Legal LLP",
    "Trident Security",
    "United Plumbing",
    "Vantage Marketing",
]
UTILITIES = [("Hydro", "HYDRO ELECTRIC"), ("Water & sewer", "CITY WATER UTIL"), ("Telephone & internet", "TELCO NET")]


@dataclass
class Item:
    """One economic event: it may appear in the ledger, on the bank statement, or both."""

    kind: str
    bank_amount: int  # cents, signed: + raises the account balance
    gl_date: dt.date | None
    bank_date: dt.date | None
    gl_desc: str = ""
    bank_desc: str = ""
    gl_ref: str = ""
    bank_ref: str = ""
    gl_amount: int | None = None  # cents, signed; differs from bank_amount only for a transposition error
    prior: bool = False
    gl_id: str = ""
    bank_id: str = ""

    def __post_init__(self) -> None:
        if self.gl_amount is None:
            self.gl_amount = self.bank_amount


@dataclass(frozen=True)
class AnswerKey:
    """What a correct reconciliation must report."""

    deposits_in_transit: frozenset[str]
    outstanding_cheques: frozenset[str]
    unrecorded_bank_items: frozenset[str]
    duplicate_groups: tuple[frozenset[str], ...]  # identical postings; exactly all but one of each group are extras
    amount_errors: frozenset[tuple[str, str, int]]  # (ledger_id, bank_id, correction in cents)
    adjusted_balance: int  # cents


@dataclass
class Instance:
    """A generated instance: workspace files, prompt values and the answer key."""

    index: int
    files: dict[str, str]
    values: dict[str, str]
    answer: AnswerKey
    stats: dict[str, int] = field(default_factory=dict)


def money(cents: int) -> str:
    """Format cents as a plain 2-decimal amount, e.g. -1234.50."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _business_day(day: dt.date) -> dt.date:
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def _cents(rng: random.Random, low: int, high: int) -> int:
    return rng.randint(low * 100, high * 100)


def _transpose(rng: random.Random, cents: int) -> int | None:
    digits = str(cents)
    spots = [i for i in range(len(digits) - 1) if digits[i] != digits[i + 1] and not (i == 0 and digits[1] == "0")]
    if not spots:
        return None
    i = rng.choice(spots)
    return int(digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :])


def _csv(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically: files, prompt values and answer key."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} out of range 0..{COUNT - 1}")
    rng = _rng(index)
    year, month = rng.randint(2023, 2025), rng.randint(1, 12)
    last_day = calendar.monthrange(year, month)[1]
    first, last = dt.date(year, month, 1), dt.date(year, month, last_day)
    month_days = [first + dt.timedelta(days=i) for i in range(last_day)]
    business_days = [day for day in month_days if day.weekday() < 5]
    company, bank = rng.choice(COMPANIES), rng.choice(BANKS)
    month_name = f"{calendar.month_name[month]} {year}"
    items: list[Item] = []
    used_refs: set[str] = set()

    def fresh(prefix: str, digits: int) -> str:
        while True:
            ref = f"{prefix}{rng.randrange(10 ** (digits - 1), 10**digits)}"
            if ref not in used_refs:
                used_refs.add(ref)
                return ref

    def cleared(day: dt.date, lag: int) -> dt.date | None:
        bank_day = _business_day(day + dt.timedelta(days=lag))
        return bank_day if bank_day <= last else None

    def eft_cleared(day: dt.date, lag: int) -> dt.date:
        return cleared(day, lag) or day

    def book_day(low: int = 0, high: int | None = None) -> dt.date:
        pool = business_days[low:high] if high is not None else business_days[low:]
        return rng.choice(pool)

    # Prior month's outstanding items (from last month's reconciliation).
    cheque_no = rng.randint(1000, 8000)
    prior_end = first - dt.timedelta(days=1)
    for _ in range(rng.randint(1, 3)):
        issued = prior_end - dt.timedelta(days=rng.randint(0, 9))
        amount = _cents(rng, 60, 6500)
        vendor = rng.choice(VENDORS)
        still_out = rng.random() < 0.3
        bank_date = None if still_out else _business_day(first + dt.timedelta(days=rng.randint(0, 8)))
        items.append(
            Item(
                "cheque",
                -amount,
                issued,
                bank_date,
                f"Cheque {cheque_no} - {vendor}",
                f"CHEQUE {cheque_no:06d}",
                str(cheque_no),
                f"{cheque_no:06d}",
                prior=True,
            )
        )
        cheque_no += 1
    if rng.random() < 0.7:
        slip = fresh("DS-", 5)
        amount = _cents(rng, 400, 12000)
        items.append(
            Item(
                "deposit",
                amount,
                prior_end,
                _business_day(first + dt.timedelta(days=rng.randint(0, 2))),
                f"Customer deposit - {rng.choice(CUSTOMERS)}",
                "BRANCH DEPOSIT",
                slip,
                slip,
                prior=True,
            )
        )

    # Recurring payments, booked by the bookkeeper and processed by the bank.
    rent_day = business_days[0]
    rent = rng.randint(25, 140) * 10000
    ref = fresh("EFT-", 6)
    items.append(
        Item("eft", -rent, rent_day, rent_day, f"Rent - {month_name}", "PREAUTH DEBIT LANDLORD RENT", ref, ref)
    )
    for pay_day in (dt.date(year, month, 15), last):
        while pay_day.weekday() >= 5:
            pay_day -= dt.timedelta(days=1)
        ref = fresh("PR-", 6)
        items.append(
            Item(
                "eft",
                -_cents(rng, 9000, 48000),
                pay_day,
                pay_day,
                f"Payroll run {pay_day.isoformat()}",
                "PAYROLL DEBIT",
                ref,
                ref,
            )
        )
    for gl_name, bank_name in rng.sample(UTILITIES, rng.randint(1, 3)):
        day = book_day(3, 20)
        ref = fresh("EFT-", 6)
        items.append(
            Item(
                "eft",
                -_cents(rng, 120, 2400),
                day,
                eft_cleared(day, rng.choice([0, 0, 1])),
                f"{gl_name} - {month_name}",
                f"PREAUTH DEBIT {bank_name}",
                ref,
                ref,
            )
        )
    if rng.random() < 0.6:
        day = book_day(5, 18)
        ref = fresh("LN-", 6)
        items.append(
            Item("eft", -_cents(rng, 800, 5200), day, day, "Equipment loan instalment", "LOAN PAYMENT", ref, ref)
        )
    for vendor in rng.sample(VENDORS, rng.randint(2, 5)):
        day = book_day(0, -1)
        ref = fresh("EFT-", 6)
        items.append(
            Item(
                "eft",
                -_cents(rng, 400, 16000),
                day,
                eft_cleared(day, rng.choice([0, 1, 1, 2])),
                f"Supplier payment - {vendor}",
                f"EFT DEBIT {vendor.upper()}",
                ref,
                ref,
            )
        )

    # Cheques: most clear within the month, late ones are still outstanding at month end.
    cheque_days = sorted(book_day() for _ in range(rng.randint(7, 14)))
    for day in cheque_days:
        vendor = rng.choice(VENDORS)
        amount = _cents(rng, 45, 9500)
        bank_date = cleared(day, rng.randint(2, 12))
        items.append(
            Item(
                "cheque",
                -amount,
                day,
                bank_date,
                f"Cheque {cheque_no} - {vendor}",
                f"CHEQUE {cheque_no:06d}",
                str(cheque_no),
                f"{cheque_no:06d}",
            )
        )
        cheque_no += 1

    # Receipts: branch deposits of customer cheques and card/EFT settlements.
    payments = -sum(i.bank_amount for i in items if not i.prior)
    receipts_target = int(payments * rng.uniform(0.85, 1.2))
    n_deposits = rng.randint(5, 10)
    n_transit = rng.choice([0, 1, 1, 2])
    n_settle = rng.randint(2, 6)
    shares = [rng.uniform(0.5, 1.5) for _ in range(n_deposits + n_settle)]
    total_share = sum(shares)
    amounts = [max(5000, int(receipts_target * s / total_share)) for s in shares]
    for k in range(n_deposits):
        if k < n_transit:
            day = business_days[-1] if k == 0 else last
            bank_date = None
        else:
            day = book_day(0, -2)
            bank_date = cleared(day, rng.choice([0, 1, 1, 2]))
        slip = fresh("DS-", 5)
        customer = rng.choice(CUSTOMERS)
        items.append(
            Item("deposit", amounts[k], day, bank_date, f"Customer deposit - {customer}", "BRANCH DEPOSIT", slip, slip)
        )
    for k in range(n_settle):
        day = book_day(0, -1)
        ref = fresh("MS-", 7)
        items.append(
            Item(
                "eft",
                amounts[n_deposits + k],
                day,
                eft_cleared(day, rng.choice([0, 1])),
                "Card settlement - merchant batch",
                "MERCHANT SETTLEMENT CREDIT",
                ref,
                ref,
            )
        )

    # Bank-only items the bookkeeper has not recorded yet.
    stamp = f"{year % 100:02d}{month:02d}"
    bank_only: list[Item] = [
        Item(
            "bank",
            -rng.choice([1500, 2000, 2500, 3000, 3500, 4500]),
            None,
            business_days[-1],
            bank_desc="MONTHLY ACCOUNT FEE",
            bank_ref=f"SC{stamp}",
        ),
        Item(
            "bank",
            rng.randint(35, 4800),
            None,
            last if last.weekday() < 5 else business_days[-1],
            bank_desc="INTEREST CREDIT",
            bank_ref=f"INT{stamp}",
        ),
        Item(
            "bank",
            -rng.choice([1500, 2500, 3000, 4000]),
            None,
            book_day(2, -2),
            bank_desc="OUTGOING WIRE FEE",
            bank_ref=fresh("WF", 6),
        ),
        Item(
            "bank",
            -_cents(rng, 20, 400),
            None,
            book_day(1, -1),
            bank_desc="MERCHANT SERVICE FEES",
            bank_ref=fresh("MF", 6),
        ),
    ]
    chosen = rng.sample(bank_only, rng.randint(1, 3))
    if rng.random() < 0.35:
        day = book_day(5, -3)
        ref = fresh("RTN-", 5)
        payer = rng.choice(CUSTOMERS).upper()
        chosen.append(
            Item("bank", -_cents(rng, 300, 5000), None, day, bank_desc=f"RETURNED ITEM NSF {payer}", bank_ref=ref)
        )
        chosen.append(
            Item(
                "bank", -rng.choice([4500, 4800, 5000]), None, day, bank_desc="NSF ITEM FEE", bank_ref=fresh("NSF-", 5)
            )
        )
    items.extend(chosen)

    # Book errors: a transposed amount and an entry posted twice, both on items that cleared the bank.
    candidates = [i for i in items if i.kind != "bank" and not i.prior and i.bank_date is not None]
    rng.shuffle(candidates)
    n_transposed = rng.choice([0, 1, 1, 1, 2])
    transposed: list[Item] = []
    for item in candidates:
        if len(transposed) == n_transposed:
            break
        swapped = _transpose(rng, abs(item.bank_amount))
        if swapped is not None and swapped != abs(item.bank_amount):
            item.gl_amount = swapped if item.bank_amount > 0 else -swapped
            transposed.append(item)
    n_dups = rng.choice([0, 1, 1, 1, 2])
    dup_sources = [i for i in candidates if i not in transposed][:n_dups]
    duplicates = [
        Item(s.kind, s.bank_amount, s.gl_date, None, s.gl_desc, "", s.gl_ref, "", s.gl_amount) for s in dup_sources
    ]
    for copy, source in zip(duplicates, dup_sources, strict=True):
        copy.kind = "duplicate"
        copy.bank_ref = source.bank_ref  # kept only to pair the copy with its source below
    items.extend(duplicates)

    # Assign ids: ledger entries and bank transactions, each in date order with a random tie-break.
    ledger = [i for i in items if i.gl_date is not None and not i.prior]
    ledger.sort(key=lambda i: (i.gl_date, rng.random()))
    base = rng.randint(20000, 80000)
    for n, item in enumerate(ledger):
        item.gl_id = f"GL-{base + n}"
    prior = [i for i in items if i.prior]
    prior_ids = sorted(rng.sample(range(base - 400, base - 20), len(prior)))
    for item, n in zip(sorted(prior, key=lambda i: (i.gl_date, i.gl_ref)), prior_ids, strict=True):
        item.gl_id = f"GL-{n}"
    bank_rows = [i for i in items if i.bank_date is not None and i.kind != "duplicate"]
    bank_rows.sort(key=lambda i: (i.bank_date, rng.random()))
    for n, item in enumerate(bank_rows, start=1):
        item.bank_id = f"T{stamp}-{n:03d}"

    # Opening balances: last month reconciled with only the prior outstanding items.
    book_open = _cents(rng, 15000, 160000)
    bank_open = book_open - sum(i.bank_amount for i in prior)
    bank_rows_out, balance = [], bank_open
    for item in bank_rows:
        balance += item.bank_amount
        out, dep = (money(-item.bank_amount), "") if item.bank_amount < 0 else ("", money(item.bank_amount))
        bank_rows_out.append(
            [item.bank_date.isoformat(), item.bank_id, item.bank_desc, item.bank_ref, out, dep, money(balance)]
        )
    bank_close = balance
    gl_rows_out, balance = [], book_open
    for item in ledger:
        balance += item.gl_amount
        debit, credit = (money(item.gl_amount), "") if item.gl_amount > 0 else ("", money(-item.gl_amount))
        gl_rows_out.append(
            [item.gl_id, item.gl_date.isoformat(), item.gl_desc, item.gl_ref, debit, credit, money(balance)]
        )
    book_close = balance
    prior_rows = [
        [
            i.gl_id,
            i.gl_date.isoformat(),
            "outstanding_cheque" if i.bank_amount < 0 else "deposit_in_transit",
            i.gl_ref,
            money(abs(i.bank_amount)),
        ]
        for i in sorted(prior, key=lambda i: i.gl_id)
    ]

    # Answer key.
    uncleared = [i for i in items if i.kind in ("cheque", "deposit", "eft") and i.bank_date is None]
    dit = frozenset(i.gl_id for i in uncleared if i.bank_amount > 0)
    oc = frozenset(i.gl_id for i in uncleared if i.bank_amount < 0)
    unrecorded = frozenset(i.bank_id for i in chosen)
    groups = tuple(frozenset({s.gl_id, c.gl_id}) for s, c in zip(dup_sources, duplicates, strict=True))
    errors = frozenset((i.gl_id, i.bank_id, i.bank_amount - i.gl_amount) for i in transposed)
    adjusted_bank = bank_close + sum(i.bank_amount for i in uncleared)
    adjusted_book = (
        book_close
        + sum(i.bank_amount for i in chosen)
        - sum(c.gl_amount for c in duplicates)
        + sum(e[2] for e in errors)
    )
    if adjusted_bank != adjusted_book:
        raise AssertionError(f"instance {index}: reconciliation does not balance")
    if any(i.kind == "eft" for i in uncleared):
        raise AssertionError(f"instance {index}: an EFT did not clear")

    files = {
        "bank_statement.csv": _csv(
            ["date", "txn_id", "description", "reference", "withdrawal", "deposit", "balance"], bank_rows_out
        ),
        "general_ledger.csv": _csv(
            ["entry_id", "date", "description", "reference", "debit", "credit", "balance"], gl_rows_out
        ),
        "prior_outstanding.csv": _csv(["entry_id", "date", "type", "reference", "amount"], prior_rows),
    }
    values = {
        "company": company,
        "bank": bank,
        "period": month_name,
        "period_start": first.isoformat(),
        "period_end": last.isoformat(),
        "prior_period_end": prior_end.isoformat(),
        "bank_opening": money(bank_open),
        "bank_closing": money(bank_close),
        "book_opening": money(book_open),
        "book_closing": money(book_close),
    }
    answer = AnswerKey(dit, oc, unrecorded, groups, errors, adjusted_bank)
    stats = {
        "bank_rows": len(bank_rows),
        "ledger_rows": len(ledger),
        "dit": len(dit),
        "oc": len(oc),
        "unrecorded": len(unrecorded),
        "duplicates": len(groups),
        "errors": len(errors),
    }
    return Instance(index, files, values, answer, stats)


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
