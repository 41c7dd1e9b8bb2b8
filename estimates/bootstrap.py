"""Percentile bootstrap intervals over independent units (instances): for a mean, and for a paired difference.

In a paired comparison each unit is one instance played by both arms, K samples each with the same seeds; the unit's
difference is its trained mean minus its base mean, and units are resampled whole, so the interval reflects the
spread between instances, not only the sampling noise within them. Seeded: the same inputs give the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimates import binomial

RESAMPLES = 10_000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval and what it was computed from."""

    value: float
    low: float
    high: float
    units: int
    confidence: float

    def to_dict(self) -> dict:
        """JSON form, rounded to what is worth reporting."""
        return {
            "value": round(self.value, 4),
            "interval": [round(self.low, 4), round(self.high, 4)],
            "units": self.units,
            "confidence": self.confidence,
        }


def mean_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> Estimate:
    """The mean of per-unit values with a percentile bootstrap interval. Where every unit shows the same value the
    bootstrap has no spread to show, so the interval is what that agreement rules out exactly: at most a share u of
    units (u the exact upper bound at zero of n, 1 for a single unit) could lie anywhere in `bounds`. With few units
    the percentile interval is too narrow; the unit count is reported beside it for that reason."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no units to estimate from")
    value = float(data.mean())
    if np.all(data == data[0]):
        share = 1.0 if data.size == 1 else binomial.upper_bound(0, int(data.size), (1 - confidence) / 2)
        low, high = value - share * (value - bounds[0]), value + share * (bounds[1] - value)
        return Estimate(value, low, high, int(data.size), confidence)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(value, float(low), float(high), int(data.size), confidence)


def paired_difference(
    base: Sequence[Sequence[float]],
    trained: Sequence[Sequence[float]],
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """Trained minus base over the same units (each a list of K sample rewards per arm), resampling units whole."""
    if len(base) != len(trained):
        raise ValueError("both arms must cover the same units")
    differences = [float(np.mean(t)) - float(np.mean(b)) for b, t in zip(base, trained, strict=True)]
    return mean_interval(differences, confidence, resamples, seed, bounds=(-1.0, 1.0))
