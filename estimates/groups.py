"""What G samples of one instance say for GRPO: its pass rate, whether the group carries signal (its rewards are not
all equal: GRPO's advantage is zero for every member of a constant group), and pass@k.

A reward counts as a pass at 1.0 (the verifier's full score); a judged reward is a number, an unjudged one None
(a verifier error: left out, as TRL leaves it out of the advantage).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from estimates import binomial
from estimates.bootstrap import Estimate, mean_interval

PASS = 1.0


def judged(rewards: Sequence[float | None]) -> list[float]:
    """The rewards a verifier actually gave."""
    return [r for r in rewards if r is not None]


def passes(rewards: Sequence[float | None]) -> int:
    """How many judged rewards are a pass."""
    return sum(r >= PASS for r in judged(rewards))


def has_signal(rewards: Sequence[float | None]) -> bool:
    """True when at least two judged rewards differ: GRPO then gives this group a non-zero advantage."""
    values = judged(rewards)
    return len(values) >= 2 and max(values) > min(values)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from c passes in n samples: 1 - C(n - c, k) / C(n, k) (k <= n)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def signal_probability(p: float, g: int) -> float:
    """The chance that a group of g pass/fail samples at pass rate p is not constant: 1 - p**g - (1 - p)**g."""
    return 1.0 - p**g - (1.0 - p) ** g


def pass_rate_estimate(counts: Sequence[tuple[int, int]], confidence: float = 0.95) -> Estimate:
    """pass@1 over instances from (passes, judged samples) per instance: the mean of the instances' pass rates, with
    the hull of the interval over instances (their spread; `bootstrap.mean_interval`) and the exact interval over
    all samples pooled (the sampling noise within instances, which the spread between a few instances can hide)."""
    rated = [(c, n) for c, n in counts if n]
    if not rated:
        raise ValueError("no judged samples")
    spread = mean_interval([c / n for c, n in rated], confidence)
    low, high = binomial.interval(sum(c for c, _ in rated), sum(n for _, n in rated), confidence)
    return Estimate(spread.value, min(spread.low, low), max(spread.high, high), len(rated), confidence)
