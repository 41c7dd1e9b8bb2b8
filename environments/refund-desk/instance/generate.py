"""Instance generator for refund-desk: a customer's refund ticket, the order database and the help desk record.

Run as a script it writes /workspace/orders.json, /workspace/customers.json and /workspace/ticket.json and prints
the prompt values. The verifier imports `build_instance` and `expected_outcome` to regenerate the ground truth.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

CENT = Decimal("0.01")
LOST_AFTER_DAYS = 10
FAULT_WINDOW = {"damaged": 30, "wrong_item": 30, "defective": 90}
# category -> (change-of-mind window in days, restocking fee rate); None: final sale for a change of mind.
CATEGORY_RULES: dict[str, tuple[int, Decimal] | None] = {
    "electronics": (15, Decimal("0.15")),
    "home": (30, Decimal("0.10")),
    "apparel": (30, Decimal("0")),
    "books": (30, Decimal("0")),
    "personal-care": None,
    "gift-card": None,
}
CATALOG: list[tuple[str, str, int, int]] = [
    ("Wireless Earbuds", "electronics", 39, 149),
    ("Bluetooth Speaker", "electronics", 29, 129),
    ("USB-C Docking Hub", "electronics", 35, 99),
    ("27-inch 4K Monitor", "electronics", 229, 449),
    ("Mechanical Keyboard", "electronics", 69, 179),
    ("Smartwatch", "electronics", 149, 399),
    ("Noise-Cancelling Headphones", "electronics", 179, 379),
    ("Portable SSD 1TB", "electronics", 79, 159),
    ("1080p Webcam", "electronics", 39, 89),
    ("E-reader", "electronics", 99, 229),
    ("Wireless Mouse", "electronics", 19, 69),
    ("Power Bank 20000mAh", "electronics", 25, 59),
    ("Rain Jacket", "apparel", 59, 189),
    ("Merino Sweater", "apparel", 49, 129),
    ("Running Shoes", "apparel", 69, 169),
    ("Slim Fit Jeans", "apparel", 39, 99),
    ("Wool Socks 3-Pack", "apparel", 12, 29),
    ("Leather Belt", "apparel", 25, 69),
    ("Down Vest", "apparel", 79, 199),
    ("Linen Shirt", "apparel", 29, 79),
    ("Ceramic Mug Set", "home", 19, 49),
    ("LED Desk Lamp", "home", 25, 89),
    ("Cast Iron Skillet", "home", 29, 79),
    ("Throw Blanket", "home", 29, 89),
    ("Espresso Machine", "home", 249, 599),
    ("HEPA Air Purifier", "home", 119, 329),
    ("Cookware Set 10-Piece", "home", 129, 349),
    ("Memory Foam Pillow", "home", 29, 69),
    ("Robot Vacuum", "home", 199, 499),
    ("Chef's Knife", "home", 39, 129),
    ("Hardcover Novel", "books", 18, 35),
    ("Cookbook", "books", 22, 45),
    ("Travel Guide", "books", 15, 32),
    ("Graphic Novel Box Set", "books", 45, 99),
    ("Field Guide to Birds", "books", 19, 39),
    ("Electric Toothbrush", "personal-care", 39, 129),
    ("Hair Dryer", "personal-care", 35, 149),
    ("Beard Trimmer", "personal-care", 29, 89),
    ("Skincare Starter Set", "personal-care", 25, 79),
    ("Gift Card $50", "gift-card", 50, 50),
    ("Gift Card $100", "gift-card", 100, 100),
]
FIRST = [
    "Maya",
    "Daniel",
    "Priya",
    "Lucas",
    "Amara",
    "Jonah",
    "Sofia",
    "Mateo",
    "Hannah",
    "Kenji",
    "Leila",
    "Omar",
    "Chloe",
    "Ravi",
    "Elena",
    "Samuel",
    "Nadia",
    "Tomas",
    "Aisha",
    "Felix",
    "Ingrid",
    "Jamal",
    "Keiko",
    "Luca",
]
LAST = [
    "Okafor",
    "Lindqvist",
    "Haddad",
    "Moreau",
    "Nakamura",
    "Fischer",
    "Costa",
    "Novak",
    "Brennan",
    "Iyer",
    "Kowalski",
    "Mensah",
    "Duarte",
    "Petrov",
    "Sato",
    "Whitfield",
    "Rahman",
    "Castillo",
    "Berg",
    "Adeyemi",
]
REASONS = ["damaged", "defective", "wrong_item", "not_received", "changed_mind"]
KINDS = [
    "fault",
    "com_fee",
    "com_free",
    "processing",
    "lost",
    "partial",
    "window",
    "final",
    "transit",
    "carrier",
    "refunded",
    "owner",
    "escalate",
]
KIND_WEIGHTS = [14, 10, 7, 7, 6, 6, 10, 8, 6, 5, 5, 5, 7]


@dataclass
class Request:
    """One line of the customer's return form."""

    request_id: str
    order_id: str
    sku: str
    quantity: int
    reason: str
    text: str
    designed: str = ""  # the outcome the generator aimed for (a sanity check; the rules decide)


