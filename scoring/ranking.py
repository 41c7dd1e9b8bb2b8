"""Standings across submissions: which run is current, which runs may be compared, verdicts under multiple
comparisons, and ranks derived from paired comparisons of the environments themselves.

- **Current.** Per environment the newest record (by evaluated_at, then run_id) is current; older ones are
  superseded and never ranked.
- **Ranked at all.** A current record is ranked only when it is complete, tested (version 2, with its items file,
  whose numbers were recomputed: scoring.verify), passed the contamination gate and names a pinned base revision.
  Every other record keeps its own numbers and a `reason` why it is not ranked: superseded, incomplete, untested,
  flagged, unpinned, or incomparable (its items differ from those of the runs it would be compared with).
- **Comparable groups.** Only records that agree on the suite (name, version and content digest), base model and
  revision, K, harness version, sampling settings and confidence level (`scoring.results.comparable_key`) are
  ranked together.
- **Verdicts** (each run against the base model): the group's p-values adjusted with Benjamini–Hochberg; q ≤ ALPHA
  gives improves or hurts by the sign of Δ, otherwise no detectable change.
- **Comparisons between environments.** One joint bootstrap resamples the shared units (clusters within domains)
  once per replicate for every run of the group, so each replicate holds every run's macro Δ on the same draw: the
  runs are paired on their shared items and clusters, and the base arm they share cancels in a difference. For a
  pair (j, k) the standard error of Δ_j − Δ_k is the spread of the replicates' differences, T = (Δ_j − Δ_k) / se,
  and p is two-sided from Student's t at the smaller of the two runs' degrees of freedom (honest with few
  clusters, like each run's own interval).
- **Rank** = 1 + the number of runs better than this one at a false discovery rate of ALPHA across all pairs
  (Benjamini–Hochberg): runs that cannot be told apart share a rank.
- **Rank confidence set** (simultaneous, level 1 − ALPHA for all runs at once) = [1 + the runs better, n − the runs
  worse] by Holm's procedure across all pairs, which controls the chance of any false claim. Holm's rejections are a
  subset of Benjamini–Hochberg's at the same level, and a run cannot be both better and worse than another, so the
  rank always lies in its set.
- **Large groups.** Pairs grow as n²; above PAIRWISE_LIMIT runs the comparisons use the bootstrap range instead:
  j is better than i when Δ_j − Δ_i exceeds the (1 − ALPHA) quantile of the replicates' range max_j e_j − min_j e_j
  (e the centred replicates), which bounds every pair at once (family-wise, hence also false-discovery control).
  Rank = 1 + the runs better, the set [rank, n − the runs worse]; sorting makes it O(n log n) after the bootstrap.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from scoring.items import ItemScores
from scoring.results import ResultRecord, comparable_key
from scoring.statistics import (
    Verdict,
    benjamini_hochberg,
    draw_units,
    make_layout,
    run_chunks,
)
from scoring.statistics import verdict as interval_verdict
from scoring.student_t import two_sided_p
from taskpkg.domains import DOMAINS

ALPHA = 0.05
RANK_RESAMPLES = 2_000
RANK_SEED = 0
PAIRWISE_LIMIT = 1_000
UNPINNED = ("", "unpinned", "latest", "main")


class Unranked(StrEnum):
    """Why a record is not ranked (a Standing's `reason`); the first two are also its verdict."""

    INCOMPLETE = "incomplete"  # some held-out items were not scored
    UNTESTED = "untested"  # no per-item scores to test it with (a version-1 record, or its items file missing)
    FLAGGED = "flagged"  # the contamination gate flagged it
    SUPERSEDED = "superseded"  # a newer run of its environment stands for it
    UNPINNED = "unpinned"  # its base model's revision is not pinned
    INCOMPARABLE = "incomparable"  # it scored other items than the rest of its group



@dataclass(frozen=True)
class Standing:
    """Where one record stands among all records."""

    run_id: str
    environment: str
    rank: int | None
    rank_interval: tuple[int, int] | None
    verdict: Verdict | Unranked  # improves, no_detectable_change or hurts; else incomplete or untested
    q_value: float | None
    group: tuple[object, ...]
    superseded: bool
    reason: Unranked | None = None  # why it is not ranked (None: ranked)


def standings(records: Sequence[ResultRecord], items: Mapping[str, ItemScores] | None = None) -> dict[str, Standing]:
    """Every record's standing, keyed by run_id; items maps run ids to their checked items files."""
    items = items or {}
    newest: dict[str, ResultRecord] = {}
    for record in records:
        held = newest.get(record.environment)
        if held is None or (record.evaluated, record.run_id) > (held.evaluated, held.run_id):
            newest[record.environment] = record
    out: dict[str, Standing] = {}
    groups: dict[tuple[object, ...], list[ResultRecord]] = defaultdict(list)
    for record in records:
        superseded = newest[record.environment] is not record
        reason = Unranked.SUPERSEDED if superseded else unranked_reason(record, record.run_id in items)
        if reason is None:
            groups[comparable_key(record)].append(record)
        else:
            out[record.run_id] = _unranked(record, reason, superseded)
    for group, members in groups.items():
        out.update(_rank_group(group, members, items))
    return out


def unranked_reason(record: ResultRecord, has_items: bool) -> Unranked | None:
    """Why a current record cannot be ranked, or None when it can."""
    if not record.complete:
        return Unranked.INCOMPLETE
    if record.version != 2 or record.macro_interval is None or record.p_value is None or not has_items:
        return Unranked.UNTESTED
    if record.contamination == "flagged":
        return Unranked.FLAGGED
    if (record.base_revision or "").strip().lower() in UNPINNED:
        return Unranked.UNPINNED
    return None


def _unranked(record: ResultRecord, reason: Unranked, superseded: bool) -> Standing:
    verdict: Verdict | Unranked = reason if reason in (Unranked.INCOMPLETE, Unranked.UNTESTED) \
        else interval_verdict(record.macro_interval) if record.macro_interval else Unranked.UNTESTED
    return Standing(record.run_id, record.environment, None, None, verdict, None, comparable_key(record),
                    superseded, reason)


def _placement(scores: ItemScores) -> str:
    """A digest of which items a run scored, in which domain and cluster: runs are paired only on the same ones."""
    rows = sorted(zip(scores.ids, scores.domains, scores.clusters, strict=True))
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def _rank_group(group: tuple[object, ...], members: list[ResultRecord],
                items: Mapping[str, ItemScores]) -> dict[str, Standing]:
    placements = [_placement(items[r.run_id]) for r in members]
    common = max(set(placements), key=lambda p: (placements.count(p), p))
    out = {r.run_id: _unranked(r, Unranked.INCOMPARABLE, False) for r, p in zip(members, placements, strict=True)
           if p != common}
    members = [r for r, p in zip(members, placements, strict=True) if p == common]
    deltas = np.array([r.macro_delta for r in members])
    q_values = benjamini_hochberg([r.p_value for r in members if r.p_value is not None])  # unranked_reason: all have p
    better, better_sure, worse_sure = compare(members, [items[r.run_id] for r in members])
    n = len(members)
    for i, record in enumerate(members):
        significant = q_values[i] <= ALPHA and deltas[i] != 0
        verdict = ((Verdict.IMPROVES if deltas[i] > 0 else Verdict.HURTS) if significant
                   else Verdict.NO_DETECTABLE_CHANGE)
        out[record.run_id] = Standing(record.run_id, record.environment, int(1 + better[i]),
                                      (int(1 + better_sure[i]), int(n - worse_sure[i])), verdict,
                                      float(q_values[i]), group, False)
    return out


def compare(members: Sequence[ResultRecord], scores: Sequence[ItemScores],
            resamples: int = RANK_RESAMPLES, seed: int = RANK_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run: how many runs are better at a false discovery rate of ALPHA, and how many are surely better and
    surely worse (simultaneously, at level ALPHA); from one joint bootstrap (see the module doc)."""
    n = len(members)
    if n == 1:
        zero = np.zeros(1, dtype=np.intp)
        return zero, zero, zero
    deltas = np.array([r.macro_delta for r in members])
    replicates = joint_replicates(scores, resamples, seed)
    if n > PAIRWISE_LIMIT:
        return _range_comparisons(deltas, replicates)
    dfs = np.array([r.macro_df if r.macro_df is not None else np.inf for r in members])
    return _pairwise_comparisons(deltas, replicates, dfs)


def joint_replicates(scores: Sequence[ItemScores], resamples: int = RANK_RESAMPLES,
                     seed: int = RANK_SEED) -> np.ndarray:
    """(resamples, runs) replicate macro Δs of runs that scored the same items, all drawn from the same resampled
    units per replicate (each domain's deviations rescaled like a run's own bootstrap)."""
    first = scores[0]
    layout = make_layout(first.domains, first.clusters, DOMAINS)
    position = {item: i for i, item in enumerate(first.ids)}
    sums = np.empty((layout.units, len(scores)))
    for e, score in enumerate(scores):
        order = np.fromiter((position[i] for i in score.ids), dtype=np.intp, count=len(score.ids))
        units = layout.item_unit[order]
        sums[:, e] = np.bincount(units, weights=np.subtract(score.trained, score.base), minlength=layout.units)
    sizes, bounds = layout.unit_sizes, layout.bounds
    observed = np.add.reduceat(sums, bounds[:-1], axis=0) / layout.domain_items()[:, None]  # (domains, runs)
    inflation = layout.inflation()
    domains = len(layout.domains)

    def work(rng: np.random.Generator, size: int) -> np.ndarray:
        macro = np.zeros((size, len(scores)))
        for d, index in enumerate(draw_units(layout, rng, size)):
            start, m = int(bounds[d]), layout.unit_count(d)
            local = (index - start) + (np.arange(size)[:, None] * m)
            drawn = np.bincount(local.ravel(), minlength=size * m).reshape(size, m).astype(np.float64)
            replicate = (drawn @ sums[start:start + m]) / (drawn @ sizes[start:start + m])[:, None]
            macro += observed[d] + (replicate - observed[d]) * inflation[d]
        return macro / domains

    return np.concatenate(run_chunks(work, seed, resamples, layout.units * len(scores), None))


def _pairwise_comparisons(deltas: np.ndarray, replicates: np.ndarray,
                          dfs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = deltas.size
    centred = replicates - replicates.mean(axis=0)
    covariance = centred.T @ centred / (replicates.shape[0] - 1)
    j, k = np.triu_indices(n, 1)
    variance = np.maximum(covariance[j, j] + covariance[k, k] - 2 * covariance[j, k], 0.0)
    difference = deltas[j] - deltas[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(variance > 0, np.abs(difference) / np.sqrt(variance), np.where(difference != 0, np.inf, 0.0))
    p = two_sided_p(t, np.minimum(dfs[j], dfs[k]))
    discovered = benjamini_hochberg(p) <= ALPHA
    sure = holm(p, ALPHA)
    return (_count_better(j, k, difference, discovered, n), _count_better(j, k, difference, sure, n),
            _count_better(j, k, -difference, sure, n))


def _count_better(j: np.ndarray, k: np.ndarray, difference: np.ndarray, found: np.ndarray, n: int) -> np.ndarray:
    """Per run, how many runs beat it among the found pairs (difference = Δ_j − Δ_k of pair (j, k))."""
    winners_over_k = found & (difference > 0)  # j beats k
    winners_over_j = found & (difference < 0)  # k beats j
    return np.bincount(k[winners_over_k], minlength=n) + np.bincount(j[winners_over_j], minlength=n)


def holm(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down rejections (family-wise error ≤ alpha), in the input's order; O(m log m)."""
    m = p_values.size
    order = np.argsort(p_values, kind="stable")
    passes = p_values[order] <= alpha / (m - np.arange(m))
    stop = int(np.argmin(passes)) if not passes.all() else m
    rejected = np.zeros(m, dtype=bool)
    rejected[order[:stop]] = True
    return rejected


def _range_comparisons(deltas: np.ndarray, replicates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    centred = replicates - replicates.mean(axis=0)
    spread = centred.max(axis=1) - centred.min(axis=1)
    critical = float(np.quantile(spread, 1 - ALPHA))
    ordered = np.sort(deltas)
    better = deltas.size - np.searchsorted(ordered, deltas + critical, side="right")
    worse = np.searchsorted(ordered, deltas - critical, side="left")
    return better, better, worse
