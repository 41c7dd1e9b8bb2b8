"""The statistics of a scored run: paired per-item differences, the macro delta with a stratified clustered
bootstrap interval, a sign-flip permutation p-value, the normalised gain; Benjamini–Hochberg across runs.

Pure numpy, no I/O. Definitions (docs in scoring/README.md):

- Per item: the mean reward over K samples of each arm; the paired difference trained − base.
- A domain's delta is the mean of its items' differences; the **macro delta** is the mean of the domain deltas, so
  every domain weighs the same whatever its item count.
- **Resampling units.** Within a domain, items that share a cluster id (a task family) are resampled together; an
  item without one is its own unit. A domain whose items all share one cluster has no between-cluster variation to
  measure, so its items are resampled one by one instead (the sample suite's one-package-per-domain case).
- **Interval.** A paired bootstrap stratified by domain: each replicate draws, in every domain independently, as
  many units as it has, with replacement, and recomputes each domain's delta (summed differences over summed item
  counts). The bootstrap's spread of a mean over m units is sqrt((m − 1) / m) too small; each domain's replicate
  deviations are scaled back up by sqrt(m / (m − 1)) (the rescaled bootstrap for stratified samples), then the
  percentile interval is read off. Chunks of replicates draw from child seeds of one SeedSequence, so the result
  depends on the seed only, never on the number of threads.
- **p-value.** Two-sided, from a paired sign-flip permutation test over the same units: under "no effect" the two
  arms of an item are exchangeable, so each unit's summed difference is equally likely to have either sign.
  p = (1 + #{|Δ*| ≥ |Δ|}) / (1 + B), which never reports 0.
- **Normalised gain** g = Δ / (1 − base), None when the base macro mean is 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

RESAMPLES = 10_000
CONFIDENCE = 0.95
CHUNK_DRAWS = 1 << 16  # unit draws per chunk: big enough to amortise numpy's per-call cost, small enough for caches
MIN_CHUNK = 256
IMPROVES, NO_CHANGE, HURTS = "improves", "no_detectable_change", "hurts"
SIGN_FLIP_STREAM = 0x5F11  # the permutation test draws from its own stream of the seed
T = TypeVar("T")


@dataclass(frozen=True)
class Layout:
    """How items group into resampling units, and units into domains (units of domain d: bounds[d]:bounds[d+1])."""

    domains: tuple[str, ...]
    item_unit: np.ndarray  # unit of each item
    unit_sizes: np.ndarray  # items in each unit
    bounds: np.ndarray
    clustered: tuple[bool, ...]  # whether domain d resamples clusters (else single items)

    @property
    def units(self) -> int:
        """How many resampling units there are."""
        return int(self.bounds[-1])

    def unit_count(self, domain: int) -> int:
        """Units in domain d."""
        return int(self.bounds[domain + 1] - self.bounds[domain])

    def unit_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-unit sums of per-item values; values may carry leading axes (..., items)."""
        values = np.asarray(values, dtype=np.float64)
        order = np.argsort(self.item_unit, kind="stable")
        starts = np.concatenate(([0], np.cumsum(self.unit_sizes.astype(np.intp))[:-1]))
        return np.add.reduceat(values[..., order], starts, axis=-1)  # every unit holds at least one item

    def domain_items(self) -> np.ndarray:
        """Items in each domain."""
        return np.add.reduceat(self.unit_sizes, self.bounds[:-1])

    def inflation(self) -> np.ndarray:
        """Per domain, sqrt(m / (m − 1)) for its m units (1 where m < 2)."""
        m = np.diff(self.bounds).astype(np.float64)
        return np.sqrt(np.where(m > 1, m / np.maximum(m - 1, 1), 1.0))


def make_layout(domains: Sequence[str], clusters: Sequence[str | None], order: Sequence[str] = ()) -> Layout:
    """Group items into units: shared cluster ids within a domain, else one unit per item (see the module doc).

    order lists domain names in the order wanted (others follow alphabetically); only domains with items appear.
    """
    if len(domains) != len(clusters):
        raise ValueError("domains and clusters must have one entry per item")
    if not domains:
        raise ValueError("no items")
    rank = {name: i for i, name in enumerate(order)}
    names = sorted(set(domains), key=lambda n: (rank.get(n, len(rank)), n))
    item_unit = np.empty(len(domains), dtype=np.intp)
    sizes: list[int] = []
    bounds = [0]
    clustered = []
    for name in names:
        members = [i for i, d in enumerate(domains) if d == name]
        named = {clusters[i] for i in members if clusters[i] is not None}
        use_clusters = len(named) >= 2 or (len(named) == 1 and any(clusters[i] is None for i in members))
        keys: dict[object, int] = {}
        for i in members:
            key = clusters[i] if use_clusters and clusters[i] is not None else ("item", i)
            if key not in keys:
                keys[key] = len(sizes)
                sizes.append(0)
            item_unit[i] = keys[key]
            sizes[keys[key]] += 1
        bounds.append(len(sizes))
        clustered.append(use_clusters)
    return Layout(tuple(names), item_unit, np.array(sizes, dtype=np.float64), np.array(bounds, dtype=np.intp),
                  tuple(clustered))


