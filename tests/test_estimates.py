"""The estimates package: exact binomial bounds, pass@k, the signal-carrying share's sequential test, paired
bootstrap intervals. Exact where the answer can be computed exactly; otherwise seeded simulations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from estimates import binomial
from estimates.bootstrap import mean_interval, paired_difference
from estimates.groups import has_signal, pass_at_k, signal_probability
from estimates.learnability import CONTINUE, GO, INCONCLUSIVE, REFUSE, SignalTest, judge


def test_the_upper_bound_at_zero_successes_is_the_closed_form() -> None:
    for n in (1, 5, 29, 60):
        assert binomial.upper_bound(0, n, 0.05) == pytest.approx(1 - 0.05 ** (1 / n), abs=1e-9)
    assert binomial.upper_bound(7, 7, 0.05) == 1.0 and binomial.lower_bound(0, 7, 0.05) == 0.0


@pytest.mark.parametrize("n", [8, 20, 40])
@pytest.mark.parametrize("p", [0.02, 0.1, 0.33, 0.5, 0.9])
def test_exact_bounds_cover_at_least_their_level(n: int, p: float) -> None:
    alpha = 0.05
    chance = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    misses_above = sum(c for k, c in enumerate(chance) if binomial.upper_bound(k, n, alpha) < p)
    misses_below = sum(c for k, c in enumerate(chance) if binomial.lower_bound(k, n, alpha) > p)
    assert misses_above <= alpha + 1e-9 and misses_below <= alpha + 1e-9
    low, high = binomial.interval(n // 3, n)
    assert 0 <= low < n // 3 / n < high <= 1


def test_pass_at_k_matches_counting_every_subset() -> None:
    for n, c in [(8, 0), (8, 1), (8, 3), (5, 5), (6, 2)]:
        outcomes = [1] * c + [0] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(outcomes, k))
            assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 2)


def test_a_five_percent_task_gives_a_third_of_groups_of_eight_signal() -> None:
    assert signal_probability(0.05, 8) == pytest.approx(0.337, abs=0.001)
    assert pytest.approx(0.44, abs=0.005) == 0.95**16  # the old calibration's "mean 0" verdict at 16 instances
    assert has_signal([0.0, 1.0, None]) and not has_signal([1.0, 1.0, None]) and not has_signal([0.0, None])


def test_no_signal_is_refused_only_with_enough_groups() -> None:
    test = SignalTest(threshold=0.1, confidence=0.95, looks=1)
    few = judge([[0.0] * 8] * 10, test, last_look=True)
    assert few.decision == INCONCLUSIVE and few.high > 0.1  # ten constant groups cannot rule out 10%
    many = judge([[0.0] * 8] * 29, test, last_look=True)
    assert many.decision == REFUSE and many.high < 0.1 and "too hard" in many.reason
    solved = judge([[1.0] * 8] * 29, test, last_look=True)
    assert solved.decision == REFUSE and "already solved" in solved.reason
    assert judge([[0.0] * 8] * 10, test, last_look=False).decision == CONTINUE
    assert judge([[0.0, 1.0]] * 10, test, last_look=False).decision == GO
    errored = judge([[None] * 8] * 4, test, last_look=True)
    assert errored.decision == REFUSE and "verifier.py" in errored.reason


def test_the_sequential_test_wrongly_refuses_less_often_than_its_level() -> None:
    """At a true share exactly at the threshold, a refusal is wrong; over four looks it stays below alpha."""
    rng = np.random.default_rng(7)
    test, batch, wrong = SignalTest(threshold=0.1, confidence=0.95, looks=4), 16, 0
    trials = 3000
    for _ in range(trials):
        groups: list[list[float]] = []
        for look in range(test.looks):
            groups += [[0.0, 1.0] if rng.random() < 0.1 else [0.0, 0.0] for _ in range(batch)]
            verdict = judge(groups, test, last_look=look == test.looks - 1)
            if verdict.decision != CONTINUE:
                wrong += verdict.decision == REFUSE
                break
    assert wrong / trials < 0.05


def test_paired_difference_resamples_instances_whole_and_is_seeded() -> None:
    base = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    shifted = paired_difference(base, [[min(1.0, r + 0.5) for r in b] for b in base])
    assert shifted.value == pytest.approx(0.25)
    assert shifted.low <= shifted.value <= shifted.high and shifted.units == 4
    same = paired_difference(base, base)  # no instance changed: the interval says how many could have, unseen
    assert same.value == 0 and same.low == -same.high == pytest.approx(-binomial.upper_bound(0, 4, 0.025))
    assert paired_difference(base, base[::-1], seed=3) == paired_difference(base, base[::-1], seed=3)
    single = paired_difference([[0.0]], [[1.0]])
    assert (single.low, single.high) == (-1.0, 1.0)  # one instance says nothing of the spread between instances
    assert mean_interval([0.2, 0.4]).to_dict()["interval"][0] >= 0.2


def test_pass_at_one_keeps_an_honest_interval_when_every_sample_agrees() -> None:
    from estimates.groups import pass_rate_estimate

    none = pass_rate_estimate([(0, 4), (0, 4), (0, 4), (0, 4)])
    pooled, instances = binomial.upper_bound(0, 16, 0.025), binomial.upper_bound(0, 4, 0.025)
    assert none.value == 0 and none.low == 0 and none.high == pytest.approx(max(pooled, instances))
    mixed = pass_rate_estimate([(4, 4), (0, 4), (2, 4)])
    assert mixed.value == pytest.approx(0.5) and mixed.low < 0.5 < mixed.high and mixed.units == 3
