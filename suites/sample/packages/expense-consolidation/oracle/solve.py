"""Reference solution for expense-consolidation: parse every claim format, apply the policy, total by category."""

from __future__ import annotations

import csv
import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

CENT = Decimal("0.01")


def number(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def from_csv(path: Path) -> list[tuple]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [(r["employee_id"], dt.date.fromisoformat(r["date"]), r["receipt_id"], r["category"].lower(),
                 number(r["amount"]), r["currency"]) for r in csv.DictReader(handle)]


def from_txt(path: Path) -> list[tuple]:
    text = path.read_text(encoding="utf-8")
    employee = re.search(r"^Employee: .*\((E\d+)\)", text, flags=re.MULTILINE).group(1)
    line = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+(R-\d+)\s+(\w+)\s+([\d,.]+) ([A-Z]{3})\s", flags=re.MULTILINE)
    return [(employee, dt.date.fromisoformat(d), rid, cat.lower(), number(amount), cur)
            for d, rid, cat, amount, cur in line.findall(text)]


def from_md(path: Path) -> list[tuple]:
    text = path.read_text(encoding="utf-8")
    employee = re.search(r"Employee ID: \**(E\d+)", text).group(1)
    found = []
    for row in text.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"\d{2}/\d{2}/\d{4}", cells[0]):
            day, month, year = map(int, cells[0].split("/"))
            currency, amount = cells[4].split()
            found.append((employee, dt.date(year, month, day), cells[1], cells[2].lower(), number(amount), currency))
    return found


def policy() -> tuple[set[str], Decimal, Decimal]:
    text = Path("policy.md").read_text(encoding="utf-8")
    excluded = {c.strip() for c in re.search(r"Not reimbursable: (.*?)\.\n", text).group(1).split(",")}
    meals = Decimal(re.search(r"Meals\.\*\* At most \$(\d+)", text).group(1))
    lodging = Decimal(re.search(r"Lodging\.\*\* At most \$(\d+)", text).group(1))
    return excluded, meals, lodging


def main() -> None:
    excluded, meal_cap, lodging_cap = policy()
    with Path("fx_rates.csv").open(newline="", encoding="utf-8") as handle:
        rates = {r["currency"]: Decimal(r["usd_per_unit"]) for r in csv.DictReader(handle)}
    readers = {".csv": from_csv, ".txt": from_txt, ".md": from_md}
    receipts = {}
    for path in sorted(Path("claims").iterdir()):
        for employee, date, rid, category, amount, currency in readers[path.suffix](path):
            receipts.setdefault((employee, rid), (date, category, amount, currency))
    daily: dict[tuple, Decimal] = {}
    for (employee, _), (date, category, amount, currency) in receipts.items():
        if category in excluded:
            continue
        usd = (amount * rates[currency]).quantize(CENT, rounding=ROUND_HALF_UP)
        daily[(employee, category, date)] = daily.get((employee, category, date), Decimal(0)) + usd
    caps = {"meals": meal_cap, "lodging": lodging_cap}
    totals: dict[tuple[str, str], Decimal] = {}
    for (employee, category, _), amount in daily.items():
        allowed = min(amount, caps.get(category, amount))
        totals[(employee, category)] = totals.get((employee, category), Decimal(0)) + allowed
    with Path("reimbursement.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["employee_id", "category", "amount_usd"])
        writer.writerows([e, c, f"{a:.2f}"] for (e, c), a in sorted(totals.items()) if a)


if __name__ == "__main__":
    main()
