"""Student's t for fractional degrees of freedom, against scipy's (a dev dependency only; scoring needs none)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.student_t import quantile, tail, two_sided_p


def test_tails_match_scipy_for_any_t_and_fractional_df() -> None:
    rng = np.random.default_rng(1)
    t, df = np.abs(rng.standard_normal(4_000) * 6), rng.uniform(0.5, 400, 4_000)
    expected = 2 * stats.t.sf(t, df)
    assert two_sided_p(t, df) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert [tail(a, b) for a, b in zip(t[:200], df[:200], strict=True)] == pytest.approx(expected[:200], rel=1e-9)
    assert two_sided_p([0.0, 3.0], [np.inf, np.inf]) == pytest.approx(2 * stats.norm.sf([0.0, 3.0]))


@pytest.mark.parametrize("df", [0.7, 1, 2, 3.5, 8, 16.3, 30, 120, 1e6, np.inf])
@pytest.mark.parametrize("probability", [0.9, 0.975, 0.995])
def test_quantiles_match_scipy(df: float, probability: float) -> None:
    assert quantile(probability, df) == pytest.approx(stats.t.ppf(probability, df), rel=1e-9)


def test_a_probability_outside_the_upper_half_is_refused() -> None:
    with pytest.raises(ValueError, match=r"between 0\.5 and 1"):
        quantile(0.4, 3)
