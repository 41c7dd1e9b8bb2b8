"""Standings across submissions: which run is current, which runs may be compared, verdicts under multiple
comparisons, and ranks that show ties as ties.

- **Current.** Per environment the newest record (by evaluated_at, then run_id) is current; older ones are
  superseded and never ranked.
- **Comparable groups.** Only records sharing suite, suite version, base model and base revision
  (`scoring.results.comparable_key`) are ranked together; records of different groups are never compared.
- **Verdicts.** Within a group, the current complete records' p-values are adjusted with Benjamini–Hochberg;
  q ≤ 0.05 gives "improves" or "hurts" by the delta's sign, otherwise "no_detectable_change". A record that is
  not complete is "incomplete", one without statistics (version 1) "untested": neither is ranked.
- **Rank** = 1 + the number of entries of the group significantly better, where j is significantly better than i
  when j's interval lies wholly above i's (two disjoint 95% intervals: a conservative test). Entries with no
  detectable change are unranked (rank None). Sorting the interval ends makes this O(n log n).
- **Rank interval.** With every entry's items file present (and the items agreeing on domain and cluster), a joint
  bootstrap resamples the shared units once per replicate for all entries and reads each entry's 2.5th and 97.5th
  percentile rank. Otherwise the conservative fallback from the intervals: from 1 + the entries certainly better
  (interval wholly above) to n − the entries certainly worse (interval wholly below).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.items import ItemScores, load_items
from scoring.results import ResultRecord, comparable_key
from scoring.statistics import (
    HURTS,
    IMPROVES,
    NO_CHANGE,
    benjamini_hochberg,
    draw_units,
    make_layout,
    run_chunks,
)
from scoring.statistics import verdict as interval_verdict
from taskpkg.domains import DOMAINS

ALPHA = 0.05
RANK_RESAMPLES = 1_000
RANK_CONFIDENCE = 0.95
RANK_SEED = 0
INCOMPLETE, UNTESTED = "incomplete", "untested"


@dataclass(frozen=True)
class Standing:
    """Where one record stands among all records."""

    run_id: str
    environment: str
    rank: int | None
    rank_interval: tuple[int, int] | None
    verdict: str  # improves | no_detectable_change | hurts | incomplete | untested
    q_value: float | None
    group: tuple
    superseded: bool


def standings(records: Sequence[ResultRecord], results_dir: Path | None = None) -> dict[str, Standing]:
    """Every record's standing, keyed by run_id. results_dir, when given, is searched for items files."""
    newest: dict[str, ResultRecord] = {}
    for record in records:
        held = newest.get(record.environment)
        if held is None or (record.evaluated, record.run_id) > (held.evaluated, held.run_id):
            newest[record.environment] = record
    out: dict[str, Standing] = {}
    groups: dict[tuple, list[ResultRecord]] = defaultdict(list)
    for record in records:
        group = comparable_key(record)
        if newest[record.environment] is not record:
            out[record.run_id] = Standing(record.run_id, record.environment, None, None, _alone(record), None,
                                          group, True)
        elif _rankable(record):
            groups[group].append(record)
        else:
            out[record.run_id] = Standing(record.run_id, record.environment, None, None, _alone(record), None,
                                          group, False)
    for group, members in groups.items():
        out.update(_rank_group(group, members, results_dir))
    return out


def _rankable(record: ResultRecord) -> bool:
    return record.complete and record.p_value is not None and record.macro_interval is not None


def _alone(record: ResultRecord) -> str:
    """A verdict from the record alone (for records outside any ranking)."""
    if not record.complete:
        return INCOMPLETE
    if record.macro_interval is None or record.p_value is None:
        return UNTESTED
    return interval_verdict(record.macro_interval)


