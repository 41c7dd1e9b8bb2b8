"""How the site writes numbers: deltas in percentage points, gains in percent, dates, hours."""

from __future__ import annotations

NO_VALUE = "–"


def points(value: float | None, signed: bool = True) -> str:
    """A fraction as percentage points with one decimal (0.031 -> "+3.1")."""
    if value is None:
        return NO_VALUE
    text = f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"
    return text.replace("-", "−")  # a real minus sign: same width as the plus sign


def interval(pair: tuple[float, float] | None) -> str:
    """A delta's interval in points ("+1.2 to +5.0")."""
    return NO_VALUE if pair is None else f"{points(pair[0])} to {points(pair[1])}"


def percent(value: float | None) -> str:
    """A fraction as a signed percentage with one decimal (normalised gain)."""
    return NO_VALUE if value is None else f"{value * 100:+.1f}%".replace("-", "−")


def hours(value: float | None) -> str:
    """GPU-hours with one decimal."""
    return NO_VALUE if value is None else f"{value:,.1f}"


def day(timestamp: str) -> str:
    """The date part of an ISO timestamp."""
    return timestamp[:10]


def q_value(value: float | None) -> str:
    """A q-value with three significant digits."""
    return NO_VALUE if value is None else f"{value:.3g}"
