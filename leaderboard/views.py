"""What each page shows, as plain data (dicts, lists, strings, numbers) for the templates.

Plain data keeps a page's inputs hashable (the incremental build skips a page whose view is unchanged) and keeps the
templates free of logic. Untrusted text stays text: the templates autoescape it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from leaderboard import charts, numbers
from leaderboard.catalog import Catalog, Entry, Group
from leaderboard.jobs import Job
from leaderboard.reports import ValidationSummary
from scoring.results import ResultRecord
from taskpkg.check_report import CheckStatus
from taskpkg.domains import DOMAINS
from taskpkg.package import TaskPackage

VERDICT_LABELS = {"improves": "improves", "hurts": "hurts", "no_detectable_change": "no detectable change"}
DOMAIN_ABBREVIATIONS = {"finance": "Fin", "healthcare": "Health", "law-government": "Law", "office-documents": "Office",
                        "customer-operations": "Cust", "science-engineering": "Sci", "cybersecurity-it": "Cyber",
                        "math-planning": "Math"}
HEAT_STEPS = (0.005, 0.015, 0.03, 0.06)  # |delta| thresholds between heat levels 0..4 (fractions)
UNRANKED_REASONS = {
    "flagged": "the contamination gate found overlap with the held-out suite",
    "incomplete": "some held-out items could not be scored (the base model's verifier still erred after retries)",
    "untested": "no per-item scores to recompute and compare its numbers with (a version-1 record)",
    "unpinned": "the base model's revision is not pinned, so its numbers cannot be reproduced",
    "incomparable": "its items differ from those the other runs of its group were scored on",
    "superseded": "a newer commit of the environment has been scored",
}
BADGE_TITLES = {
    "verified": "complete run, private suite, contamination gate passed",
    "pending": "a newer commit is queued or training",
    "flagged": "the contamination gate found overlap with the suite: not ranked",
    "superseded": "a newer commit has been scored",
    "incomplete": "some held-out items were not scored: not ranked",
}


@dataclass(frozen=True)
class Links:
    """Where the repository lives on GitHub, for PR, commit and contributor links (none when unknown)."""

    repository: str | None = None

    def pr(self, number: int | None) -> str | None:
        """The pull request's URL."""
        return f"https://github.com/{self.repository}/pull/{number}" if self.repository and number else None

    def commit(self, sha: str | None) -> str | None:
        """The commit's URL."""
        return f"https://github.com/{self.repository}/commit/{sha}" if self.repository and sha else None

    @staticmethod
    def person(login: str | None) -> str | None:
        """The GitHub profile's URL."""
        return f"https://github.com/{login}" if login else None


def abbreviation(domain: str) -> str:
    """A heatmap column's short heading."""
    return DOMAIN_ABBREVIATIONS.get(domain, domain[:5].title())


def verdict_label(verdict: str) -> str:
    """A verdict in words."""
    return VERDICT_LABELS.get(verdict, verdict.replace("_", " "))


def heat_level(delta: float) -> int:
    """-4..4: the heatmap colour step of a per-domain delta."""
    level = sum(1 for step in HEAT_STEPS if abs(delta) > step)
    return level if delta > 0 else -level


def badges(entry: Entry, jobs: list[Job]) -> list[dict]:
    """The badges of a run, each with its explanation."""
    record = entry.record
    names = []
    if record.complete and record.version >= 2 and record.contamination == "pass" and record.suite_info and \
            record.suite_info.public is False:
        names.append("verified")
    if record.contamination == "flagged":
        names.append("flagged")
    if not record.complete:
        names.append("incomplete")
    if entry.standing.superseded:
        names.append("superseded")
    if jobs and not entry.standing.superseded:
        names.append("pending")
    return [{"name": name, "title": BADGE_TITLES[name]} for name in names]


