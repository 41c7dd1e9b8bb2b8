"""Reference solution for cargo-loading: orders become items, packed into as few trucks as the weight and floor
bounds allow: best fit decreasing, then seeded randomised restarts of it, then a bounded depth-first search; one more
truck only when all of them fail."""

from __future__ import annotations

import csv
import math
import random
import re
import sys
from pathlib import Path

RESTARTS = 2000
SEARCH_NODES = 3_000_000


def rules() -> tuple[int, int, list[tuple[str, str]]]:
    text = Path("loading_rules.md").read_text(encoding="utf-8")
    payload = int(re.search(r"at most \*\*(\d+) kg\*\*", text).group(1))
    positions = int(re.search(r"at most \*\*(\d+) pallets\*\*", text).group(1))
    pairs = re.findall(r"^- class (\S+) with class (\S+)$", text, flags=re.MULTILINE)
    return payload, positions, pairs


def best_fit(items: list[dict], trucks: int, payload: int, positions: int, pairs: list[tuple[str, str]],
             noise: random.Random | None) -> list[int] | None:
    """Place items in the given order, each in the fullest truck it fits (ties and near-ties shuffled by noise)."""
    weight, count = [0] * trucks, [0] * trucks
    classes: list[set[str]] = [set() for _ in range(trucks)]
    where = []
    for item in items:
        fits = [t for t in range(trucks) if weight[t] + item["weight"] <= payload
                and count[t] + item["count"] <= positions
                and not any((a in classes[t] and b in item["classes"]) or (b in classes[t] and a in item["classes"])
                            for a, b in pairs)]
        if not fits:
            return None
        jitter = (lambda t: noise.random() * payload * 0.15) if noise else (lambda t: 0)
        t = max(fits, key=lambda t: weight[t] + jitter(t))
        weight[t] += item["weight"]
        count[t] += item["count"]
        classes[t] |= item["classes"]
        where.append(t)
    return where


def search(items: list[dict], trucks: int, payload: int, positions: int, pairs: list[tuple[str, str]],
           budget: int) -> list[int] | None:
    """Depth-first search over truck choices per item (identical trucks tried once), within `budget` nodes."""
    weight, count = [0] * trucks, [0] * trucks
    classes: list[set[str]] = [set() for _ in range(trucks)]
    where = [0] * len(items)
    rest = [sum(i["weight"] for i in items[n:]) for n in range(len(items) + 1)]
    nodes = [0]

    def place(n: int) -> bool:
        nodes[0] += 1
        if n == len(items):
            return True
        if nodes[0] > budget or rest[n] > trucks * payload - sum(weight):
            return False
        item, tried = items[n], set()
        for t in range(trucks):
            state = (weight[t], count[t], frozenset(classes[t]))
            if state in tried or weight[t] + item["weight"] > payload or count[t] + item["count"] > positions:
                continue
            tried.add(state)
            if any((a in classes[t] and b in item["classes"]) or (b in classes[t] and a in item["classes"])
                   for a, b in pairs):
                continue
            before = set(classes[t])
            weight[t], count[t] = weight[t] + item["weight"], count[t] + item["count"]
            classes[t] |= item["classes"]
            where[n] = t
            if place(n + 1):
                return True
            weight[t], count[t] = weight[t] - item["weight"], count[t] - item["count"]
            classes[t] = before
        return False

    return where if place(0) else None


def main() -> None:
    payload, positions, pairs = rules()
    with Path("pallets.csv").open(newline="", encoding="utf-8") as handle:
        pallets = list(csv.DictReader(handle))
    orders: dict[str, dict] = {}
    for p in pallets:
        item = orders.setdefault(p["order_id"], {"weight": 0, "count": 0, "classes": set(), "pallets": []})
        item["weight"] += int(p["weight_kg"])
        item["count"] += 1
        item["pallets"].append(p["pallet_id"])
        if p["hazard_class"]:
            item["classes"].add(p["hazard_class"])
    items = sorted(orders.values(), key=lambda i: (-len(i["classes"]), -i["weight"], -i["count"]))
    trucks = max(math.ceil(sum(i["weight"] for i in items) / payload), math.ceil(len(pallets) / positions))
    noise = random.Random(1)
    while True:
        where = best_fit(items, trucks, payload, positions, pairs, None)
        order = items
        for _ in range(RESTARTS if where is None else 0):
            order = sorted(items, key=lambda i: (-len(i["classes"]) * noise.random(),
                                                 -i["weight"] * noise.uniform(0.8, 1.2)))
            where = best_fit(order, trucks, payload, positions, pairs, noise)
            if where is not None:
                break
        if where is None:
            order = items
            where = search(items, trucks, payload, positions, pairs, SEARCH_NODES)
        if where is not None:
            break
        trucks += 1
    with Path("loading_plan.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["pallet_id", "truck"])
        for item, t in zip(order, where, strict=True):
            writer.writerows([pallet, f"T{t + 1}"] for pallet in item["pallets"])


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    main()
