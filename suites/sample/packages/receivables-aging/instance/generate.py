"""Generate one accounts-receivable sub-ledger (customers, invoices, cash receipts) to be aged at a month end.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes customers.csv, invoices.csv and receipts.csv into
ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier imports ``build_instance`` and
``expected_aging`` to rebuild the instance and its aging report without reading the workspace.
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
from dataclasses import dataclass, field
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/receivables-aging/v1"
BUCKETS = ("current", "days_1_30", "days_31_60", "days_61_90", "days_over_90")
HEADER = ("customer_id", *BUCKETS, "total")
TERMS = {"Due on receipt": 0, "Net 15": 15, "Net 30": 30, "Net 45": 45, "Net 60": 60}
BOUNDARY_DAYS = (0, 1, 30, 31, 60, 61, 90, 91)
SELLERS = (
    "Kessler Industrial Supply", "Wavecrest Media Group", "Tallgrass Seed Co-op", "Brightwater Lab Services",
    "Northgate Fasteners", "Pinecone Software Ltd", "Harlow & Finch Printing", "Solano Cold Storage",
)
CUSTOMER_WORDS = (
    "Alder", "Basalt", "Cinder", "Dune", "Ember", "Fjord", "Garnet", "Heath", "Ivory", "Jetty", "Kiln", "Lagoon",
    "Mesa", "Nimbus", "Onyx", "Prairie", "Quill", "Rowan", "Saffron", "Thistle", "Umber", "Vale", "Willow", "Zephyr",
)
CUSTOMER_KINDS = (
    "Builders", "Dental", "Foods", "Hotels", "Logistics", "Motors", "Outfitters", "Pharmacy", "Realty", "Studios",
    "Textiles", "Veterinary",
)
REGIONS = ("North", "South", "East", "West", "Central")
CONTROLLERS = ("Dana Whitfield", "Marcus Oyelaran", "Priya Castellanos", "Tomas Lindqvist", "Grace Nakamura")


@dataclass(frozen=True)
class Invoice:
    invoice_id: str
    customer_id: str
    invoice_date: dt.date
    terms: str
    amount: int  # cents
    status: str  # posted or void

    @property
    def due_date(self) -> dt.date:
        return self.invoice_date + dt.timedelta(days=TERMS[self.terms])


@dataclass(frozen=True)
class Receipt:
    receipt_id: str
    customer_id: str
    date: dt.date
    amount: int  # cents
    invoice_id: str  # "" when received on account


@dataclass
class Instance:
    index: int
    seller: str
    as_of: dt.date
    tier: str
    customers: list[tuple[str, str, str]]  # (customer_id, name, region)
    invoices: list[Invoice]
    receipts: list[Receipt]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def money(cents: int) -> str:
    """Cents as a plain amount with two decimals."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def bucket_of(days_past_due: int) -> int:
    """Index into BUCKETS for a number of days past due (zero or less is current)."""
    if days_past_due <= 0:
        return 0
    return min(4, (days_past_due - 1) // 30 + 1)


def expected_aging(inst: Instance) -> dict[str, tuple[int, ...]]:
    """customer_id -> (five bucket amounts, total) in cents, for every customer with an open balance."""
    counted = {i.invoice_id: i for i in inst.invoices if i.status == "posted" and i.invoice_date <= inst.as_of}
    open_cents = {iid: inv.amount for iid, inv in counted.items()}
    on_account: dict[str, int] = {}
    for r in inst.receipts:
        if r.date > inst.as_of:
            continue
        if r.invoice_id:
            open_cents[r.invoice_id] -= r.amount
        else:
            on_account[r.customer_id] = on_account.get(r.customer_id, 0) + r.amount
    by_age = sorted(counted.values(), key=lambda i: (i.due_date, i.invoice_id))
    for inv in by_age:
        take = min(on_account.get(inv.customer_id, 0), open_cents[inv.invoice_id])
        open_cents[inv.invoice_id] -= take
        on_account[inv.customer_id] = on_account.get(inv.customer_id, 0) - take
    assert all(v >= 0 for v in open_cents.values()) and not any(on_account.values())
    report: dict[str, list[int]] = {}
    for iid, cents in open_cents.items():
        if cents:
            inv = counted[iid]
            row = report.setdefault(inv.customer_id, [0] * 5)
            row[bucket_of((inst.as_of - inv.due_date).days)] += cents
    return {cid: (*row, sum(row)) for cid, row in report.items()}


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _csv(header: tuple[str, ...], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _customers(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    ids = rng.sample(range(10000, 99999), count)
    names = rng.sample([f"{w} {k}" for w in CUSTOMER_WORDS for k in CUSTOMER_KINDS], count)
    return [(f"C{i}", n, rng.choice(REGIONS)) for i, n in zip(ids, names, strict=True)]


def _invoice_plans(rng: random.Random, inst: Instance, per_customer: tuple[int, int]) -> list[tuple]:
    """(customer_id, invoice_date, terms, amount, status) for every invoice, before numbering."""
    plans = []
    for cid, _, _ in inst.customers:
        for n in range(rng.randint(*per_customer)):
            terms = rng.choice(list(TERMS))
            past_due = rng.choice(BOUNDARY_DAYS) if rng.random() < 0.25 else rng.randint(-TERMS[terms], 150)
            past_due = max(past_due, -TERMS[terms])
            date = inst.as_of - dt.timedelta(days=past_due + TERMS[terms])
            status = "void" if n and rng.random() < 0.08 else "posted"
            plans.append((cid, date, terms, rng.randint(120, 18000) * 100 + rng.choice([0, 0, rng.randint(1, 99)]),
                          status))
        if rng.random() < 0.2:  # billed after the report date: not part of this aging
            date = inst.as_of + dt.timedelta(days=rng.randint(1, 12))
            plans.append((cid, date, rng.choice(list(TERMS)), rng.randint(200, 9000) * 100, "posted"))
    return plans


def _receipts(rng: random.Random, inst: Instance) -> list[tuple]:
    """(customer_id, date, amount, invoice_id) for every receipt, before numbering."""
    found: list[tuple] = []
    open_after_named: dict[str, int] = {}
    for inv in inst.invoices:
        if inv.status != "posted" or inv.invoice_date > inst.as_of:
            continue
        span = (inst.as_of - inv.invoice_date).days
        roll = rng.random()
        left = inv.amount
        if roll < 0.3:
            found.append((inv.customer_id, inv.invoice_date + dt.timedelta(days=rng.randint(0, span)), inv.amount,
                          inv.invoice_id))
            left = 0
        elif roll < 0.45:
            part = rng.randint(1, inv.amount - 1) // 100 * 100 or 100
            found.append((inv.customer_id, inv.invoice_date + dt.timedelta(days=rng.randint(0, span)), part,
                          inv.invoice_id))
            left -= part
        elif roll < 0.55:  # paid after the report date: still open at the report date
            found.append((inv.customer_id, inst.as_of + dt.timedelta(days=rng.randint(1, 20)), inv.amount,
                          inv.invoice_id))
        open_after_named[inv.customer_id] = open_after_named.get(inv.customer_id, 0) + left
    for cid, balance in sorted(open_after_named.items()):
        if balance > 0 and rng.random() < 0.4:
            total = rng.randint(1, balance)
            total = total if rng.random() < 0.3 else max(100, total // 10000 * 10000)
            total = min(total, balance)
            parts = [total] if rng.random() < 0.6 or total < 200 else [total // 2, total - total // 2]
            for part in parts:
                found.append((cid, inst.as_of - dt.timedelta(days=rng.randint(0, 40)), part, ""))
        if rng.random() < 0.1:  # received on account after the report date
            found.append((cid, inst.as_of + dt.timedelta(days=rng.randint(1, 9)), rng.randint(5, 90) * 100, ""))
    return found


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    n_customers, per_customer = {"small": ((2, 3), (1, 3)), "medium": ((4, 7), (2, 5)),
                                 "large": ((8, 14), (3, 8))}[tier]
    year, month = rng.randint(2023, 2025), rng.randint(1, 12)
    as_of = dt.date(year, month, calendar.monthrange(year, month)[1])
    inst = Instance(index, rng.choice(SELLERS), as_of, tier, [], [], [])
    inst.customers = _customers(rng, rng.randint(*n_customers))
    plans = sorted(_invoice_plans(rng, inst, per_customer), key=lambda p: (p[1], p[0]))
    first = rng.randint(20000, 60000)
    inst.invoices = [Invoice(f"INV-{first + n}", cid, date, terms, amount, status)
                     for n, (cid, date, terms, amount, status) in enumerate(plans)]
    receipts = sorted(_receipts(rng, inst), key=lambda r: (r[1], r[0], r[3]))
    start = rng.randint(1000, 8000)
    inst.receipts = [Receipt(f"RC-{start + n}", cid, date, amount, iid)
                     for n, (cid, date, amount, iid) in enumerate(receipts)]
    if not expected_aging(inst):  # everything settled: the customer of the newest counted invoice has not paid
        newest = max((i for i in inst.invoices if i.status == "posted" and i.invoice_date <= as_of),
                     key=lambda i: i.invoice_id)
        inst.receipts = [r for r in inst.receipts if r.customer_id != newest.customer_id]
    inst.files = {
        "customers.csv": _csv(("customer_id", "name", "region"), [list(c) for c in inst.customers]),
        "invoices.csv": _csv(
            ("invoice_id", "customer_id", "invoice_date", "terms", "amount", "status"),
            [[i.invoice_id, i.customer_id, i.invoice_date.isoformat(), i.terms, money(i.amount), i.status]
             for i in inst.invoices]),
        "receipts.csv": _csv(
            ("receipt_id", "customer_id", "received_on", "amount", "invoice_id"),
            [[r.receipt_id, r.customer_id, r.date.isoformat(), money(r.amount), r.invoice_id]
             for r in inst.receipts]),
    }
    inst.files["close_memo.txt"] = (
        f"From: {rng.choice(CONTROLLERS)}, Controller\nTo: Credit department\n"
        f"Subject: {as_of.strftime('%B %Y')} close - customer aging\n\n"
        f"Please prepare the customer aging as at {as_of.isoformat()} (report date) from the sub-ledger exports\n"
        "in this folder, following the usual rules. Thanks.\n"
    )
    inst.prompt = {
        "seller": inst.seller,
        "as_of": as_of.isoformat(),
        "customer_count": str(len(inst.customers)),
        "invoice_count": str(len(inst.invoices)),
        "receipt_count": str(len(inst.receipts)),
    }
    return inst


def main() -> None:
    """Write the instance named by ARENA_INSTANCE into the workspace and print its prompt values."""
    inst = build_instance(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in inst.files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    print(json.dumps(inst.prompt, sort_keys=True))


if __name__ == "__main__":
    main()
