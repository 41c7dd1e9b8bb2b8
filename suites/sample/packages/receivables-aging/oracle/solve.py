"""Reference solution for receivables-aging: apply the receipts and bucket the open invoices by days past due."""

from __future__ import annotations

import csv
import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

TERM_DAYS = {"Due on receipt": 0, "Net 15": 15, "Net 30": 30, "Net 45": 45, "Net 60": 60}
COLUMNS = ["current", "days_1_30", "days_31_60", "days_61_90", "days_over_90"]


def read(name: str) -> list[dict[str, str]]:
    with Path(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def report_date() -> dt.date:
    """The report date, as the controller's memo states it."""
    memo = Path("close_memo.txt").read_text(encoding="utf-8")
    found = re.search(r"as at (\d{4}-\d{2}-\d{2})", memo)
    assert found, "close_memo.txt names no report date"
    return dt.date.fromisoformat(found.group(1))


def bucket(days: int) -> str:
    if days <= 0:
        return "current"
    if days <= 30:
        return "days_1_30"
    if days <= 60:
        return "days_31_60"
    if days <= 90:
        return "days_61_90"
    return "days_over_90"


def solve(report_date: dt.date) -> None:
    invoices = {}
    for row in read("invoices.csv"):
        date = dt.date.fromisoformat(row["invoice_date"])
        if row["status"] == "posted" and date <= report_date:
            due = date + dt.timedelta(days=TERM_DAYS[row["terms"]])
            invoices[row["invoice_id"]] = {"customer": row["customer_id"], "due": due, "open": Decimal(row["amount"])}
    pool: dict[str, Decimal] = {}
    for row in read("receipts.csv"):
        if dt.date.fromisoformat(row["received_on"]) > report_date:
            continue
        if row["invoice_id"]:
            invoices[row["invoice_id"]]["open"] -= Decimal(row["amount"])
        else:
            pool[row["customer_id"]] = pool.get(row["customer_id"], Decimal(0)) + Decimal(row["amount"])
    for iid in sorted(invoices, key=lambda i: (invoices[i]["due"], i)):
        inv = invoices[iid]
        take = min(pool.get(inv["customer"], Decimal(0)), inv["open"])
        inv["open"] -= take
        pool[inv["customer"]] = pool.get(inv["customer"], Decimal(0)) - take
    report: dict[str, dict[str, Decimal]] = {}
    for inv in invoices.values():
        if inv["open"]:
            row = report.setdefault(inv["customer"], dict.fromkeys(COLUMNS, Decimal(0)))
            row[bucket((report_date - inv["due"]).days)] += inv["open"]
    with Path("aging_report.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["customer_id", *COLUMNS, "total"])
        for customer in sorted(report):
            amounts = [report[customer][c] for c in COLUMNS]
            writer.writerow([customer, *(f"{a:.2f}" for a in amounts), f"{sum(amounts):.2f}"])


if __name__ == "__main__":
    solve(report_date())