def draw_domain(layout: Layout, domain: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """(size, m) unit indices (global) of one domain's m units, drawn with replacement."""
    m, start = layout.unit_count(domain), int(layout.bounds[domain])
    small = np.uint16 if m <= np.iinfo(np.uint16).max else np.int64  # fewer random bits, the same draws
    return rng.integers(0, m, size=(size, m), dtype=small).astype(np.intp) + start


def draw_units(layout: Layout, rng: np.random.Generator, size: int) -> list[np.ndarray]:
    """One chunk of bootstrap draws: per domain, (size, m_d) unit indices (global) drawn with replacement."""
    return [draw_domain(layout, d, rng, size) for d in range(len(layout.domains))]


class LatticeMean:
    """The exact bootstrap distribution of the mean of m items whose values lie on a lattice of step 1/q.

    Binary rewards averaged over K samples give differences in steps of 1/K. Resampling m such items with
    replacement makes their sum the m-fold convolution of the items' empirical distribution: computed once by FFT,
    after which a replicate is one inverse-CDF draw instead of m. Same distribution, so the same bootstrap.
    """

    MAX_STEP = 64
    MAX_SUPPORT = 1 << 20

    def __init__(self, support: np.ndarray, cdf: np.ndarray) -> None:
        self.support = support
        self.cdf = cdf

    @classmethod
    def of(cls, values: np.ndarray) -> LatticeMean | None:
        """The distribution for these item values, or None when they lie on no lattice of step 1/q, q ≤ 64."""
        step = next((q for q in range(1, cls.MAX_STEP + 1)
                     if np.all(np.abs(values * q - np.round(values * q)) < 1e-9)), None)
        if step is None:
            return None
        points = np.round(values * step).astype(np.int64)
        low, span, m = int(points.min()), int(points.max() - points.min()), points.size
        if m * span + 1 > cls.MAX_SUPPORT:
            return None
        pmf = np.bincount(points - low, minlength=span + 1) / m
        length = 1 << int(m * span).bit_length()  # ≥ m·span + 1: the circular convolution never wraps
        summed = np.fft.irfft(np.fft.rfft(pmf, length) ** m, length)[: m * span + 1]
        cdf = np.cumsum(np.clip(summed, 0, None))
        return cls((m * low + np.arange(m * span + 1)) / (step * m), cdf / cdf[-1])

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """size replicate means."""
        return self.support[np.minimum(np.searchsorted(self.cdf, rng.random(size), side="right"),
                                       self.support.size - 1)]


def chunk_size(units: int) -> int:
    """Replicates per chunk for a layout of this many units."""
    return max(MIN_CHUNK, CHUNK_DRAWS // max(units, 1))


def chunk_seeds(seed: int, resamples: int, chunk: int) -> list[tuple[np.random.SeedSequence, int]]:
    """(seed, replicates) per chunk: the replicates depend on the seed (and the layout) alone, whatever runs them."""
    sizes = [min(chunk, resamples - start) for start in range(0, resamples, chunk)]
    return list(zip(np.random.SeedSequence(seed).spawn(len(sizes)), sizes, strict=True))


def run_chunks(work: Callable[[np.random.Generator, int], T], seed: int, resamples: int, units: int,
               workers: int | None) -> list[T]:
    """Apply work(rng, size) to every chunk, on threads (numpy releases the GIL in the heavy parts)."""
    chunks = chunk_seeds(seed, resamples, chunk_size(units))
    threads = max(1, min(workers or os.cpu_count() or 1, len(chunks)))
    if threads == 1:
        return [work(np.random.default_rng(s), n) for s, n in chunks]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda chunk: work(np.random.default_rng(chunk[0]), chunk[1]), chunks))


