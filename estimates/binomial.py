"""Exact (Clopper–Pearson) bounds on a binomial proportion, by bisection on the binomial distribution function.

The bounds never undercover: for k successes in n trials the upper bound u solves P(X <= k | n, u) = alpha and the
lower bound l solves P(X >= k | n, l) = alpha (one-sided, each at level 1 - alpha). At k = 0 the upper bound is
1 - alpha ** (1 / n) in closed form (the "rule of three" for alpha = 0.05 is its approximation, 3 / n).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

BISECTIONS = 60  # 2**-60: far below any precision a proportion is reported at


def cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
        for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _solve(decreasing: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where a decreasing function of p crosses target."""
    low, high = 0.0, 1.0
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if decreasing(middle) > target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@cache
def upper_bound(k: int, n: int, alpha: float) -> float:
    """One-sided exact upper bound at level 1 - alpha on the proportion behind k successes in n trials."""
    _check(k, n, alpha)
    if k >= n:
        return 1.0
    return _solve(lambda p: cdf(k, n, p), alpha)


def lower_bound(k: int, n: int, alpha: float) -> float:
    """One-sided exact lower bound at level 1 - alpha on the proportion behind k successes in n trials."""
    _check(k, n, alpha)
    if k <= 0:
        return 0.0
    return 1.0 - upper_bound(n - k, n, alpha)


def interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided exact interval (each tail (1 - confidence) / 2); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    alpha = (1 - confidence) / 2
    return lower_bound(k, n, alpha), upper_bound(k, n, alpha)


def _check(k: int, n: int, alpha: float) -> None:
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
