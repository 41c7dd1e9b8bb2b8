"""The numbers the methodology page states, taken from where the code keeps them.

The eight domains come from taskpkg; the bootstrap's method, resamples and confidence from the statistics block of
the runs on the site (what scoring actually used); the suite's composition from the runs' per-domain item counts;
the heatmap's colour steps from views. The policy numbers below are the ones scoring applies; tests keep them in
step with the records and the page.
"""

from __future__ import annotations

import statistics
from collections import Counter

from leaderboard.catalog import Catalog
from leaderboard.numbers import points
from leaderboard.views import HEAT_STEPS, abbreviation
from scoring.contamination import NGRAM
from scoring.ranking import ALPHA, PAIRWISE_LIMIT, RANK_RESAMPLES
from scoring.results import ResultRecord
from scoring.student_t import quantile
from taskpkg.domains import DOMAINS

MAX_DOMAIN_SHARE = 0.20  # no held-out domain holds more than this share of the suite's items
FALSE_DISCOVERY_RATE = ALPHA  # Benjamini-Hochberg level for the verdicts and the comparisons across runs
POWER = 0.80  # the minimum detectable effect is the Δ found with this probability at a 5% two-sided level
# Simulated coverage of the 95% interval of the macro Δ (tests/test_scoring_statistics.py, 1,500 suites each)
COVERAGE = {3: "96.8%", 6: "95.6%", 12: "94.4%"}


def statistics_used(catalog: Catalog) -> list[dict]:
    """Each distinct (method, resamples, confidence) among the current runs, with how many runs used it."""
    counts: Counter[tuple] = Counter()
    for group in catalog.groups:
        for entry in group.everyone:
            record = entry.record
            if record.settings is not None:
                counts[(str(record.statistics_method), record.settings.resamples, record.settings.confidence)] += 1
    return [{"method": m, "resamples": f"{r:,}" if isinstance(r, int) else str(r),
             "confidence": f"{c * 100:g}%" if isinstance(c, int | float) else str(c), "runs": n}
            for (m, r, c), n in sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))]


def retries_used(catalog: Catalog) -> str:
    """How many times the current runs played an errored episode again (as their records state)."""
    found = sorted({e.record.retries for g in catalog.groups for e in g.everyone if e.record.retries is not None})
    return " or ".join(str(n) for n in found) if found else "a fixed number of"


def minimum_detectable_effect(se: float, df: float, power: float = POWER, alpha: float = ALPHA) -> float:
    """The smallest true Δ that a run with this standard error finds (interval above 0) with the given power:
    (t_{1 − α/2} + t_{power}) · se at df degrees of freedom."""
    return (quantile(1 - alpha / 2, df) + quantile(power, df)) * se


def suite_mde(runs: list[ResultRecord]) -> str | None:
    """The suite's minimum detectable effect at its size: from the median standard error and degrees of freedom
    of its version-2 runs."""
    measured = [(r.macro_se, r.macro_df) for r in runs if r.macro_se is not None and r.macro_df]
    if not measured:
        return None
    se = statistics.median(m[0] for m in measured)
    df = statistics.median(m[1] for m in measured)
    return points(minimum_detectable_effect(se, df), signed=False)


def suite_composition(catalog: Catalog) -> list[dict]:
    """Per suite version: each domain's items, share and resampling units, from the newest run on that version,
    and the version's minimum detectable effect."""
    newest: dict[str, ResultRecord] = {}
    runs: dict[str, list[ResultRecord]] = {}
    for entries in catalog.entries.values():
        for entry in entries:
            version = entry.record.suite_version
            if not version:
                continue
            runs.setdefault(version, []).append(entry.record)
            if version not in newest or entry.record.evaluated_at > newest[version].evaluated_at:
                newest[version] = entry.record
    out = []
    for version, record in sorted(newest.items(), reverse=True):
        items = {d.domain: d.items or 0 for d in record.domains}
        units = {d.domain: (f"{d.units} clusters" if d.clustered else "1 family") if d.units else "–"
                 for d in record.domains}
        total = sum(items.values()) or 1
        out.append({"version": version, "suite": record.suite, "total": total, "mde": suite_mde(runs[version]),
                    "runs": len(runs[version]),
                    "domains": [{"domain": d, "n": items.get(d, 0), "share": f"{items.get(d, 0) / total:.1%}",
                                 "units": units.get(d, "–")} for d in DOMAINS]})
    return out


def methodology_view(catalog: Catalog) -> dict:
    """Everything the methodology page states as a number."""
    return {
        "domains": [{"domain": d, "abbr": abbreviation(d)} for d in DOMAINS], "domain_count": len(DOMAINS),
        "max_share": f"{MAX_DOMAIN_SHARE:.0%}", "fdr": f"{FALSE_DISCOVERY_RATE:.0%}",
        "ngram": NGRAM, "statistics": statistics_used(catalog),
        "composition": suite_composition(catalog),
        "heat_steps": [points(step) for step in HEAT_STEPS],
        "retries": retries_used(catalog), "rank_resamples": f"{RANK_RESAMPLES:,}",
        "pairwise_limit": f"{PAIRWISE_LIMIT:,}",
        "power": f"{POWER:.0%}", "coverage": [{"clusters": k, "coverage": v} for k, v in COVERAGE.items()],
    }
