"""Generate one day's outbound pallets and the rules for loading them onto as few identical trucks as possible.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes pallets.csv and loading_rules.md into
ARENA_WORKSPACE and prints the prompt values as one JSON object. The instance is made by packing pallets into
``trucks`` trucks, each loaded to 87-98% of its payload and together to more than one truck less could carry: the
total weight needs that many trucks and a plan with exactly that many exists, so the optimum is known without a
search. The verifier imports ``build_instance`` and ``check_plan`` to judge a plan against the rebuilt instance.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/cargo-loading/v1"
DEPOTS = ("Rotterdam Waalhaven", "Leipzig North", "Lyon Corbas", "Poznan East", "Zaragoza Plaza", "Antwerp Kallo")
CLASSES = ("3", "5.1", "8", "2.1")
INCOMPATIBLE = (("3", "5.1"), ("2.1", "5.1"), ("3", "8"))
GOODS = ("machine parts", "paper rolls", "bottled water", "ceramic tiles", "paint", "pool chemicals", "detergent",
         "canned food", "textiles", "fertiliser", "aerosols", "battery acid", "adhesives", "garden soil")


@dataclass(frozen=True)
class Pallet:
    pallet_id: str
    weight: int  # kg
    hazard: str  # "" or a class in CLASSES
    order: str
    goods: str


@dataclass
class Instance:
    index: int
    depot: str
    payload: int  # kg per truck
    positions: int  # pallet positions per truck
    incompatible: tuple[tuple[str, str], ...]
    trucks: int  # the optimum
    pallets: list[Pallet]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def check_plan(inst: Instance, plan: dict[str, str]) -> list[str]:
    """Every rule a complete plan (pallet_id -> truck label) breaks; empty when it is feasible."""
    problems = []
    by_id = {p.pallet_id: p for p in inst.pallets}
    loads: dict[str, list[Pallet]] = {}
    for pallet_id, truck in plan.items():
        loads.setdefault(truck, []).append(by_id[pallet_id])
    for truck, pallets in sorted(loads.items()):
        weight = sum(p.weight for p in pallets)
        if weight > inst.payload:
            problems.append(f"truck {truck[:20]} carries {weight} kg, over {inst.payload} kg")
        if len(pallets) > inst.positions:
            problems.append(f"truck {truck[:20]} carries {len(pallets)} pallets, over {inst.positions}")
        classes = {p.hazard for p in pallets}
        for a, b in inst.incompatible:
            if a in classes and b in classes:
                problems.append(f"truck {truck[:20]} mixes classes {a} and {b}")
    orders: dict[str, set[str]] = {}
    for pallet_id, truck in plan.items():
        orders.setdefault(by_id[pallet_id].order, set()).add(truck)
    problems += [f"order {o} is split over {len(t)} trucks" for o, t in sorted(orders.items()) if len(t) > 1]
    return problems


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _split(rng: random.Random, total: int, parts: int) -> list[int]:
    """total kg (a multiple of 10) split into `parts` pallet weights of at least 150 kg, each a multiple of 10."""
    units = total // 10 - 15 * parts
    cuts = sorted(rng.randint(0, units) for _ in range(parts - 1))
    return [(b - a + 15) * 10 for a, b in zip([0, *cuts], [*cuts, units], strict=True)]


def _truckload(rng: random.Random, inst: Instance, hazardous: bool) -> list[tuple[int, str, int]]:
    """(weight, hazard class, order number within the load) for one planted truckload."""
    target = int(inst.payload * rng.uniform(0.87, 0.98)) // 10 * 10
    count = rng.randint(min(max(3, math.ceil(target / 1500)), inst.positions - 1), inst.positions - 1)
    weights = _split(rng, target, count)
    allowed: list[str] = []  # hazard classes that may share this truck: pairwise compatible
    for c in rng.sample(CLASSES, len(CLASSES)) if hazardous else []:
        if all((a, c) not in inst.incompatible and (c, a) not in inst.incompatible for a in allowed):
            allowed.append(c)
    orders = list(range(count))
    for n in range(1, count):  # some pallets belong to the same order as the one before them
        if rng.random() < 0.3:
            orders[n] = orders[n - 1]
    return [(w, rng.choice(allowed) if allowed and rng.random() < 0.35 else "", o)
            for w, o in zip(weights, orders, strict=True)]


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    trucks = {"small": (2, 2), "medium": (3, 4), "large": (5, 6)}[tier]
    payload = rng.choice([4500, 5000, 6000, 7500, 8000])
    inst = Instance(index, rng.choice(DEPOTS), payload, rng.choice([6, 7, 8]) if tier == "small" else
                    rng.choice([8, 10, 12]), tuple(rng.sample(INCOMPATIBLE, rng.randint(1, 2))),
                    rng.randint(*trucks), [])
    while True:  # the planted loads must weigh more than one truck less could carry
        loads = [_truckload(rng, inst, tier != "small") for _ in range(inst.trucks)]
        if sum(w for load in loads for w, _, _ in load) > (inst.trucks - 1) * payload:
            break
    keys = sorted({(t, o) for t, load in enumerate(loads) for _, _, o in load})
    numbers = dict(zip(keys, rng.sample(range(10000, 99999), len(keys)), strict=True))
    rows = [(w, h, f"SO-{numbers[(t, o)]}") for t, load in enumerate(loads) for w, h, o in load]
    rng.shuffle(rows)
    ids = sorted(rng.sample(range(100000, 999999), len(rows)))
    inst.pallets = [Pallet(f"PL{n}", w, h, o, rng.choice(GOODS)) for n, (w, h, o) in zip(ids, rows, strict=True)]
    inst.files = {"pallets.csv": _pallets_csv(inst), "loading_rules.md": _rules_text(inst)}
    inst.prompt = {"depot": inst.depot, "pallet_count": str(len(inst.pallets)), "payload": str(payload),
                   "positions": str(inst.positions)}
    return inst


def _pallets_csv(inst: Instance) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pallet_id", "order_id", "goods", "weight_kg", "hazard_class"])
    writer.writerows([p.pallet_id, p.order, p.goods, str(p.weight), p.hazard] for p in inst.pallets)
    return out.getvalue()


def _rules_text(inst: Instance) -> str:
    pairs = "\n".join(f"- class {a} with class {b}" for a, b in inst.incompatible)
    return f"""# {inst.depot}: outbound loading rules

Every truck of today's fleet is the same rigid box truck:

- payload: at most **{inst.payload} kg** of pallets;
- floor: at most **{inst.positions} pallets** (pallets are not stacked).

Dangerous goods segregation (ADR): these hazard classes may not travel on the same truck:

{pairs}

Pallets without a hazard class may travel with anything.

Orders are delivered whole: all pallets of one order (same `order_id`) travel on the same truck.

The depot has as many trucks as needed, but every truck sent out costs a driver and a day: use as few as possible.
"""


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