@dataclass
class Instance:
    """A fully built instance."""

    index: int
    today: date
    ticket_id: str
    customer: dict[str, Any]
    customers: list[dict[str, Any]]
    orders: list[dict[str, Any]]
    approval_limit: Decimal
    scenes: list[list[Request]]
    withdrawn: list[str]  # request ids withdrawn in the follow-up
    withdraw_text: str
    files: dict[str, bytes] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)

    @property
    def requests(self) -> list[Request]:
        return [r for scene in self.scenes for r in scene]


def _seed(index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"refund-desk/v1/{index}".encode()).digest()[:8], "big")


def money(value: Decimal) -> float:
    """A Decimal amount as the JSON number written to files."""
    return float(value.quantize(CENT, rounding=ROUND_HALF_UP))


def restocking_fee(subtotal: Decimal, rate: Decimal) -> Decimal:
    return (subtotal * rate).quantize(CENT, rounding=ROUND_HALF_UP)


class _Maker:
    def __init__(self, rng: random.Random, today: date, limit: Decimal) -> None:
        self.rng = rng
        self.today = today
        self.limit = limit
        self.order_ids: set[str] = set()
        self.skus: dict[str, str] = {}
        self.prices: dict[str, Decimal] = {}
        for name, cat, _, _ in CATALOG:
            while True:
                sku = f"{cat[:2].upper()}-{rng.randint(1000, 9999)}"
                if sku not in self.skus.values():
                    break
            self.skus[name] = sku
        for name, _, lo, hi in CATALOG:
            if lo == hi:
                self.prices[name] = Decimal(lo)
            else:
                self.prices[name] = Decimal(rng.randint(lo, hi)) + rng.choice(
                    [Decimal("0.99"), Decimal("0.49"), Decimal("0.00"), Decimal("0.95")]
                )

    def order_id(self) -> str:
        while True:
            oid = f"ORD-{self.rng.randint(100000, 999999)}"
            if oid not in self.order_ids:
                self.order_ids.add(oid)
                return oid

    def item(self, name: str, quantity: int = 1, final_sale: bool = False, refunded: int = 0) -> dict[str, Any]:
        cat = next(c for n, c, _, _ in CATALOG if n == name)
        return {
            "sku": self.skus[name],
            "name": name,
            "category": cat,
            "unit_price": money(self.prices[name]),
            "quantity": quantity,
            "refunded_quantity": refunded,
            "final_sale": final_sale,
        }

    def pick(
        self,
        categories: list[str],
        max_total: Decimal | None = None,
        min_total: Decimal | None = None,
        quantity: int = 1,
        exclude: tuple[str, ...] = (),
    ) -> str | None:
        """A random catalogue item of the categories whose line total fits the bounds, or None if there is none."""
        names = [
            n
            for n, c, _, _ in CATALOG
            if c in categories
            and n not in exclude
            and (max_total is None or self.prices[n] * quantity <= max_total)
            and (min_total is None or self.prices[n] * quantity > min_total)
        ]
        return self.rng.choice(names) if names else None

    def order(self, customer_id: str, status: str, age_days: int, items: list[dict[str, Any]]) -> dict[str, Any]:
        """age_days: days since delivery (delivered), since shipment (shipped) or since placement (processing)."""
        rng = self.rng
        if status == "delivered":
            delivered = self.today - timedelta(days=age_days)
            shipped = delivered - timedelta(days=rng.randint(1, 5))
            placed = shipped - timedelta(days=rng.randint(0, 2))
        elif status == "shipped":
            delivered = None
            shipped = self.today - timedelta(days=age_days)
            placed = shipped - timedelta(days=rng.randint(0, 2))
        else:
            delivered = shipped = None
            placed = self.today - timedelta(days=age_days)
        refunded = sum(Decimal(str(i["unit_price"])) * i["refunded_quantity"] for i in items)
        fee = rng.choice([Decimal("0.00"), Decimal("4.99"), Decimal("5.99"), Decimal("7.95"), Decimal("9.99")])
        return {
            "order_id": self.order_id(),
            "customer_id": customer_id,
            "placed_on": placed.isoformat(),
            "status": status,
            "shipped_on": shipped.isoformat() if shipped else None,
            "delivered_on": delivered.isoformat() if delivered else None,
            "shipping_fee": money(fee),
            "items": items,
            "refund_total": money(refunded),
        }

    def filler(self, n: int, exclude: tuple[str, ...]) -> list[dict[str, Any]]:
        names = [n for n, _, _, _ in CATALOG if n not in exclude]
        return [self.item(name, self.rng.choice([1, 1, 1, 2])) for name in self.rng.sample(names, n)]


