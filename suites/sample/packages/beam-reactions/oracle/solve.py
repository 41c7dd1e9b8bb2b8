"""Reference solution for beam-reactions: statics for the reactions, then the moment diagram's extremes."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

TO_M = {"m": 1.0, "mm": 0.001}
TO_KN = {"kN": 1.0, "N": 0.001}


def solve(beam: dict) -> tuple[float, float, float]:
    lm, fk = TO_M[beam["units"]["length"]], TO_KN[beam["units"]["force"]]
    supports = {s["type"]: s["x"] * lm for s in beam["supports"]}
    pin, roller = supports["pin"], supports["roller"]
    points = [(ld["x"] * lm, ld["P"] * fk) for ld in beam["loads"] if ld["type"] == "point"]
    udls = [(ld["from"] * lm, ld["to"] * lm, ld["w"] * fk / lm) for ld in beam["loads"] if ld["type"] == "udl"]
    couples = [(ld["x"] * lm, ld["M"] * fk * lm) for ld in beam["loads"] if ld["type"] == "moment"]
    total = sum(p for _, p in points) + sum((b - a) * w for a, b, w in udls)
    about_pin = sum(p * (x - pin) for x, p in points) + sum((b - a) * w * ((a + b) / 2 - pin) for a, b, w in udls)
    r_roller = (about_pin - sum(m for _, m in couples)) / (roller - pin)
    r_pin = total - r_roller
    forces = [(pin, r_pin), (roller, r_roller)] + [(x, -p) for x, p in points]

    def bending(x: float, with_couples_at_x: bool) -> float:
        value = sum(f * (x - xf) for xf, f in forces if xf < x)
        value -= sum(w * (min(b, x) - a) * (x - (a + min(b, x)) / 2) for a, b, w in udls if a < x)
        return value - sum(m for xm, m in couples if xm < x or (with_couples_at_x and xm == x))

    def shear(x: float) -> float:  # just right of x
        return sum(f for xf, f in forces if xf <= x) - sum(w * (min(b, x) - a) for a, b, w in udls if a < x)

    marks = sorted({0.0, beam["length"] * lm, pin, roller, *(x for x, _ in points), *(x for x, _ in couples),
                    *(a for a, _, _ in udls), *(b for _, b, _ in udls)})
    peak = max(abs(bending(x, side)) for x in marks for side in (False, True))
    for left, right in itertools.pairwise(marks):
        w = sum(w for a, b, w in udls if a <= left and right <= b)
        if w > 0:
            zero = left + shear(left) / w
            if left < zero < right:
                peak = max(peak, abs(bending(zero, True)))
    return r_pin, r_roller, peak


def main() -> None:
    schedule = json.loads(Path("beams.json").read_text(encoding="utf-8"))
    with Path("results.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["beam_id", "reaction_pin_kn", "reaction_roller_kn", "max_abs_moment_knm"])
        for beam in schedule["beams"]:
            writer.writerow([beam["id"], *(f"{v:.4f}" for v in solve(beam))])


if __name__ == "__main__":
    main()