def bootstrap_domain_deltas(layout: Layout, differences: np.ndarray, resamples: int = RESAMPLES, seed: int = 0,
                            workers: int | None = None) -> np.ndarray:
    """(resamples, domains) replicate domain deltas of one run, already rescaled (see the module doc)."""
    sums = layout.unit_sums(differences)
    sizes = layout.unit_sizes
    observed = domain_means(layout, differences)
    spans = [slice(layout.bounds[d], layout.bounds[d + 1]) for d in range(len(layout.domains))]
    unit_items = [bool(np.all(sizes[span] == 1)) for span in spans]
    exact = [LatticeMean.of(sums[span]) if alone else None for span, alone in zip(spans, unit_items, strict=True)]

    def work(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty((size, len(layout.domains)))
        for d in range(len(layout.domains)):
            if exact[d] is not None:
                out[:, d] = exact[d].draw(rng, size)
                continue
            index = draw_domain(layout, d, rng, size)
            total = sums.take(index).sum(axis=1)
            out[:, d] = total / index.shape[1] if unit_items[d] else total / sizes.take(index).sum(axis=1)
        return out

    replicates = np.concatenate(run_chunks(work, seed, resamples, layout.units, workers))
    return observed + (replicates - observed) * layout.inflation()


def domain_means(layout: Layout, values: np.ndarray) -> np.ndarray:
    """Per-domain means of per-item values (last axis: items)."""
    per_domain = np.add.reduceat(layout.unit_sums(values), layout.bounds[:-1], axis=-1)
    return per_domain / layout.domain_items()


def sign_flip_p_value(layout: Layout, differences: np.ndarray, resamples: int = RESAMPLES, seed: int = 0) -> float:
    """Two-sided p-value of the macro delta by flipping the sign of each unit's summed difference."""
    sums = layout.unit_sums(differences)
    domain_of_unit = np.repeat(np.arange(len(layout.domains)), np.diff(layout.bounds))
    weights = sums / layout.domain_items()[domain_of_unit] / len(layout.domains)  # Δ = weights.sum()
    observed = abs(weights.sum())
    rng = np.random.default_rng([seed, SIGN_FLIP_STREAM])
    exceed = 0
    chunk = chunk_size(layout.units)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        bits = np.unpackbits(rng.integers(0, 256, size=(size, (layout.units + 7) // 8), dtype=np.uint8), axis=1,
                             count=layout.units)
        flipped = weights.sum() - 2.0 * (bits.astype(np.float64) @ weights)  # flipping a unit subtracts it twice
        exceed += int(np.count_nonzero(np.abs(flipped) >= observed - 1e-12))
    return (1 + exceed) / (1 + resamples)


def percentile_interval(replicates: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """[low, high] along the first axis: the (1 − c)/2 and (1 + c)/2 percentiles."""
    tail = (1 - confidence) / 2 * 100
    return np.percentile(replicates, [tail, 100 - tail], axis=0)


@dataclass(frozen=True)
class DomainSummary:
    """One domain of a run."""

    domain: str
    items: int
    base: float
    trained: float
    delta: float
    interval: tuple[float, float]


@dataclass(frozen=True)
class Summary:
    """Everything the results record states about a run's numbers."""

    domains: tuple[DomainSummary, ...]
    base: float
    trained: float
    delta: float
    interval: tuple[float, float]
    p_value: float
    normalized_gain: float | None
    verdict: str
    resamples: int
    confidence: float
    seed: int


def verdict(interval: tuple[float, float]) -> str:
    """One run alone: improves when the interval lies above 0, hurts below, otherwise no detectable change."""
    return IMPROVES if interval[0] > 0 else HURTS if interval[1] < 0 else NO_CHANGE


def normalized_gain(delta: float, base: float) -> float | None:
    """Δ / (1 − base): the share of the base model's headroom that training won (None without headroom)."""
    return delta / (1 - base) if base < 1 else None


def summarize(domains: Sequence[str], clusters: Sequence[str | None], base: Sequence[float],
              trained: Sequence[float], *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
              seed: int = 0, order: Sequence[str] = (), workers: int | None = None) -> Summary:
    """The statistics of one run from per-item means of the two arms (items scored in both arms only)."""
    base_arr, trained_arr = np.asarray(base, dtype=np.float64), np.asarray(trained, dtype=np.float64)
    if base_arr.shape != trained_arr.shape or base_arr.shape != (len(domains),):
        raise ValueError("base and trained need one mean per item")
    layout = make_layout(domains, clusters, order)
    differences = trained_arr - base_arr
    base_d, trained_d = domain_means(layout, base_arr), domain_means(layout, trained_arr)
    delta_d = trained_d - base_d
    replicates = bootstrap_domain_deltas(layout, differences, resamples, seed, workers)
    domain_intervals = percentile_interval(replicates, confidence)
    macro_interval = percentile_interval(replicates.mean(axis=1), confidence)
    items = layout.domain_items().astype(int)
    rows = tuple(DomainSummary(name, int(items[d]), float(base_d[d]), float(trained_d[d]), float(delta_d[d]),
                               (float(domain_intervals[0, d]), float(domain_intervals[1, d])))
                 for d, name in enumerate(layout.domains))
    macro_base, macro_trained = float(base_d.mean()), float(trained_d.mean())
    interval = (float(macro_interval[0]), float(macro_interval[1]))
    delta = float(delta_d.mean())
    return Summary(rows, macro_base, macro_trained, delta, interval,
                   sign_flip_p_value(layout, differences, resamples, seed), normalized_gain(delta, macro_base),
                   verdict(interval), resamples, confidence, seed)


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), in the input's order; O(n log n)."""
    p = np.asarray(p_values, dtype=np.float64)
    n = p.size
    if n == 0:
        return p
    order = np.argsort(p)
    scaled = p[order] * n / np.arange(1, n + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    q = np.empty(n)
    q[order] = np.minimum(adjusted, 1.0)
    return q


def item_means(samples: Sequence[Sequence[float]]) -> np.ndarray:
    """Per item, the mean reward over its K samples (a rectangular items × K array)."""
    array = np.asarray(samples, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] == 0:
        raise ValueError("samples must be an items × K array with K ≥ 1")
    return array.mean(axis=1)
