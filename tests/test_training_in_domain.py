"""The in-domain lift from both arms' episodes: paired per instance, errors handled as scoring handles them."""

from __future__ import annotations

import pytest

from training.evaluate import Sample
from training.in_domain import lift, one_line


def arm(rewards: dict[int, list[float | None]]) -> list[Sample]:
    return [Sample(i, k, r, "scored" if r is not None else "verifier_error", 1, 1, 0, 1.0)
            for i, group in rewards.items() for k, r in enumerate(group)]


def test_the_lift_pairs_instances_and_leaves_out_those_the_base_arm_could_not_score() -> None:
    base = arm({1: [0.0, 0.0], 2: [1.0, 0.0], 3: [None, 0.0], 4: [0.0, 1.0]})
    trained = arm({1: [1.0, 1.0], 2: [1.0, None], 3: [1.0, 1.0], 4: [0.0, 1.0]})
    report = lift({"base": base, "trained": trained}, [1, 2, 3, 4], 2)
    assert report["instances"] == [1, 2, 4] and report["excluded"] == [3]
    assert report["lift"] == pytest.approx((1.0 + 0.0 + 0.0) / 3, abs=1e-4)  # trained's error on 2 scores 0
    assert report["interval"][0] <= report["lift"] <= report["interval"][1]
    assert report["base_mean"] == pytest.approx(2 / 6, abs=1e-4) and len(report["episodes"]["trained"]) == 8
    assert one_line(report).startswith("in-domain lift +33.3 points (95% interval [")
    nothing = lift({"base": arm({1: [None]}), "trained": arm({1: [1.0]})}, [1], 1)
    assert nothing["lift"] is None and "not measured" in one_line(nothing)