def heat_cells(record: ResultRecord) -> list[dict]:
    """One cell per arena domain (in DOMAINS order): the delta, its colour step and whether its interval holds 0."""
    by_domain = {d.domain: d for d in record.domains}
    cells = []
    for domain in DOMAINS:
        result = by_domain.get(domain)
        if result is None:
            cells.append({"domain": domain, "text": numbers.NO_VALUE, "level": "none", "sort": "",
                          "title": f"{domain}: not evaluated", "clear": False})
            continue
        clear = result.interval is not None and (result.interval[0] > 0 or result.interval[1] < 0)
        cells.append({"domain": domain, "text": numbers.points(result.delta), "level": str(heat_level(result.delta)),
                      "sort": f"{result.delta:.4f}", "clear": clear,
                      "title": f"{domain} 95% CI {numbers.interval(result.interval)}"})
    return cells


def rank_text(rank: int | None, tied: bool) -> str:
    """"3", "=3" when shared, "–" when unranked."""
    if rank is None:
        return numbers.NO_VALUE
    return f"={rank}" if tied else str(rank)


def rank_interval_text(pair: tuple[int, int] | None) -> str:
    """"2–5", or "" when the interval is a single rank or unknown."""
    return "" if pair is None or pair[0] == pair[1] else f"{pair[0]}–{pair[1]}"


def row(entry: Entry, position: int, catalog: Catalog, scale: tuple[float, float], tied: bool,
        links: Links) -> dict:
    """One index row."""
    record, standing = entry.record, entry.standing
    package = catalog.packages.get(record.environment)
    title = package.title if package else None
    domain = package.domain if package else ""
    return {
        "name": record.environment, "title": title, "domain": domain, "position": position,
        "rank": rank_text(standing.rank, tied), "rank_sort": standing.rank if standing.rank is not None else 10**9,
        "rank_interval": rank_interval_text(standing.rank_interval), "ranked": standing.rank is not None,
        "delta": numbers.points(record.macro_delta), "delta_sort": f"{record.macro_delta:.4f}",
        "interval": numbers.interval(record.macro_interval),
        "bar": charts.interval_bar(record.macro_delta, record.macro_interval, scale),
        "gain": numbers.percent(record.normalized_gain),
        "gain_sort": "" if record.normalized_gain is None else f"{record.normalized_gain:.4f}",
        "verdict": standing.verdict, "verdict_label": verdict_label(standing.verdict),
        "cells": heat_cells(record),
        "badges": badges(entry, catalog.active_jobs(record.environment)),
        "contributor": record.contributor, "contributor_url": Links.person(record.contributor),
        "pr": record.pr, "pr_url": links.pr(record.pr),
        "date": numbers.day(record.evaluated_at), "gpu_hours": numbers.hours(record.gpu_hours),
        "gpu_sort": "" if record.gpu_hours is None else f"{record.gpu_hours:.2f}",
        "search": " ".join(filter(None, (record.environment, title, record.contributor, domain))).lower(),
    }


def group_scale(group: Group) -> tuple[float, float]:
    """One interval-bar scale for a whole group, so bars on every page compare."""
    return charts.scale_for([e.record.macro_interval or (e.record.macro_delta,) * 2 for e in group.everyone])


def group_rows(group: Group, catalog: Catalog, links: Links) -> list[dict]:
    """The group's ranked runs as index rows, in rank order."""
    scale = group_scale(group)
    shared = Counter(e.standing.rank for e in group.current if e.standing.rank is not None)
    return [row(e, i, catalog, scale, shared[e.standing.rank] > 1, links) for i, e in enumerate(group.current)]


def unranked_rows(group: Group, catalog: Catalog, links: Links) -> list[dict]:
    """The group's current runs that are not ranked, each with why: never with a rank."""
    scale = group_scale(group)
    return [{**row(e, i, catalog, scale, False, links), **reason_view(e.standing.reason)}
            for i, e in enumerate(group.unranked)]


def reason_view(reason: str | None) -> dict:
    """Why a run is not ranked, as a short word and its explanation (empty for a ranked run)."""
    return {"reason": reason or "", "reason_text": UNRANKED_REASONS.get(reason or "", "")}


def domain_columns() -> list[dict]:
    """The heatmap's column headings."""
    return [{"domain": d, "abbr": abbreviation(d)} for d in DOMAINS]