REASON_TEXT = {
    "damaged": [
        "it arrived damaged - the box was crushed and it is cracked",
        "it came with a big dent and scratches",
        "it was broken when I opened the parcel",
    ],
    "defective": [
        "it stopped working after a few days",
        "it will not power on at all",
        "it keeps failing and the seller support said it is faulty",
    ],
    "wrong_item": [
        "you sent me the wrong item (a different model)",
        "the parcel contained something else entirely",
        "I received the wrong colour and size",
    ],
    "not_received": ["it never arrived", "the parcel has not turned up", "I am still waiting for it"],
    "changed_mind": [
        "I no longer need it",
        "I changed my mind",
        "it is not what I expected and I would like to send it back",
    ],
}


def _describe(rng: random.Random, req: Request, name: str, processing: bool) -> str:
    qty = f"{req.quantity} x " if req.quantity > 1 else ""
    if processing:
        why = rng.choice(["I ordered it by mistake", "I found it cheaper elsewhere", "I no longer need it"])
        return f"{req.request_id}: Please cancel the {qty}{name} ({req.sku}) on order {req.order_id} - {why}."
    why = rng.choice(REASON_TEXT[req.reason])
    return f"{req.request_id}: Order {req.order_id}, {qty}{name} ({req.sku}): {why}. I want a refund."


