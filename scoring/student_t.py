"""Student's t distribution for real degrees of freedom: two-sided tail probabilities and quantiles, in numpy.

Scoring needs t quantiles with fractional (Satterthwaite) degrees of freedom at run time, where scipy is not a
dependency. The two-sided tail of |T| ≥ t with ν degrees of freedom is the regularised incomplete beta function
I_x(ν/2, 1/2) at x = ν / (ν + t²); the function is evaluated by its continued fraction (modified Lentz), on the side
where the fraction converges fast, and quantiles by bisection on that tail. Accurate to about 1e-12.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TypeVar

import numpy as np

ITERATIONS = 300
TINY = 1e-300
EPSILON = 1e-15
T = TypeVar("T", float, np.ndarray)


def _guard(value: T) -> T:
    """value moved off zero (by TINY) where it is within TINY of it: the continued fraction divides by it."""
    return value + TINY * (abs(value) < TINY)


def _beta_fraction(a: T, b: T, x: T) -> T:
    """The continued fraction of the incomplete beta function (converges for x < (a + 1)/(a + b + 2)): plain
    arithmetic, so it runs on floats (quantiles) and on arrays element-wise (many p-values) alike."""
    c = 1.0
    d = 1.0 / _guard(1.0 - (a + b) * x / (a + 1.0))
    result = d
    for m in range(1, ITERATIONS + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 / _guard(1.0 + numerator * d)
            c = _guard(1.0 + numerator / c)
            step = c * d
            result = result * step
        done = abs(step - 1.0) < EPSILON
        if done.all() if isinstance(done, np.ndarray) else done:
            break
    return result


def _beta_scalar(x: float, a: float, b: float) -> float:
    """I_x(a, b) for one x, with math's functions (a quantile asks for a few dozen of these)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def regularized_beta(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """I_x(a, b) element-wise, for 0 ≤ x ≤ 1 and a, b > 0."""
    x, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, a, b)))
    inner = np.clip(x, 1e-300, 1 - 1e-16)
    log_gamma = np.frompyfunc(math.lgamma, 1, 1)
    log_front = np.asarray(log_gamma(a + b) - log_gamma(a) - log_gamma(b), dtype=np.float64) + a * np.log(inner) + \
        b * np.log1p(-inner)
    front = np.exp(log_front)
    direct = inner < (a + 1) / (a + b + 2)
    # I_x(a, b) = 1 − I_{1−x}(b, a): each element on the side where its fraction converges
    a_side, b_side, x_side = np.where(direct, a, b), np.where(direct, b, a), np.where(direct, inner, 1 - inner)
    fraction = front * _beta_fraction(a_side, b_side, x_side) / a_side
    value = np.where(direct, fraction, 1.0 - fraction)
    return np.where(x <= 0, 0.0, np.where(x >= 1, 1.0, value))


def two_sided_p(t: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """P(|T| ≥ |t|) for T ~ t(df), element-wise; df may be fractional (and infinite: the normal)."""
    t, df = np.broadcast_arrays(np.abs(np.asarray(t, dtype=np.float64)), np.asarray(df, dtype=np.float64))
    finite = np.isfinite(df)
    safe_df = np.where(finite, df, 1.0)
    p = regularized_beta(safe_df / (safe_df + t**2), safe_df / 2, np.full_like(t, 0.5))
    normal = np.asarray(np.frompyfunc(math.erfc, 1, 1)(t / math.sqrt(2)), dtype=np.float64)
    return np.clip(np.where(finite, p, normal), 0.0, 1.0)


def tail(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for one t: two_sided_p without arrays."""
    t = abs(t)
    if math.isinf(df):
        return math.erfc(t / math.sqrt(2))
    return min(1.0, max(0.0, _beta_scalar(df / (df + t * t), df / 2, 0.5)))


def _density(t: float, df: float) -> float:
    """The t(df) density at t."""
    if math.isinf(df):
        return math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _start(probability: float, df: float) -> float:
    """A first guess: the normal quantile (Acklam's rational fit is overkill here; a few bisection-free Newton
    steps on erfc give it) corrected by the Cornish–Fisher expansion of t in 1/df."""
    z, target = 1.0, 2 * (1 - probability)
    for _ in range(30):  # Newton on erfc(z / sqrt 2) = target: converges in a handful of steps from 1
        excess = math.erfc(z / math.sqrt(2)) - target
        z += excess / (2 * math.exp(-z * z / 2) / math.sqrt(2 * math.pi))
        if abs(excess) < 1e-15:
            break
    if math.isinf(df):
        return z
    n = df
    return max(1e-3, z + (z**3 + z) / (4 * n) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n**2)
               + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * n**3))


@lru_cache(maxsize=4096)
def quantile(probability: float, df: float) -> float:
    """The t(df) quantile at probability (0.5 < probability < 1), e.g. 0.975 for a 95% two-sided interval: Newton's
    method on the tail from the normal quantile, kept inside a bracket that bisection narrows when a step leaves it."""
    if not 0.5 < probability < 1:
        raise ValueError("probability must lie between 0.5 and 1")
    wanted = 2 * (1 - probability)
    low, high = 0.0, math.inf
    t = _start(probability, df)
    for _ in range(100):
        excess = tail(t, df) - wanted  # > 0: t is too small
        if excess > 0:
            low = t
        else:
            high = t
        if abs(excess) <= 1e-14 * wanted or high - low < 1e-13 * t:
            break
        step = t + excess / (2 * _density(t, df))
        t = step if low < step < high else (low + high) / 2 if math.isfinite(high) else 2 * t
    return t