def package_view(package: TaskPackage) -> dict:
    """What an environment page shows of its package."""
    return {"name": package.name, "title": package.title, "domain": package.domain, "version": package.version,
            "authors": [{"name": a.name, "github": a.github, "url": Links.person(a.github)} for a in package.authors],
            "license": package.license, "tags": list(package.tags), "difficulty": package.difficulty,
            "instances": package.instance_count, "body": package.body}


def summary_view(summary: ValidationSummary | None) -> dict | None:
    """The validation summary: counts per check status and the trials' timings."""
    if summary is None:
        return None
    statuses = Counter(str(check.status) for check in summary.checks)
    return {"verdict": str(summary.verdict), "mode": summary.mode, "started_at": summary.when,
            "passed": summary.passed, "total": len(summary.checks), "statuses": sorted(statuses.items()),
            "failed": [{"id": c.check_id, "title": c.title, "status": str(c.status)} for c in summary.checks
                       if c.status in (CheckStatus.FAILED, CheckStatus.WARNED)],
            "trials": [{"check_id": t.check_id, "agent": t.agent, "outcome": str(t.outcome),
                        "duration": f"{t.duration_s:.1f}"} for t in summary.trials]}


def run_view(entry: Entry, links: Links, scale: tuple[float, float]) -> dict:
    """One run on its environment's page: headline, per-domain results, manifest."""
    record, standing = entry.record, entry.standing
    training, suite = record.training, record.suite_info
    domains = [{"domain": d.domain, "item_count": d.items, "base": numbers.points(d.base, signed=False),
                "trained": numbers.points(d.trained, signed=False), "delta": numbers.points(d.delta),
                "interval": numbers.interval(d.interval), "level": str(heat_level(d.delta)),
                "bar": charts.interval_bar(d.delta, d.interval, scale), **units_view(d.units, d.clustered)}
               for d in record.domains]
    manifest = [
        ("run id", record.run_id), ("commit", record.commit), ("evaluated", record.evaluated_at),
        ("base model", f"{record.base_model} @ {record.base_revision}" if record.base_revision else record.base_model),
        ("suite", f"{record.suite} {record.suite_version}" if record.suite else None),
        ("suite items", suite.items if suite else None), ("samples per item", record.samples_per_item),
        ("recipe", record.recipe), ("recipe hash", training.recipe_hash if training else None), ("steps", record.steps),
        ("GPU-hours", numbers.hours(record.gpu_hours) if record.gpu_hours is not None else None),
        ("wall time (s)", training.wall_s if training else None), ("hardware", training.hardware if training else None),
        ("training manifest", training.manifest_digest if training else None), ("adapter", record.adapter_digest),
        ("statistics", _statistics_text(record)),
        ("macro standard error", f"{record.macro_se * 100:.2f} points, {record.macro_df:.1f} degrees of freedom"
         if record.macro_se is not None and record.macro_df is not None else None),
        ("suite digest", suite.digest if suite else None), ("harness", record.harness_version),
        ("sampling", ", ".join(f"{k} {v}" for k, v in record.sampling.items()) if record.sampling else None),
        ("libraries", ", ".join(f"{k} {v}" for k, v in record.libraries.items()) if record.libraries else None),
        ("verifier errors", _errors_text(record)),
        ("contamination gate", ", ".join(f"{k} {v}" for k, v in (record.gate or {}).items()) or None),
        ("results version", record.version),
    ]
    return {
        "run_id": record.run_id, "anchor": f"run-{record.run_id[:12]}", "commit": record.commit,
        "commit_short": (record.commit or "")[:10], "commit_url": links.commit(record.commit),
        "pr": record.pr, "pr_url": links.pr(record.pr), "contributor": record.contributor,
        "contributor_url": Links.person(record.contributor), "date": numbers.day(record.evaluated_at),
        "rank": rank_text(standing.rank, False), "rank_interval": rank_interval_text(standing.rank_interval),
        "verdict": standing.verdict, "verdict_label": verdict_label(standing.verdict),
        "q_value": numbers.q_value(standing.q_value), "p_value": numbers.q_value(record.p_value),
        "delta": numbers.points(record.macro_delta), "interval": numbers.interval(record.macro_interval),
        "bar": charts.interval_bar(record.macro_delta, record.macro_interval, scale),
        "base": numbers.points(record.macro_base, signed=False),
        "trained": numbers.points(record.macro_trained, signed=False),
        "gain": numbers.percent(record.normalized_gain), "superseded": standing.superseded,
        **reason_view(None if standing.superseded else standing.reason),
        "few_units": _grouped_notes(domains),
        "domains": domains, "curve": charts.reward_curve(record.reward_curve),
        "manifest": [{"key": k, "value": str(v)} for k, v in manifest if v is not None],
        "gpu_hours": numbers.hours(record.gpu_hours),
    }