def _scenario(
    m: _Maker, kind: str, cust: dict[str, Any], other: dict[str, Any], rid: list[int]
) -> tuple[list[dict[str, Any]], list[Request]]:
    """Build the order(s) and request(s) for one designed outcome."""
    rng = m.rng
    cid = cust["customer_id"]
    limit = m.limit
    base_cheap = limit - Decimal("10")

    def req(order: dict[str, Any], item: dict[str, Any], qty: int, reason: str, designed: str) -> Request:
        rid[0] += 1
        return Request(f"R{rid[0]}", order["order_id"], item["sku"], qty, reason, "", designed)

    def any_item(categories: list[str], max_total: Decimal | None = None, quantity: int = 1) -> str:
        name = m.pick(categories, max_total, quantity=quantity)
        if name is None:
            name = m.pick(["books", "apparel"], max_total, quantity=quantity)
        assert name is not None
        return name

    def finish(
        status: str,
        age: int,
        item: dict[str, Any],
        reason: str,
        designed: str,
        qty: int | None = None,
        owner: str = cid,
    ) -> tuple[list[dict[str, Any]], list[Request]]:
        items = [*m.filler(rng.randint(0, 2), (item["name"],)), item]
        rng.shuffle(items)
        order = m.order(owner, status, age, items)
        return [order], [req(order, item, qty if qty is not None else item["quantity"], reason, designed)]

    if kind == "fault":
        reason = rng.choice(["damaged", "wrong_item", "defective", "defective"])
        window = FAULT_WINDOW[reason]
        days = rng.choice([window, rng.randint(1, window), rng.randint(max(1, window - 60), window)])
        cats = ["electronics", "home", "apparel", "books", "personal-care"]
        name = any_item(cats, base_cheap)
        return finish("delivered", days, m.item(name, final_sale=rng.random() < 0.2), reason, "APPROVE")
    if kind in ("com_fee", "com_free"):
        cats = ["electronics", "home"] if kind == "com_fee" else ["apparel", "books"]
        qty = rng.choice([1, 1, 2])
        name = any_item(cats, base_cheap, quantity=qty)
        cat = next(c for n, c, _, _ in CATALOG if n == name)
        rule = CATEGORY_RULES[cat]
        assert rule is not None
        days = rng.choice([rule[0], rng.randint(1, rule[0])])
        return finish("delivered", days, m.item(name, qty), "changed_mind", "APPROVE")
    if kind == "processing":
        qty = rng.choice([1, 1, 2])
        name = any_item(
            ["electronics", "home", "apparel", "books", "personal-care", "gift-card"], base_cheap, quantity=qty
        )
        return finish(
            "processing", rng.randint(0, 2), m.item(name, qty, final_sale=rng.random() < 0.2), "changed_mind", "APPROVE"
        )
    if kind == "lost":
        days = rng.choice([LOST_AFTER_DAYS, rng.randint(LOST_AFTER_DAYS, 30)])
        budget = (base_cheap - Decimal("10")) / 2
        first = m.item(any_item(["electronics", "home", "apparel", "books"], budget))
        items = [first]
        two = rng.random() < 0.5
        if two:
            second = m.pick(["electronics", "home", "apparel", "books"], budget, exclude=(first["name"],))
            assert second is not None
            items.append(m.item(second))
        order = m.order(cid, "shipped", days, items)
        reqs = [req(order, it, 1, "not_received", "APPROVE") for it in items]
        return [order], reqs
    if kind == "partial":
        qty = rng.randint(2, 4)
        refunded = rng.randint(1, qty - 1)
        name = any_item(["apparel", "books", "home", "electronics"], base_cheap, quantity=qty - refunded)
        reason = rng.choice(["damaged", "defective", "wrong_item"])
        return finish("delivered", rng.randint(1, 30), m.item(name, qty, refunded=refunded), reason, "APPROVE", qty)
    if kind == "window":
        variant = rng.choice(["com", "com", "damaged", "defective"])
        if variant == "com":
            name = any_item(["electronics", "home", "apparel", "books"])
            cat = next(c for n, c, _, _ in CATALOG if n == name)
            rule = CATEGORY_RULES[cat]
            assert rule is not None
            days = rng.choice([rule[0] + 1, rule[0] + rng.randint(1, 45)])
            return finish("delivered", days, m.item(name), "changed_mind", "DENY_WINDOW")
        window = FAULT_WINDOW[variant]
        days = rng.choice([window + 1, window + rng.randint(1, 60)])
        name = any_item(["electronics", "home", "apparel", "personal-care"])
        return finish("delivered", days, m.item(name), variant, "DENY_WINDOW")
    if kind == "final":
        variant = rng.choice(["flag", "care", "gift"])
        if variant == "flag":
            name = any_item(["electronics", "home", "apparel", "books"])
            return finish(
                "delivered", rng.randint(1, 15), m.item(name, final_sale=True), "changed_mind", "DENY_FINAL_SALE"
            )
        if variant == "care":
            name = any_item(["personal-care"])
            return finish("delivered", rng.randint(1, 20), m.item(name), "changed_mind", "DENY_FINAL_SALE")
        name = any_item(["gift-card"])
        return finish(
            "delivered", rng.randint(1, 20), m.item(name), rng.choice(["changed_mind", "damaged"]), "DENY_FINAL_SALE"
        )
    if kind == "transit":
        name = any_item(["electronics", "home", "apparel", "books"])
        if rng.random() < 0.6:
            days = rng.choice([LOST_AFTER_DAYS - 1, rng.randint(1, LOST_AFTER_DAYS - 1)])
            return finish("shipped", days, m.item(name), "not_received", "DENY_IN_TRANSIT")
        return finish("shipped", rng.randint(1, 20), m.item(name), "changed_mind", "DENY_IN_TRANSIT")
    if kind == "carrier":
        name = any_item(["electronics", "home", "apparel", "books"])
        return finish("delivered", rng.randint(1, 20), m.item(name), "not_received", "CARRIER_CLAIM")
    if kind == "refunded":
        qty = rng.choice([1, 1, 2])
        name = any_item(["electronics", "home", "apparel", "books"])
        return finish(
            "delivered",
            rng.randint(1, 14),
            m.item(name, qty, refunded=qty),
            rng.choice(["damaged", "defective"]),
            "DENY_ALREADY_REFUNDED",
        )
    if kind == "owner":
        name = any_item(["electronics", "home", "apparel", "books"])
        return finish(
            "delivered",
            rng.randint(1, 10),
            m.item(name),
            rng.choice(["damaged", "changed_mind"]),
            "DENY_NOT_OWNER",
            owner=other["customer_id"],
        )
    if kind == "escalate":
        name = m.pick(["electronics", "home"], min_total=limit + Decimal("40"))
        if name is not None and rng.random() < 0.6:
            return finish(
                "delivered", rng.randint(1, 25), m.item(name), rng.choice(["damaged", "defective"]), "ESCALATE"
            )
        qty = rng.randint(3, 4)
        name = m.pick(["apparel", "books", "home", "electronics"], min_total=limit + Decimal("5"), quantity=qty)
        assert name is not None
        return finish("processing", rng.randint(0, 2), m.item(name, qty), "changed_mind", "ESCALATE")
    raise ValueError(kind)