def _rank_group(group: tuple, members: list[ResultRecord], results_dir: Path | None) -> dict[str, Standing]:
    deltas = np.array([r.macro_delta for r in members])
    lows = np.array([r.macro_interval[0] for r in members])  # type: ignore[index]
    highs = np.array([r.macro_interval[1] for r in members])  # type: ignore[index]
    q_values = benjamini_hochberg([r.p_value for r in members])  # type: ignore[misc]
    n = len(members)
    better = n - np.searchsorted(np.sort(lows), highs, side="right")  # entries whose low is above my high
    worse = np.searchsorted(np.sort(highs), lows, side="left")  # entries whose high is below my low
    intervals = _joint_rank_intervals(members, results_dir) if results_dir is not None and n > 1 else None
    if intervals is None:
        intervals = np.stack([1 + better, n - worse], axis=1)
    out = {}
    for i, record in enumerate(members):
        significant = q_values[i] <= ALPHA and deltas[i] != 0
        verdict = (IMPROVES if deltas[i] > 0 else HURTS) if significant else NO_CHANGE
        out[record.run_id] = Standing(
            record.run_id, record.environment, None if verdict == NO_CHANGE else int(1 + better[i]),
            (int(intervals[i, 0]), int(intervals[i, 1])), verdict, float(q_values[i]), group, False)
    return out


def _joint_rank_intervals(members: list[ResultRecord], results_dir: Path) -> np.ndarray | None:
    """Percentile rank intervals from a joint bootstrap over the shared items; None when an items file is missing
    or the files disagree about an item's domain or cluster."""
    scores = [load_items(results_dir, record) for record in members]
    if any(s is None for s in scores):
        return None
    present = [s for s in scores if s is not None]
    placement = _shared_placement(present)
    if placement is None:
        return None
    ids, domains, clusters = placement
    layout = make_layout(domains, clusters, DOMAINS)
    position = {item: i for i, item in enumerate(ids)}
    sums = np.zeros((layout.units, len(present)))
    counts = np.zeros((layout.units, len(present)))
    for e, score in enumerate(present):
        units = layout.item_unit[[position[i] for i in score.ids]]
        sums[:, e] = np.bincount(units, weights=np.subtract(score.trained, score.base), minlength=layout.units)
        counts[:, e] = np.bincount(units, minlength=layout.units)
    bounds = layout.bounds
    domain_sums = np.add.reduceat(sums, bounds[:-1], axis=0)
    domain_counts = np.add.reduceat(counts, bounds[:-1], axis=0)
    if np.any(domain_counts == 0):
        return None  # an entry has no item in some domain: the runs do not share the suite's domains
    observed = domain_sums / domain_counts  # (domains, entries)
    inflation = layout.inflation()[:, None]

    def work(rng: np.random.Generator, size: int) -> np.ndarray:
        macro = np.zeros((size, len(present)))
        for d, index in enumerate(draw_units(layout, rng, size)):
            start, m = int(bounds[d]), layout.unit_count(d)
            local = (index - start) + (np.arange(size)[:, None] * m)
            drawn = np.bincount(local.ravel(), minlength=size * m).reshape(size, m).astype(np.float64)
            numerator, denominator = drawn @ sums[start:start + m], drawn @ counts[start:start + m]
            replicate = np.divide(numerator, denominator, out=np.broadcast_to(observed[d], numerator.shape).copy(),
                                  where=denominator > 0)
            macro += observed[d] + (replicate - observed[d]) * inflation[d]
        return np.stack([_competition_ranks(row) for row in macro])

    ranks = np.concatenate(run_chunks(work, RANK_SEED, RANK_RESAMPLES, layout.units * len(present), None))
    tail = (1 - RANK_CONFIDENCE) / 2 * 100
    low = np.percentile(ranks, tail, axis=0, method="lower")
    high = np.percentile(ranks, 100 - tail, axis=0, method="higher")
    return np.stack([low, high], axis=1).astype(int)


def _shared_placement(scores: list[ItemScores]) -> tuple[list[str], list[str], list[str | None]] | None:
    """Every item id of the runs with its domain and cluster; None when two runs place an item differently."""
    placed: dict[str, tuple[str, str | None]] = {}
    for score in scores:
        for item, domain, cluster in zip(score.ids, score.domains, score.clusters, strict=True):
            if placed.setdefault(item, (domain, cluster)) != (domain, cluster):
                return None
    ids = list(placed)
    return ids, [placed[i][0] for i in ids], [placed[i][1] for i in ids]


def _competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 + the number of values strictly greater, for each value (ties share a rank)."""
    ordered = np.sort(values)
    return values.size - np.searchsorted(ordered, values, side="right") + 1
