"""Geometry for the inline SVG charts: interval bars on a shared scale and the training reward curve.

Everything is computed here as plain numbers; the templates only draw them, so no style attribute is needed (the
pages' Content-Security-Policy allows no inline style).
"""

from __future__ import annotations

BAR_WIDTH = 150
BAR_HEIGHT = 16
CURVE_WIDTH = 640
CURVE_HEIGHT = 220
CURVE_MARGIN = (36, 12, 28, 44)  # top, right, bottom, left


def scale_for(intervals: list[tuple[float, float]], minimum_half: float = 0.01) -> tuple[float, float]:
    """A scale that holds every interval and zero, at least +-minimum_half wide, with a little room."""
    low = min([0.0, -minimum_half, *(pair[0] for pair in intervals)])
    high = max([0.0, minimum_half, *(pair[1] for pair in intervals)])
    room = (high - low) * 0.05
    return round(low - room, 6), round(high + room, 6)


def _x(value: float, scale: tuple[float, float], width: float) -> float:
    low, high = scale
    return round((min(max(value, low), high) - low) / (high - low) * width, 1)


def interval_bar(delta: float, pair: tuple[float, float] | None, scale: tuple[float, float],
                 width: int = BAR_WIDTH) -> dict:
    """x positions of zero, the interval's ends and the point estimate on a bar `width` wide."""
    low, high = pair if pair is not None else (delta, delta)
    x_low, x_high = _x(low, scale, width), _x(high, scale, width)
    return {"width": width, "height": BAR_HEIGHT, "zero": _x(0.0, scale, width), "low": x_low,
            "span": round(max(x_high - x_low, 1.5), 1), "point": _x(delta, scale, width),
            "has_interval": pair is not None,
            "side": "up" if low > 0 else "down" if high < 0 else "flat"}


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    return [round(low + (high - low) * i / count, 6) for i in range(count + 1)]


def reward_curve(points: tuple[tuple[int, float], ...]) -> dict | None:
    """The curve as an SVG polyline with axes: reward (0-1) against training step."""
    if len(points) < 2:
        return None
    top, right, bottom, left = CURVE_MARGIN
    inner_w, inner_h = CURVE_WIDTH - left - right, CURVE_HEIGHT - top - bottom
    last_step = max(step for step, _ in points) or 1
    low = min(0.0, min(r for _, r in points))
    high = max(1.0, max(r for _, r in points))

    def x(step: float) -> float:
        return round(left + step / last_step * inner_w, 1)

    def y(reward: float) -> float:
        return round(top + (1 - (reward - low) / (high - low)) * inner_h, 1)

    line = " ".join(f"{x(s)},{y(r)}" for s, r in points)
    return {"width": CURVE_WIDTH, "height": CURVE_HEIGHT, "line": line, "left": left, "right": CURVE_WIDTH - right,
            "top": top, "bottom": CURVE_HEIGHT - bottom,
            "y_ticks": [{"y": y(v), "label": f"{v:.2f}"} for v in _ticks(low, high)],
            "x_ticks": [{"x": x(v), "label": f"{round(v):,}"} for v in _ticks(0, last_step)],
            "first": points[0][1], "last": points[-1][1], "steps": last_step}
