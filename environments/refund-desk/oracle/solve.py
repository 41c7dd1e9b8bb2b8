"""Reference solution for refund-desk: apply the refund policy to the ticket and record the outcome."""

from __future__ import annotations

import json
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

CENT = Decimal("0.01")
CHANGE_OF_MIND = {
    "electronics": (15, Decimal("0.15")),
    "home": (30, Decimal("0.10")),
    "apparel": (30, Decimal("0")),
    "books": (30, Decimal("0")),
}
FAULT_DAYS = {"damaged": 30, "wrong_item": 30, "defective": 90}


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def dec(number: Any) -> Decimal:
    return Decimal(str(number))


def decide(
    req: dict[str, Any],
    order: dict[str, Any],
    item: dict[str, Any],
    customer: dict[str, Any],
    today: date,
    shipping_done: set[str],
) -> tuple[str, int, Decimal, bool]:
    """Return (decision, quantity, amount, shipping included) for one live request."""
    if order["customer_id"] != customer["customer_id"]:
        return "DENY_NOT_OWNER", 0, Decimal(0), False
    left = item["quantity"] - item["refunded_quantity"]
    if left <= 0:
        return "DENY_ALREADY_REFUNDED", 0, Decimal(0), False
    qty = min(req["quantity"], left)
    price = dec(item["unit_price"]) * qty
    if order["status"] == "processing":
        return "APPROVE", qty, price, False
    if order["status"] == "shipped":
        days = (today - date.fromisoformat(order["shipped_on"])).days
        if req["reason"] == "not_received" and days >= 10:
            ship = order["order_id"] not in shipping_done
            return "APPROVE", qty, price + (dec(order["shipping_fee"]) if ship else 0), ship
        return "DENY_IN_TRANSIT", 0, Decimal(0), False
    days = (today - date.fromisoformat(order["delivered_on"])).days
    if req["reason"] == "not_received":
        return "CARRIER_CLAIM", 0, Decimal(0), False
    if item["category"] == "gift-card":
        return "DENY_FINAL_SALE", 0, Decimal(0), False
    if req["reason"] in FAULT_DAYS:
        if days <= FAULT_DAYS[req["reason"]]:
            return "APPROVE", qty, price, False
        return "DENY_WINDOW", 0, Decimal(0), False
    if item["final_sale"] or item["category"] not in CHANGE_OF_MIND:
        return "DENY_FINAL_SALE", 0, Decimal(0), False
    window, rate = CHANGE_OF_MIND[item["category"]]
    if days > window:
        return "DENY_WINDOW", 0, Decimal(0), False
    fee = Decimal(0) if customer["tier"] == "gold" else cents(price * rate)
    return "APPROVE", qty, price - fee, False


def main() -> None:
    work = Path.cwd()
    ticket = json.loads((work / "ticket.json").read_text())
    doc = json.loads((work / "orders.json").read_text())
    customers = {c["customer_id"]: c for c in json.loads((work / "customers.json").read_text())["customers"]}
    customer = customers[ticket["customer_id"]]
    today = date.fromisoformat(ticket["opened_on"])
    limit = dec(ticket["handler"]["approval_limit"])
    orders = {o["order_id"]: o for o in doc["orders"]}
    requests = [r for m in ticket["messages"] for r in m["requests"]]
    withdrawn = {w for m in ticket["messages"] for w in m.get("withdraw", [])}
    requests.sort(key=lambda r: int(r["request_id"].lstrip("R")))
    shipping_done: set[str] = set()
    decisions: list[dict[str, Any]] = []
    total = Decimal(0)
    for req in requests:
        order = orders[req["order_id"]]
        item = next(i for i in order["items"] if i["sku"] == req["sku"])
        if req["request_id"] in withdrawn:
            code, qty, amount, ship = "WITHDRAWN", 0, Decimal(0), False
        else:
            code, qty, amount, ship = decide(req, order, item, customer, today, shipping_done)
        amount = cents(amount)
        if code == "APPROVE" and amount > limit:
            code, qty, amount, ship = "ESCALATE", 0, Decimal(0), False
        if code == "APPROVE":
            item["refunded_quantity"] += qty
            order["refund_total"] = float(cents(dec(order["refund_total"]) + amount))
            if ship:
                shipping_done.add(order["order_id"])
            total += amount
        decisions.append({"request_id": req["request_id"], "decision": code, "quantity": qty, "amount": float(amount)})
    (work / "orders.json").write_text(json.dumps(doc, indent=2) + "\n")
    reply = {"ticket_id": ticket["ticket_id"], "decisions": decisions, "total_refund": float(cents(total))}
    (work / "ticket_reply.json").write_text(json.dumps(reply, indent=2) + "\n")


if __name__ == "__main__":
    main()