def build_instance(index: int) -> Instance:
    """Build instance `index` deterministically (pure: no files are written)."""
    rng = random.Random(_seed(index))
    today = date(2024, 1, 15) + timedelta(days=rng.randint(0, 600))
    limit = Decimal(rng.choice([150, 200, 250, 300]))
    m = _Maker(rng, today, limit)
    names = set()
    customers: list[dict[str, Any]] = []
    for _ in range(rng.randint(8, 14)):
        while True:
            full = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            if full not in names:
                names.add(full)
                break
        cid = f"C-{rng.randint(10000, 99999)}"
        customers.append(
            {
                "customer_id": cid,
                "name": full,
                "email": full.lower().replace(" ", ".") + rng.choice(["@example.com", "@example.net", "@example.org"]),
                "tier": "gold" if rng.random() < 0.3 else "standard",
            }
        )
    assert len({c["customer_id"] for c in customers}) == len(customers)
    cust = customers[0]
    others = customers[1:]
    if rng.random() < 0.35:
        cust["tier"] = "gold"

    n1, n2 = rng.randint(2, 3), rng.randint(1, 2)
    kinds = rng.choices(KINDS, weights=KIND_WEIGHTS, k=n1 + n2)
    orders: list[dict[str, Any]] = []
    scenes: list[list[Request]] = [[], []]
    rid = [0]
    for k, kind in enumerate(kinds):
        new_orders, reqs = _scenario(m, kind, cust, rng.choice(others), rid)
        orders.extend(new_orders)
        scenes[0 if k < n1 else 1].extend(reqs)
    # Untouched orders of the same customer and of everyone else.
    for owner in [cust] * rng.randint(2, 4) + [rng.choice(others) for _ in range(rng.randint(10, 18))]:
        status = rng.choices(["delivered", "shipped", "processing"], weights=[7, 2, 1])[0]
        age = rng.randint(1, 120) if status == "delivered" else rng.randint(0, 12)
        items = m.filler(rng.randint(1, 3), ())
        if status == "delivered" and rng.random() < 0.15:
            items[0]["refunded_quantity"] = items[0]["quantity"]
        orders.append(m.order(owner["customer_id"], status, age, items))
    orders.sort(key=lambda o: (o["placed_on"], o["order_id"]))
    customers.sort(key=lambda c: c["customer_id"])

    withdrawn: list[str] = []
    withdraw_text = ""
    if rng.random() < 0.5:
        approvable = [r for r in scenes[0] if r.designed == "APPROVE"]
        target = rng.choice(approvable or scenes[0])
        withdrawn.append(target.request_id)
        name = _item_name(orders, target)
        if target.reason == "not_received":
            why = rng.choice(["the parcel turned up today after all", "a neighbour had taken it in for me"])
        elif status_of_order(orders, target.order_id) == "processing":
            why = rng.choice(["I still want it after all", "I will keep the order as it is"])
        else:
            why = rng.choice(["I have decided to keep it", "it turned out fine after all", "my partner wants it"])
        withdraw_text = f"Also, please withdraw {target.request_id} (the {name} from order {target.order_id}) - {why}."

    status_of = {o["order_id"]: o["status"] for o in orders}
    for scene in scenes:
        for r in scene:
            r.text = _describe(rng, r, _item_name(orders, r), status_of[r.order_id] == "processing")

    ticket_id = f"TCK-{rng.randint(100000, 999999)}"
    inst = Instance(index, today, ticket_id, cust, customers, orders, limit, scenes, withdrawn, withdraw_text)
    inst.files = _files(inst, rng)
    opening = "\n".join(f"- {r.text}" for r in scenes[0])
    follow = "\n".join(f"- {r.text}" for r in scenes[1])
    if withdraw_text:
        follow += f"\n- {withdraw_text}"
    inst.prompt = {
        "ticket_id": ticket_id,
        "today": today.isoformat(),
        "approval_limit": f"{limit:.2f}",
        "customer_name": cust["name"],
        "customer_id": cust["customer_id"],
        "opening_requests": opening,
        "followup_requests": follow,
    }
    return inst