FEW_UNITS = 6  # below this many clusters a domain's interval is wide (t at units − 1 degrees of freedom)


def units_view(units: int | None, clustered: bool | None) -> dict:
    """What a domain's interval rests on: its clusters, or one family's items; whether that is few."""
    if units is None:
        return {"units": numbers.NO_VALUE, "few": False, "units_note": ""}
    if not clustered:
        return {"units": f"{units} items, 1 family", "few": True,
                "units_note": "one task family: the interval speaks for new instances of that family only, not for "
                              "other tasks of the domain"}
    few = units < FEW_UNITS
    return {"units": f"{units} clusters", "few": few,
            "units_note": f"{units} clusters: a t interval at {units - 1} degrees of freedom, wide but honest"
            if few else ""}


def _grouped_notes(domains: list[dict]) -> list[dict]:
    """The few-units notes of a run's domains, one per distinct note with the domains it applies to."""
    notes: dict[str, list[str]] = {}
    for d in domains:
        if d["few"]:
            notes.setdefault(d["units_note"], []).append(d["domain"])
    return [{"domain": ", ".join(names), "units_note": note} for note, names in notes.items()]


def _errors_text(record: ResultRecord) -> str | None:
    if record.errors is None:
        return None
    parts = [f"{arm}: {counts.retried} retried, {counts.unresolved} unresolved"
             for arm, counts in record.errors.items()]
    return f"up to {record.retries} retries; " + "; ".join(parts)


def _statistics_text(record: ResultRecord) -> str | None:
    settings = record.settings
    if settings is None:
        return None
    return (f"{record.statistics_method}, {settings.resamples:,} resamples, "
            f"{settings.confidence * 100:g}% confidence, seed {settings.seed}")


def environment_view(name: str, catalog: Catalog, links: Links) -> dict:
    """An environment page: its package, its current run and its history across commits."""
    entries = catalog.entries.get(name, [])
    package = catalog.packages.get(name)
    intervals = [pair for e in entries for pair in [e.record.macro_interval or (e.record.macro_delta,) * 2,
                                                     *(d.interval or (d.delta, d.delta) for d in e.record.domains)]]
    scale = charts.scale_for(intervals)
    current = next((e for e in entries if not e.standing.superseded), entries[0] if entries else None)
    return {
        "name": name, "package": package_view(package) if package else None,
        "current": run_view(current, links, scale) if current else None,
        "badges": badges(current, catalog.active_jobs(name)) if current else [],
        "history": [{**run_view(e, links, scale), "badges": badges(e, [])} for e in entries],
        "validation": summary_view(catalog.summaries.get(name)),
        "jobs": [job_view(j, links) for j in catalog.jobs_by_environment.get(name, [])],
    }


def job_view(job: Job, links: Links) -> dict:
    """A job in the pending list."""
    return {"environment": job.environment, "commit_short": job.commit[:10], "commit_url": links.commit(job.commit),
            "pr": job.pr, "pr_url": links.pr(job.pr), "state": job.state, "backend": job.backend,
            "requested_by": job.requested_by, "requested_by_url": Links.person(job.requested_by),
            "requested_at": job.requested_at, "updated_at": job.updated_at}
