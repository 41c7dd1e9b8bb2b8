"""TEMP stand-in for scoring's ranking: the agreed interface, so the leaderboard can be built before it lands.

Per comparable group, the newest record per environment is current (older ones are superseded); verdicts after
Benjamini-Hochberg at 5% over the current complete records' p-values; rank = 1 + entries significantly better, with
a crude interval from overlapping confidence intervals. The real module replaces this file whole.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from scoring.results import ResultRecord, comparable_key

FDR = 0.05


@dataclass(frozen=True)
class Standing:
    """Where one run stands among the runs it is comparable with."""

    run_id: str
    environment: str
    rank: int | None
    rank_interval: tuple[int, int] | None
    verdict: str
    q_value: float | None
    group: tuple
    superseded: bool


def _q_values(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    q, running = [0.0] * len(p_values), 1.0
    for position in range(len(order) - 1, -1, -1):
        i = order[position]
        running = min(running, p_values[i] * len(p_values) / (position + 1))
        q[i] = running
    return q


def _rankable(record: ResultRecord) -> bool:
    return record.complete and record.p_value is not None and record.contamination != "flagged"


def _group_standings(records: list[ResultRecord], group: tuple) -> list[Standing]:
    newest: dict[str, ResultRecord] = {}
    for record in sorted(records, key=lambda r: (r.evaluated_at, r.run_id)):
        newest[record.environment] = record
    current = [r for r in newest.values() if _rankable(r)]
    qs = dict(zip((r.run_id for r in current), _q_values([r.p_value or 0.0 for r in current]), strict=True))
    verdicts = {}
    for r in current:
        significant = qs[r.run_id] <= FDR
        verdicts[r.run_id] = ("improves" if r.macro_delta > 0 else "hurts") if significant else "no_detectable_change"
    ranked = [r for r in current if verdicts[r.run_id] != "no_detectable_change"]
    out = []
    for record in records:
        is_current = newest[record.environment] is record
        rank = interval = None
        if is_current and record.run_id in verdicts and verdicts[record.run_id] != "no_detectable_change":
            low, high = record.macro_interval or (record.macro_delta, record.macro_delta)
            better = sum(1 for o in ranked if o.macro_interval and o.macro_interval[0] > high)
            not_worse = sum(1 for o in ranked if o.macro_interval and o.macro_interval[1] >= low)
            rank, interval = 1 + better, (1 + better, max(1 + better, not_worse))
        verdict = verdicts.get(record.run_id, "incomplete" if not record.complete else "unranked")
        out.append(Standing(record.run_id, record.environment, rank, interval, verdict, qs.get(record.run_id), group,
                            not is_current))
    return out


def standings(records: list[ResultRecord], results_dir: Path | None = None) -> dict[str, Standing]:
    """Every record's standing, keyed by run_id."""
    groups: dict[tuple, list[ResultRecord]] = defaultdict(list)
    for record in records:
        groups[comparable_key(record)].append(record)
    return {s.run_id: s for group, members in groups.items() for s in _group_standings(members, group)}
