"""The statistics of a scored run: paired per-item differences, the macro delta with a stratified clustered
bootstrap interval, a sign-flip permutation p-value, the normalised gain; Benjamini–Hochberg across runs.

Pure numpy, no I/O. Definitions (docs in scoring/README.md):

- Per item: the mean reward over K samples of each arm; the paired difference trained − base.
- A domain's delta is the mean of its items' differences; the **macro delta** is the mean of the domain deltas, so
  every domain weighs the same whatever its item count.
- **Resampling units.** Within a domain, items that share a cluster id (a task family) are resampled together; an
  item without one is its own unit. A domain whose items all share one cluster has no between-cluster variation to
  measure, so its items are resampled one by one instead (the sample suite's one-package-per-domain case).
- **Standard errors.** A paired bootstrap stratified by domain: each replicate draws, in every domain independently,
  as many units as it has, with replacement, and recomputes each domain's delta (summed differences over summed item
  counts). The bootstrap's spread of a mean over m units is sqrt((m − 1) / m) too small; each domain's replicate
  deviations are scaled back up by sqrt(m / (m − 1)) (the rescaled bootstrap for stratified samples). The standard
  deviation of the replicates is the standard error. Chunks of replicates draw from child seeds of one SeedSequence,
  so the result depends on the seed only, never on the number of threads.
- **Interval: honest with few clusters.** A percentile interval of a cluster bootstrap is too narrow when a domain
  has only a few clusters (the bootstrap's spread is itself estimated from m units: 93.4% coverage at three clusters a
  domain in simulation). The interval is therefore Δ ± t · se with Student's t quantile at the degrees of freedom the
  clusters give: m − 1 for a domain of m units, and for the macro Δ Satterthwaite's ν = (Σ v_d)² / Σ (v_d² / (m_d −
  1)) over the domains' variance shares v_d. Simulated coverage: 96.8%, 95.6%, 94.4% at 3, 6, 12 clusters a domain
  (tests/test_scoring_statistics.py). A domain of a single unit has no spread to measure: its interval is [−1, 1].
- **Drawing.** Two exact shortcuts, neither changing the distribution: a domain of single items on a lattice
  (binary rewards) draws its mean from the exact bootstrap distribution (`LatticeMean`); any other domain looks its
  draws up k at a time in a table of every k-tuple's sum (`TupleSums`): one uniform index below m**k is k
  independent uniform unit draws, so k times fewer random numbers and lookups.
- **p-value.** Two-sided, from a paired sign-flip permutation test over the same units: under "no effect" the two
  arms of an item are exchangeable, so each unit's summed difference is equally likely to have either sign.
  p = (1 + #{|Δ*| ≥ |Δ|}) / (1 + B), which never reports 0.
- **Normalised gain** g = Δ / (1 − base), None when the base macro mean is 1.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

import numpy as np

from scoring.student_t import quantile

RESAMPLES = 10_000
CONFIDENCE = 0.95
CHUNK_DRAWS = 1 << 19  # unit draws per chunk: big enough to amortise numpy's per-call cost, few enough to share out
MIN_CHUNK = 256
PARALLEL_DRAWS = 1 << 22  # below this many draws in all, threads cost more than they save
INDEX_SPAN = 1 << 16  # indices below this are drawn as 16-bit pieces of raw random words


class Verdict(StrEnum):
    """What a trained model did to its environment's held-out score: one run from its interval (`verdict`), or among
    all runs after the correction for multiple comparisons (scoring.ranking)."""

    IMPROVES = "improves"
    NO_DETECTABLE_CHANGE = "no_detectable_change"
    HURTS = "hurts"

UNKNOWN_INTERVAL = (-1.0, 1.0)  # what a single unit tells of its domain's spread: nothing
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


def uniform_indices(rng: np.random.Generator, length: int, shape: tuple[int, ...]) -> np.ndarray:
    """Independent uniform integers below length, as intp, exactly uniform and cheap for length ≤ 2**16.

    Each is a 16-bit piece of the generator's raw output (four per 64-bit word); pieces at or past length · 2**s
    (the largest such multiple within 2**16, so fewer than half) are dropped, and the first ones kept are shifted
    right by s: a uniform number below length · 2**s, divided by 2**s, is uniform below length.
    """
    count = math.prod(shape)
    if length > INDEX_SPAN:
        return rng.integers(0, length, size=shape, dtype=np.intp)
    shift = 0
    while length << (shift + 1) <= INDEX_SPAN:
        shift += 1
    limit = length << shift
    if limit == INDEX_SPAN:
        kept = _raw_pieces(rng, count)
    else:
        share, wanted, parts = limit / INDEX_SPAN, count, []
        while wanted > 0:  # one round but rarely: the first draw covers six standard deviations of the drops
            drawn = _raw_pieces(rng, int(wanted / share + 6 * math.sqrt(wanted) / share) + 16)
            parts.append(np.compress(drawn < limit, drawn)[:wanted])  # branch-free, unlike a mask
            wanted -= parts[-1].size
        kept = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if shift:
        kept >>= shift
    return kept.astype(np.intp).reshape(shape)


def _raw_pieces(rng: np.random.Generator, count: int) -> np.ndarray:
    """count uniform 16-bit numbers: the generator's raw 64-bit words, split."""
    return rng.bit_generator.random_raw(-(-count // 4)).view(np.uint16)[:count]


def draw_domain(layout: Layout, domain: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """(size, m) unit indices (global) of one domain's m units, drawn with replacement."""
    m, start = layout.unit_count(domain), int(layout.bounds[domain])
    return uniform_indices(rng, m, (size, m)) + start


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


@dataclass(frozen=True)
class ClusterPacking:
    """A cluster's summed difference d and item count n packed into one float, d + n · scale, so that one lookup and
    one addition carry both (half the memory of a complex pair).

    scale is a power of two above twice the largest |Σ d| that m draws can reach, so a sum of packed values splits
    back exactly: Σ n = round(total / scale), Σ d = total − Σ n · scale. Exact when the differences lie on a dyadic
    lattice (binary rewards over K = 2**j samples); otherwise within about 2**-50 · m · max|d|, far below any
    Monte-Carlo error.
    """

    values: np.ndarray
    scale: float

    @classmethod
    def of(cls, sums: np.ndarray, sizes: np.ndarray) -> ClusterPacking:
        """The packing of one domain's clusters (summed differences and item counts)."""
        reach = sums.size * float(np.abs(sums).max(initial=0.0))
        scale = 2.0 ** math.ceil(math.log2(2 * reach + 2))
        return cls(sums + sizes * scale, scale)

    def ratio(self, totals: np.ndarray) -> np.ndarray:
        """Σ d / Σ n of each packed total."""
        items = np.rint(totals * (1 / self.scale))
        return (totals - items * self.scale) / items


class TupleSums:
    """Sums of k units drawn with replacement from a domain's m units, looked up in one table instead of added.

    Entry i of the table is the sum of the values at the k base-m digits of i, so a uniform index below m**k is k
    independent uniform draws. k is the largest with m**k ≤ 2**16 (16-bit indices; the table stays in cache) and
    k ≤ m. A replicate's m draws are m // k lookups plus m % k single draws. A cluster's two numbers travel together
    in one value (see `ClusterPacking`).
    """

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        m = values.size
        k = 1
        while k < m and m ** (k + 1) <= INDEX_SPAN:
            k += 1
        table = values
        for _ in range(k - 1):
            table = (table[:, None] + values[None, :]).ravel()
        self.k, self.table = k, table
        self.lookups, self.singles = divmod(m, k)

    @property
    def draws(self) -> int:
        """Random numbers (and lookups) per replicate."""
        return self.lookups + self.singles

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """size replicate sums of m units drawn with replacement."""
        total = self.table.take(uniform_indices(rng, self.table.size, (self.lookups, size))).sum(axis=0)
        if self.singles:
            total += self.values.take(uniform_indices(rng, self.values.size, (self.singles, size))).sum(axis=0)
        return total


def chunk_size(units: int, resamples: int) -> int:
    """Replicates per chunk for a layout of this many units: about CHUNK_DRAWS draws, the chunks of equal size (so
    threads share them out evenly)."""
    most = max(MIN_CHUNK, CHUNK_DRAWS // max(units, 1))
    chunks = max(1, -(-resamples // most))
    return max(1, -(-resamples // chunks))


def chunk_seeds(seed: int, resamples: int, chunk: int) -> list[tuple[np.random.SeedSequence, int]]:
    """(seed, replicates) per chunk: the replicates depend on the seed (and the layout) alone, whatever runs them."""
    sizes = [min(chunk, resamples - start) for start in range(0, resamples, chunk)]
    return list(zip(np.random.SeedSequence(seed).spawn(len(sizes)), sizes, strict=True))


def run_chunks(work: Callable[[np.random.Generator, int], T], seed: int, resamples: int, units: int,
               workers: int | None) -> list[T]:
    """Apply work(rng, size) to every chunk, on threads when the work is big enough to gain from them (numpy
    releases the GIL in the heavy parts only, so small work runs faster on one)."""
    chunks = chunk_seeds(seed, resamples, chunk_size(units, resamples))
    wanted = workers or (os.cpu_count() if units * resamples >= PARALLEL_DRAWS else 1) or 1
    threads = max(1, min(wanted, len(chunks)))
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
    packings = [None if alone else ClusterPacking.of(sums[span], sizes[span])
                for span, alone in zip(spans, unit_items, strict=True)]
    tuples = [None if lattice is not None else TupleSums(sums[span] if packing is None else packing.values)
              for span, lattice, packing in zip(spans, exact, packings, strict=True)]
    lookups = sum(1 if t is None else t.draws for t in tuples)

    def work(rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty((size, len(layout.domains)))
        for d, (lattice, table, packing) in enumerate(zip(exact, tuples, packings, strict=True)):
            if lattice is not None:
                out[:, d] = lattice.draw(rng, size)
            elif packing is None:
                out[:, d] = table.draw(rng, size) / layout.unit_count(d)
            else:
                out[:, d] = packing.ratio(table.draw(rng, size))
        return out

    replicates = np.concatenate(run_chunks(work, seed, resamples, lookups, workers))
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
    chunk = chunk_size(layout.units, resamples)
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


def satterthwaite(variances: np.ndarray, dfs: np.ndarray) -> float:
    """Degrees of freedom of a sum of independent variance estimates v_d with df_d each: (Σ v)² / Σ (v² / df).

    Parts without degrees of freedom (a single unit) add nothing; with no variance at all, the total df."""
    usable = dfs >= 1
    total = float(variances[usable].sum())
    if total <= 0:
        return float(dfs[usable].sum()) if usable.any() else 0.0
    return total**2 / float(np.sum(variances[usable] ** 2 / dfs[usable]))


def t_interval(center: float, se: float, df: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """center ± t_df · se, within [−1, 1]; UNKNOWN_INTERVAL when df < 1 (a single unit: no spread to measure)."""
    if df < 1:
        return UNKNOWN_INTERVAL
    half = quantile((1 + confidence) / 2, df) * se
    return (max(-1.0, center - half), min(1.0, center + half))


@dataclass(frozen=True)
class DomainSummary:
    """One domain of a run: units are clusters (clustered) or single items; df = units − 1."""

    domain: str
    items: int
    units: int
    clustered: bool
    base: float
    trained: float
    delta: float
    se: float
    interval: tuple[float, float]


@dataclass(frozen=True)
class Summary:
    """Everything the results record states about a run's numbers."""

    domains: tuple[DomainSummary, ...]
    base: float
    trained: float
    delta: float
    se: float
    df: float
    interval: tuple[float, float]
    p_value: float
    normalized_gain: float | None
    verdict: Verdict
    resamples: int
    confidence: float
    seed: int


def verdict(interval: tuple[float, float]) -> Verdict:
    """One run alone: improves when the interval lies above 0, hurts below, otherwise no detectable change."""
    return Verdict.IMPROVES if interval[0] > 0 else Verdict.HURTS if interval[1] < 0 else Verdict.NO_DETECTABLE_CHANGE


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
    domain_se = replicates.std(axis=0, ddof=1)
    units = np.diff(layout.bounds)
    macro_se = float(replicates.mean(axis=1).std(ddof=1))
    df = satterthwaite((domain_se / len(layout.domains)) ** 2, (units - 1).astype(np.float64))
    items = layout.domain_items().astype(int)
    rows = tuple(DomainSummary(name, int(items[d]), int(units[d]), layout.clustered[d], float(base_d[d]),
                               float(trained_d[d]), float(delta_d[d]), float(domain_se[d]),
                               t_interval(float(delta_d[d]), float(domain_se[d]), float(units[d] - 1), confidence))
                 for d, name in enumerate(layout.domains))
    macro_base, macro_trained = float(base_d.mean()), float(trained_d.mean())
    delta = float(delta_d.mean())
    interval = t_interval(delta, macro_se, df, confidence)
    return Summary(rows, macro_base, macro_trained, delta, macro_se, df, interval,
                   sign_flip_p_value(layout, differences, resamples, seed), normalized_gain(delta, macro_base),
                   verdict(interval), resamples, confidence, seed)


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
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