def status_of_order(orders: list[dict[str, Any]], order_id: str) -> str:
    return next(o["status"] for o in orders if o["order_id"] == order_id)


def _item_name(orders: list[dict[str, Any]], r: Request) -> str:
    order = next(o for o in orders if o["order_id"] == r.order_id)
    return next(i["name"] for i in order["items"] if i["sku"] == r.sku)


def _files(inst: Instance, rng: random.Random) -> dict[str, bytes]:
    minute = rng.randint(8 * 60, 16 * 60)
    first = f"{inst.today.isoformat()}T{minute // 60:02d}:{minute % 60:02d}:00Z"
    minute += rng.randint(5, 50)
    second = f"{inst.today.isoformat()}T{minute // 60:02d}:{minute % 60:02d}:00Z"

    def lines(reqs: list[Request]) -> list[dict[str, Any]]:
        return [
            {
                "request_id": r.request_id,
                "order_id": r.order_id,
                "sku": r.sku,
                "quantity": r.quantity,
                "reason": r.reason,
            }
            for r in reqs
        ]

    ticket = {
        "ticket_id": inst.ticket_id,
        "customer_id": inst.customer["customer_id"],
        "opened_on": inst.today.isoformat(),
        "handler": {"agent_id": f"AGT-{rng.randint(100, 999)}", "approval_limit": money(inst.approval_limit)},
        "messages": [
            {"message": 1, "sent_at": first, "requests": lines(inst.scenes[0]), "withdraw": []},
            {"message": 2, "sent_at": second, "requests": lines(inst.scenes[1]), "withdraw": list(inst.withdrawn)},
        ],
    }
    return {
        "orders.json": (json.dumps({"orders": inst.orders}, indent=2) + "\n").encode(),
        "customers.json": (json.dumps({"customers": inst.customers}, indent=2) + "\n").encode(),
        "ticket.json": (json.dumps(ticket, indent=2) + "\n").encode(),
    }


