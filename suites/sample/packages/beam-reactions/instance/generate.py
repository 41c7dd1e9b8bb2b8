"""Generate one design check's set of statically determinate beams (two supports, overhangs allowed) and their loads.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes beams.json and a short design note into
ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier imports ``build_instance`` and
``expected_results`` to rebuild the beams and solve them exactly (rational arithmetic) without reading the workspace.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/beam-reactions/v1"
PROJECTS = ("Mezzanine floor, Unit 4 Harbour Road", "Footbridge deck replacement", "Roof plant platform",
            "Warehouse racking transfer beams", "School canopy extension", "Loading dock lintels")
ENGINEERS = ("R. Okonkwo", "S. Lindahl", "M. Ferreira", "J. Tanaka", "A. Kowalczyk", "L. Mensah")
LENGTH_FACTOR = {"m": Fraction(1), "mm": Fraction(1, 1000)}
FORCE_FACTOR = {"kN": Fraction(1), "N": Fraction(1, 1000)}


@dataclass(frozen=True)
class Beam:
    """A beam in metres and kilonewtons; loads are (kind, position(s), magnitude)."""

    beam_id: str
    length: Fraction
    pin: Fraction
    roller: Fraction
    points: tuple[tuple[Fraction, Fraction], ...]  # (x, P) downward
    udls: tuple[tuple[Fraction, Fraction, Fraction], ...]  # (start, end, w) downward per metre
    moments: tuple[tuple[Fraction, Fraction], ...]  # (x, M) counterclockwise
    length_unit: str
    force_unit: str


@dataclass
class Instance:
    index: int
    project: str
    beams: list[Beam]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def reactions(beam: Beam) -> tuple[Fraction, Fraction]:
    """Upward reactions at the pin and at the roller, from equilibrium of forces and of moments about the pin."""
    total = sum((p for _, p in beam.points), Fraction(0)) + sum(((b - a) * w for a, b, w in beam.udls), Fraction(0))
    turning = sum((p * (x - beam.pin) for x, p in beam.points), Fraction(0))
    turning += sum(((b - a) * w * ((a + b) / 2 - beam.pin) for a, b, w in beam.udls), Fraction(0))
    turning -= sum((m for _, m in beam.moments), Fraction(0))
    roller = turning / (beam.roller - beam.pin)
    return total - roller, roller


def _forces(beam: Beam) -> list[tuple[Fraction, Fraction]]:
    """Concentrated upward forces (x, F): the reactions and the point loads (negative)."""
    pin, roller = reactions(beam)
    return [(beam.pin, pin), (beam.roller, roller), *((x, -p) for x, p in beam.points)]


def moment_at(beam: Beam, x: Fraction, right_side: bool) -> Fraction:
    """Sagging bending moment at x from everything to its left; right_side includes couples applied at x itself."""
    total = sum((f * (x - xi) for xi, f in _forces(beam) if xi < x), Fraction(0))
    for a, b, w in beam.udls:
        if a < x:
            end = min(b, x)
            total -= w * (end - a) * (x - (a + end) / 2)
    total -= sum((m for xm, m in beam.moments if xm < x or (right_side and xm == x)), Fraction(0))
    return total


def shear_right_of(beam: Beam, x: Fraction) -> Fraction:
    """Shear force just to the right of x (upward forces on the left part positive)."""
    total = sum((f for xi, f in _forces(beam) if xi <= x), Fraction(0))
    return total - sum((w * (min(b, x) - a) for a, b, w in beam.udls if a < x), Fraction(0))


def max_abs_moment(beam: Beam) -> Fraction:
    """The largest absolute bending moment along the beam: at every load and support point (both sides of a couple)
    and wherever the shear crosses zero under a distributed load."""
    marks = {Fraction(0), beam.length, beam.pin, beam.roller}
    marks |= {x for x, _ in beam.points} | {x for x, _ in beam.moments}
    marks |= {a for a, _, _ in beam.udls} | {b for _, b, _ in beam.udls}
    ordered = sorted(marks)
    values = [abs(moment_at(beam, x, side)) for x in ordered for side in (False, True)]
    for left, right in itertools.pairwise(ordered):
        w = sum((w for a, b, w in beam.udls if a <= left and right <= b), Fraction(0))
        if w:
            zero = left + shear_right_of(beam, left) / w
            if left < zero < right:
                values.append(abs(moment_at(beam, zero, True)))
    return max(values)


def expected_results(inst: Instance) -> dict[str, tuple[Fraction, Fraction, Fraction]]:
    """beam_id -> (pin reaction kN, roller reaction kN, largest absolute bending moment kN·m)."""
    return {b.beam_id: (*reactions(b), max_abs_moment(b)) for b in inst.beams}


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _on(rng: random.Random, low: Fraction, high: Fraction) -> Fraction:
    """A position on a 0.1 m grid between low and high (inclusive)."""
    return Fraction(rng.randint(int(low * 10), int(high * 10)), 10)


def _beam(rng: random.Random, tier: str, beam_id: str) -> Beam:
    length = Fraction(rng.randint(30, 120), 10)
    pin, roller = Fraction(0), length
    if tier != "small" and rng.random() < 0.5:  # an overhang at one end or both
        pin = _on(rng, Fraction(0), length / 4) if rng.random() < 0.5 else Fraction(0)
        roller = _on(rng, length * 3 / 4, length) if pin == 0 or rng.random() < 0.5 else length
    if rng.random() < 0.5:
        pin, roller = roller, pin  # the pin at the right-hand support
    points = tuple((_on(rng, Fraction(0), length), Fraction(rng.randint(20, 800), 10))
                   for _ in range(rng.randint(1, 2 if tier == "small" else 3)))
    udls: tuple[tuple[Fraction, Fraction, Fraction], ...] = ()
    if tier != "small" and rng.random() < 0.7:
        start = _on(rng, Fraction(0), length / 2) if rng.random() < 0.5 else Fraction(0)
        end = _on(rng, start + 1, length) if start + 1 < length else length
        udls = ((start, end, Fraction(rng.randint(5, 250), 10)),)
    moments: tuple[tuple[Fraction, Fraction], ...] = ()
    if tier == "large" and rng.random() < 0.5:
        moments = ((_on(rng, Fraction(0), length), Fraction(rng.choice([-1, 1]) * rng.randint(50, 600), 10)),)
    units = ("m", "kN")
    if tier == "large" and rng.random() < 0.4:
        units = rng.choice([("mm", "kN"), ("m", "N"), ("mm", "N")])
    return Beam(beam_id, length, pin, roller, points, udls, moments, *units)


def _number(value: Fraction) -> int | float:
    """A JSON number for an exact value that has a short decimal form."""
    return int(value) if value.denominator == 1 else float(value)


def _beam_json(b: Beam) -> dict:
    lf, ff = 1 / LENGTH_FACTOR[b.length_unit], 1 / FORCE_FACTOR[b.force_unit]
    loads: list[dict] = [{"type": "point", "x": _number(x * lf), "P": _number(p * ff)} for x, p in b.points]
    loads += [{"type": "udl", "from": _number(a * lf), "to": _number(e * lf), "w": _number(w * ff / lf)}
              for a, e, w in b.udls]
    loads += [{"type": "moment", "x": _number(x * lf), "M": _number(m * ff * lf)} for x, m in b.moments]
    return {
        "id": b.beam_id,
        "units": {"length": b.length_unit, "force": b.force_unit},
        "length": _number(b.length * lf),
        "supports": [{"type": "pin", "x": _number(b.pin * lf)}, {"type": "roller", "x": _number(b.roller * lf)}],
        "loads": sorted(loads, key=lambda item: (item.get("x", item.get("from")), item["type"])),
    }


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    count = {"small": (1, 2), "medium": (2, 4), "large": (4, 7)}[tier]
    prefix = rng.choice(["B", "GB", "RB", "TB"])
    numbers = sorted(rng.sample(range(100, 1000), rng.randint(*count)))
    inst = Instance(index, rng.choice(PROJECTS), [_beam(rng, tier, f"{prefix}-{n}") for n in numbers])
    document = {"project": inst.project, "checked_by": rng.choice(ENGINEERS),
                "beams": [_beam_json(b) for b in inst.beams]}
    inst.files = {
        "beams.json": json.dumps(document, indent=2) + "\n",
        "design_note.md": (
            f"# {inst.project}: beam schedule\n\n"
            "Every beam is horizontal, weightless and statically determinate: a pin and a roller support.\n"
            "Each beam states its own units: lengths in m or mm, forces in kN or N. A distributed load `w` is\n"
            "force per length in those units (N/mm, kN/m, ...), an applied moment `M` force times length.\n"
            "Point loads and distributed loads act downward; applied moments are counterclockwise when positive.\n"
        ),
    }
    inst.prompt = {"project": inst.project, "beam_count": str(len(inst.beams)),
                   "beam_ids": ", ".join(b.beam_id for b in inst.beams)}
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
