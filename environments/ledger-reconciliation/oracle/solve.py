"""Reference solution: reconcile bank_statement.csv against general_ledger.csv and prior_outstanding.csv.

Works only from the workspace files, as an agent would: match on normalised reference and amount, classify what is
left, and compute both adjusted balances. Writes reconciliation.json in the current directory.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path


def cents(text: str) -> int:
    """Parse a 2-decimal amount (empty means zero) into cents."""
    return int(Decimal(text.strip() or "0") * 100)


def money(value: int) -> str:
    """Format cents as a plain 2-decimal string."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    return f"{sign}{value // 100}.{value % 100:02d}"


def norm(ref: str) -> str:
    """Normalise a reference: cheque serials are compared as numbers."""
    ref = ref.strip().upper()
    return str(int(ref)) if ref.isdigit() else ref


def rows(name: str) -> list[dict[str, str]]:
    """Read a CSV file of the workspace as dicts."""
    with Path(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def main() -> None:
    """Reconcile and write reconciliation.json."""
    bank = rows("bank_statement.csv")
    ledger = rows("general_ledger.csv")
    prior = rows("prior_outstanding.csv")
    bank_close = cents(bank[-1]["balance"]) if bank else 0
    book_close = cents(ledger[-1]["balance"]) if ledger else 0

    bank_by_ref: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in bank:
        bank_by_ref[norm(row["reference"])].append((row["txn_id"], cents(row["deposit"]) - cents(row["withdrawal"])))
    book_by_ref: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in ledger:
        book_by_ref[norm(row["reference"])].append((row["entry_id"], cents(row["debit"]) - cents(row["credit"])))
    for row in prior:
        amount = cents(row["amount"])
        signed = -amount if row["type"] == "outstanding_cheque" else amount
        book_by_ref[norm(row["reference"])].append((row["entry_id"], signed))

    transit: list[str] = []
    cheques: list[str] = []
    unrecorded: list[str] = []
    duplicates: list[str] = []
    errors: list[dict[str, str]] = []
    adjust_bank = 0
    adjust_book = 0
    for ref in sorted(set(bank_by_ref) | set(book_by_ref)):
        bank_items = list(bank_by_ref.get(ref, []))
        book_items = list(book_by_ref.get(ref, []))
        matched: list[int] = []
        for txn_id, amount in list(bank_items):
            hit = next((b for b in book_items if b[1] == amount), None)
            if hit is not None:
                book_items.remove(hit)
                bank_items.remove((txn_id, amount))
                matched.append(amount)
        for entry_id, amount in list(book_items):
            if amount in matched:  # the same posting again: a duplicate entry
                duplicates.append(entry_id)
                adjust_book -= amount
                book_items.remove((entry_id, amount))
        while bank_items and book_items:  # same reference, different amount: the books recorded it wrongly
            (txn_id, bank_amount), (entry_id, book_amount) = bank_items.pop(0), book_items.pop(0)
            errors.append({"ledger_id": entry_id, "bank_id": txn_id, "correction": money(bank_amount - book_amount)})
            adjust_book += bank_amount - book_amount
        for txn_id, amount in bank_items:
            unrecorded.append(txn_id)
            adjust_book += amount
        for entry_id, amount in book_items:
            (transit if amount > 0 else cheques).append(entry_id)
            adjust_bank += amount

    result = {
        "deposits_in_transit": sorted(transit),
        "outstanding_cheques": sorted(cheques),
        "unrecorded_bank_items": sorted(unrecorded),
        "duplicate_ledger_entries": sorted(duplicates),
        "amount_errors": errors,
        "adjusted_bank_balance": money(bank_close + adjust_bank),
        "adjusted_book_balance": money(book_close + adjust_book),
    }
    Path("reconciliation.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
