"""Benchmark: ranking a comparison group of n environments, from their items files to every rank and rank set.

Synthetic groups: every environment scored the same suite of 1,600 items in 8 domains (clusters of 10 items: 160
resampling units), K = 4, one shared base arm, trained arms with effects spread around +3 points. Timed:

- the joint bootstrap (scoring.ranking.joint_replicates, 2,000 resamples): one matrix product per domain and chunk;
- the pairwise comparisons (n ≤ scoring.ranking.PAIRWISE_LIMIT): covariance of the replicates, a t test per pair,
  Benjamini–Hochberg for ranks and Holm for the simultaneous sets: O(n²) pairs;
- the range comparisons (the path above the limit): the bootstrap range's quantile and two sorted searches,
  O(n log n) after the bootstrap;
- the fairest baseline for the pairs: the same tests written as a loop over pairs (timed at small n, where it ends).

Shows where the pairwise path stops scaling (its pairs grow as n²: 50 million at 10,000 environments) and that the
range path ranks 10,000 environments in seconds.

    .venv/bin/python bench/ranking.py [--sizes 100,300,1000,3000,10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring import ranking
from scoring.items import ItemScores
from scoring.student_t import tail
from taskpkg.domains import DOMAINS

ITEMS = 1_600
K = 4
CLUSTER = 10

T = TypeVar("T")



def group(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, list[ItemScores]]:
    """n environments' macro deltas, degrees of freedom and items, on one shared suite and base arm."""
    rng = np.random.default_rng(seed)
    domains = [DOMAINS[i * len(DOMAINS) // ITEMS] for i in range(ITEMS)]
    clusters = [f"{domain}/{i // CLUSTER}" for i, domain in enumerate(domains)]  # 160 clusters of 10 items
    rate = rng.uniform(0.1, 0.7, ITEMS)
    base = tuple((rng.random((ITEMS, K)) < rate[:, None]).mean(axis=1))
    ids = tuple(f"{i:016x}" for i in range(ITEMS))
    effects = rng.normal(0.03, 0.03, n)
    scores = [ItemScores(f"{e:016x}", f"env-{e}", ("bench", "1.0.0"), K, ids, tuple(domains), tuple(clusters), base,
                         tuple((rng.random((ITEMS, K)) < np.clip(rate + effect, 0, 1)[:, None]).mean(axis=1)), ())
              for e, effect in enumerate(effects)]
    deltas = np.array([np.mean(np.subtract(s.trained, s.base)) for s in scores])
    return deltas, np.full(n, 40.0), scores


def best_of(rounds: int, work: Callable[[], T]) -> tuple[float, T]:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def pairs_by_loop(deltas: np.ndarray, replicates: np.ndarray, dfs: np.ndarray) -> int:
    """The pairwise t tests one pair at a time (the baseline): the number of pairs tested."""
    n, count = deltas.size, 0
    for j in range(n):
        for k in range(j + 1, n):
            spread = np.std(replicates[:, j] - replicates[:, k], ddof=1)
            tail(abs(deltas[j] - deltas[k]) / spread, min(dfs[j], dfs[k]))
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,300,1000,3000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loop-limit", type=int, default=300, help="largest n the pair-by-pair loop is timed at")
    args = parser.parse_args()
    print(f"{ITEMS} items, {len(DOMAINS)} domains, {ranking.RANK_RESAMPLES} resamples, best of {args.rounds}; "
          f"{os.cpu_count()} cores; pairwise up to n = {ranking.PAIRWISE_LIMIT}")
    print(f"{'n':>6} {'bootstrap':>10} {'pairwise':>10} {'range':>9} {'pair loop':>10} {'loop/pairwise':>14}")
    for n in (int(part) for part in args.sizes.split(",")):
        measure(n, args.rounds, args.loop_limit)


def measure(n: int, rounds: int, loop_limit: int) -> None:
    """One line of the table: every timing at group size n."""
    deltas, dfs, scores = group(n)
    boot_time, replicates = best_of(rounds, lambda: ranking.joint_replicates(scores))
    pairwise = loop = ratio = "–"
    if n <= ranking.PAIRWISE_LIMIT:
        pair_time, _ = best_of(rounds, lambda: ranking._pairwise_comparisons(deltas, replicates, dfs))
        pairwise = f"{pair_time:9.2f}s"
        if n <= loop_limit:
            loop_time, _ = best_of(1, lambda: pairs_by_loop(deltas, replicates, dfs))
            loop, ratio = f"{loop_time:9.2f}s", f"{loop_time / pair_time:13.1f}x"
    range_time, _ = best_of(rounds, lambda: ranking._range_comparisons(deltas, replicates))
    print(f"{n:>6} {boot_time:9.2f}s {pairwise:>10} {range_time:8.3f}s {loop:>10} {ratio:>14}", flush=True)


if __name__ == "__main__":
    main()