def expected_outcome(inst: Instance) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Apply the refund policy. Returns (decisions in request order, the expected final orders.json document).

    Each decision is {"request_id", "decision", "quantity", "amount"} with amount a Decimal.
    """
    orders = copy.deepcopy(inst.orders)
    by_id = {o["order_id"]: o for o in orders}
    shipping_refunded: set[str] = set()
    decisions: list[dict[str, Any]] = []
    gold = inst.customer["tier"] == "gold"
    for r in inst.requests:
        qty, amount, code = 0, Decimal("0.00"), ""
        order = by_id[r.order_id]
        item = next(i for i in order["items"] if i["sku"] == r.sku)
        price = Decimal(str(item["unit_price"]))
        remaining = item["quantity"] - item["refunded_quantity"]
        take = min(r.quantity, remaining)
        shipping = Decimal("0.00")
        if r.request_id in inst.withdrawn:
            code = "WITHDRAWN"
        elif order["customer_id"] != inst.customer["customer_id"]:
            code = "DENY_NOT_OWNER"
        elif remaining <= 0:
            code = "DENY_ALREADY_REFUNDED"
        elif order["status"] == "processing":
            code, qty, amount = "APPROVE", take, price * take
        elif order["status"] == "shipped":
            age = (inst.today - date.fromisoformat(order["shipped_on"])).days
            if r.reason == "not_received" and age >= LOST_AFTER_DAYS:
                if r.order_id not in shipping_refunded:
                    shipping = Decimal(str(order["shipping_fee"]))
                code, qty, amount = "APPROVE", take, price * take + shipping
            else:
                code = "DENY_IN_TRANSIT"
        else:
            age = (inst.today - date.fromisoformat(order["delivered_on"])).days
            rule = CATEGORY_RULES[item["category"]]
            if r.reason == "not_received":
                code = "CARRIER_CLAIM"
            elif item["category"] == "gift-card":
                code = "DENY_FINAL_SALE"
            elif r.reason in FAULT_WINDOW:
                if age <= FAULT_WINDOW[r.reason]:
                    code, qty, amount = "APPROVE", take, price * take
                else:
                    code = "DENY_WINDOW"
            elif item["final_sale"] or rule is None:
                code = "DENY_FINAL_SALE"
            elif age > rule[0]:
                code = "DENY_WINDOW"
            else:
                subtotal = price * take
                fee = Decimal("0.00") if gold else restocking_fee(subtotal, rule[1])
                code, qty, amount = "APPROVE", take, subtotal - fee
        amount = amount.quantize(CENT, rounding=ROUND_HALF_UP)
        if code == "APPROVE" and amount > inst.approval_limit:
            code, qty, amount = "ESCALATE", 0, Decimal("0.00")
        if code == "APPROVE":
            item["refunded_quantity"] += qty
            order["refund_total"] = money(Decimal(str(order["refund_total"])) + amount)
            if shipping:
                shipping_refunded.add(r.order_id)
        decisions.append({"request_id": r.request_id, "decision": code, "quantity": qty, "amount": amount})
    return decisions, {"orders": orders}


def main() -> None:
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    inst = build_instance(index)
    workspace.mkdir(parents=True, exist_ok=True)
    for rel, data in inst.files.items():
        (workspace / rel).write_bytes(data)
    print(json.dumps(inst.prompt, sort_keys=True))


if __name__ == "__main__":
    main()
