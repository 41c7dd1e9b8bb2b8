"""Verifier for refund-desk: regenerate the ticket, apply the policy and check the agent's final state exactly.

Expected decisions and the expected final orders.json are recomputed from ARENA_INSTANCE; the workspace's
ticket.json and customers.json are never read, so forging them changes nothing. The reward is 1.0 only when
ticket_reply.json has every decision, quantity and amount right (to the cent) and orders.json equals the original
order data with exactly the approved refunds applied; otherwise 0.0 with the reasons in details.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

MAX_BYTES = 4 * 1024 * 1024
MONEY_TOLERANCE = 1e-6  # amounts must equal the cent value up to float representation noise
CODES = {
    "APPROVE",
    "DENY_NOT_OWNER",
    "DENY_ALREADY_REFUNDED",
    "DENY_IN_TRANSIT",
    "CARRIER_CLAIM",
    "DENY_FINAL_SALE",
    "DENY_WINDOW",
    "ESCALATE",
    "WITHDRAWN",
}
DECISION_KEYS = {"request_id", "decision", "quantity", "amount"}


class Rejected(Exception):
    """The agent's output is unusable; the message says why."""


def short(value: object, limit: int = 80) -> str:
    """Trim agent-controlled text before it goes into details (which are capped at 64 KiB)."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def read_json(path: Path) -> Any:
    """Read and parse one of the agent's JSON files defensively (regular file only, size-capped)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Rejected(f"{path.name} does not exist") from None
    except OSError as exc:
        raise Rejected(f"cannot stat {path.name}: {exc.__class__.__name__}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Rejected(f"{path.name} is not a regular file")
    if info.st_size > MAX_BYTES:
        raise Rejected(f"{path.name} is larger than {MAX_BYTES} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise Rejected(f"cannot read {path.name}: {exc.__class__.__name__}") from None
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{path.name} is larger than {MAX_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Rejected(f"{path.name} is not valid UTF-8 JSON: {exc.__class__.__name__}") from None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def same_money(actual: Any, expected: float | Decimal) -> bool:
    return is_number(actual) and abs(float(actual) - float(expected)) <= MONEY_TOLERANCE


def difference(expected: Any, actual: Any, where: str) -> str | None:
    """The first difference between an expected JSON value and the agent's, or None when they agree.

    Floats in the expected data are money and compare to the cent; everything else must match exactly and with the
    same JSON type.
    """
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        ok = type(actual) is type(expected) and actual == expected
        return None if ok else f"{where}: expected {expected!r}, found {short(repr(actual), 60)}"
    if isinstance(expected, int):
        ok = isinstance(actual, int) and not isinstance(actual, bool) and actual == expected
        return None if ok else f"{where}: expected {expected}, found {short(repr(actual), 60)}"
    if isinstance(expected, float):
        ok = same_money(actual, expected)
        return None if ok else f"{where}: expected {expected}, found {short(repr(actual), 60)}"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object"
        if set(actual) != set(expected):
            extra = sorted(short(k, 30) for k in set(actual) - set(expected))[:5]
            return f"{where}: keys differ (missing {sorted(set(expected) - set(actual))}, extra {extra})"
        for key in expected:
            found = difference(expected[key], actual[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected a list of {len(expected)}"
        for n, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = difference(e, a, f"{where}[{n}]")
            if found:
                return found
        return None
    raise TypeError(f"unexpected type in expected data at {where}")


def check_orders(expected: dict[str, Any], actual: Any) -> list[str]:
    """Compare the agent's orders.json to the expected document; orders are matched by order_id."""
    if not isinstance(actual, dict) or set(actual) != {"orders"} or not isinstance(actual["orders"], list):
        return ['orders.json must stay an object with the single key "orders" holding a list']
    want = {o["order_id"]: o for o in expected["orders"]}
    got: dict[str, Any] = {}
    for n, order in enumerate(actual["orders"]):
        oid = order.get("order_id") if isinstance(order, dict) else None
        if not isinstance(oid, str) or oid in got:
            return [f"orders[{n}] has a missing or repeated order_id"]
        got[oid] = order
    problems = []
    if set(got) != set(want):
        problems.append(f"order ids differ: {len(set(want) - set(got))} missing, {len(set(got) - set(want))} added")
    for oid in sorted(set(want) & set(got)):
        found = difference(want[oid], got[oid], oid)
        if found:
            problems.append(found)
    return problems[:12]


def check_reply(inst: generate.Instance, decisions: list[dict[str, Any]], actual: Any) -> list[str]:
    """Compare ticket_reply.json to the expected decisions."""
    if not isinstance(actual, dict) or set(actual) != {"ticket_id", "decisions", "total_refund"}:
        return ["ticket_reply.json must be an object with exactly ticket_id, decisions and total_refund"]
    problems = []
    if actual["ticket_id"] != inst.ticket_id:
        problems.append(f"ticket_id: expected {inst.ticket_id}, found {short(actual['ticket_id'], 40)}")
    rows = actual["decisions"]
    if not isinstance(rows, list):
        return [*problems, "decisions must be a list"]
    got: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != DECISION_KEYS:
            return [*problems, f"decisions[{n}] must have exactly the keys {sorted(DECISION_KEYS)}"]
        rid = row["request_id"]
        if not isinstance(rid, str) or rid in got:
            return [*problems, f"decisions[{n}] has a missing or repeated request_id"]
        if row["decision"] not in CODES:
            return [*problems, f"decisions[{n}].decision is not a known code: {short(row['decision'], 40)}"]
        if not isinstance(row["quantity"], int) or isinstance(row["quantity"], bool):
            return [*problems, f"decisions[{n}].quantity must be an integer"]
        if not is_number(row["amount"]):
            return [*problems, f"decisions[{n}].amount must be a number"]
        got[rid] = row
    want = {d["request_id"]: d for d in decisions}
    if set(got) != set(want):
        problems.append(
            f"request ids differ: missing {sorted(set(want) - set(got))}, "
            f"unexpected {[short(r, 20) for r in sorted(set(got) - set(want))][:10]}"
        )
    for rid in sorted(set(want) & set(got), key=lambda r: int(r[1:])):
        w, g = want[rid], got[rid]
        if g["decision"] != w["decision"]:
            problems.append(f"{rid}: decision {g['decision']}, expected {w['decision']}")
        elif g["quantity"] != w["quantity"]:
            problems.append(f"{rid}: quantity {g['quantity']} is wrong")
        elif not same_money(g["amount"], w["amount"]):
            problems.append(f"{rid}: amount {short(g['amount'], 30)} is wrong")
    total = sum((d["amount"] for d in decisions), Decimal(0))
    if not same_money(actual["total_refund"], total):
        problems.append(f"total_refund {short(actual['total_refund'], 30)} is wrong")
    return problems


def score(workspace: Path, index: int) -> dict[str, Any]:
    inst = generate.build_instance(index)
    decisions, final_orders = generate.expected_outcome(inst)
    details: dict[str, Any] = {"requests": len(decisions)}
    problems: list[str] = []
    try:
        problems += [
            f"ticket_reply.json: {p}" for p in check_reply(inst, decisions, read_json(workspace / "ticket_reply.json"))
        ]
    except Rejected as exc:
        problems.append(str(exc))
    try:
        problems += [f"orders.json: {p}" for p in check_orders(final_orders, read_json(workspace / "orders.json"))]
    except Rejected as exc:
        problems.append(str(exc))
    details["problems"] = problems
    details["result"] = "exact match" if not problems else "mismatch"
    return {"reward": 0.0 if problems else 1.0, "details": details}


def main() -> None:
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    result = score(workspace, index)
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
