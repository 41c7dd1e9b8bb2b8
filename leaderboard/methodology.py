"""The numbers the methodology page states, taken from where the code keeps them.

The eight domains come from taskpkg; the bootstrap's method, resamples and confidence from the statistics block of
the runs on the site (what scoring actually used); the suite's composition from the runs' per-domain item counts;
the heatmap's colour steps from views. The policy numbers below are the ones scoring applies; tests keep them in
step with the records and the page.
"""

from __future__ import annotations

from collections import Counter

from leaderboard.catalog import Catalog
from leaderboard.numbers import points
from leaderboard.views import HEAT_STEPS, abbreviation
from scoring.contamination import NGRAM
from taskpkg.domains import DOMAINS

MAX_DOMAIN_SHARE = 0.20  # no held-out domain holds more than this share of the suite's items
FALSE_DISCOVERY_RATE = 0.05  # Benjamini-Hochberg level for the verdicts across runs


def statistics_used(catalog: Catalog) -> list[dict]:
    """Each distinct (method, resamples, confidence) among the current runs, with how many runs used it."""
    counts: Counter[tuple] = Counter()
    for group in catalog.groups:
        for entry in group.current:
            stats = entry.record.raw.get("statistics")
            if isinstance(stats, dict):
                counts[(str(stats.get("method")), stats.get("resamples"), stats.get("confidence"))] += 1
    return [{"method": m, "resamples": f"{r:,}" if isinstance(r, int) else str(r),
             "confidence": f"{c * 100:g}%" if isinstance(c, int | float) else str(c), "runs": n}
            for (m, r, c), n in sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))]


def suite_composition(catalog: Catalog) -> list[dict]:
    """Per suite version: each domain's items and share, from the newest run on that version."""
    newest: dict[str, object] = {}
    for entries in catalog.entries.values():
        for entry in entries:
            version = entry.record.suite_version
            if version and (version not in newest or entry.record.evaluated_at > newest[version].evaluated_at):
                newest[version] = entry.record
    out = []
    for version, record in sorted(newest.items(), reverse=True):
        items = {d.domain: d.items or 0 for d in record.domains}
        total = sum(items.values()) or 1
        out.append({"version": version, "suite": record.suite, "total": total,
                    "domains": [{"domain": d, "n": items.get(d, 0), "share": f"{items.get(d, 0) / total:.1%}"}
                                for d in DOMAINS]})
    return out


def methodology_view(catalog: Catalog) -> dict:
    """Everything the methodology page states as a number."""
    return {
        "domains": [{"domain": d, "abbr": abbreviation(d)} for d in DOMAINS], "domain_count": len(DOMAINS),
        "max_share": f"{MAX_DOMAIN_SHARE:.0%}", "fdr": f"{FALSE_DISCOVERY_RATE:.0%}",
        "ngram": NGRAM, "statistics": statistics_used(catalog),
        "composition": suite_composition(catalog),
        "heat_steps": [points(step) for step in HEAT_STEPS],
    }
