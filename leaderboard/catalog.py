"""Everything the site shows, loaded and joined once: packages, results records with their standings, job states and
validation summaries. The statistics (verdicts, ranks, intervals) come from scoring; nothing is computed here.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from leaderboard.jobs import Job, load_jobs
from leaderboard.reports import ValidationSummary, load_summaries
from scoring.ranking import Standing, standings
from scoring.results import ResultRecord
from scoring.verify import load_checked
from taskpkg.discover import find_packages
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage


@dataclass(frozen=True)
class Entry:
    """One results record with its standing."""

    record: ResultRecord
    standing: Standing


@dataclass(frozen=True)
class Group:
    """Runs measured the same way (scoring.results.comparable_key): ranks are only shared within one."""

    key: tuple
    slug: str
    label: str
    suite_version: str | None
    current: tuple[Entry, ...]  # the ranked runs, one per environment, in rank order
    unranked: tuple[Entry, ...] = ()  # current runs that are not ranked (flagged, incomplete, ...), never with a rank

    @property
    def everyone(self) -> tuple[Entry, ...]:
        """Every current run: the ranked ones in rank order, then the unranked."""
        return self.current + self.unranked


@dataclass
class Catalog:
    """The joined inputs of one build."""

    packages: dict[str, TaskPackage]
    broken: list[str]
    entries: dict[str, list[Entry]]  # per environment, newest first
    groups: list[Group]  # the primary group first
    jobs: list[Job]
    summaries: dict[str, ValidationSummary]
    warnings: list[str] = field(default_factory=list)

    @property
    def primary(self) -> Group | None:
        """The group the front page ranks: the one holding the newest run."""
        return self.groups[0] if self.groups else None

    @cached_property
    def jobs_by_environment(self) -> dict[str, list[Job]]:
        """Each environment's jobs, newest update first."""
        found: dict[str, list[Job]] = defaultdict(list)
        for job in self.jobs:
            found[job.environment].append(job)
        return dict(found)

    def active_jobs(self, environment: str) -> list[Job]:
        """Queued or running jobs of the environment."""
        return [job for job in self.jobs_by_environment.get(environment, []) if job.active]

    def unscored(self) -> list[TaskPackage]:
        """Packages without any results record."""
        return [p for name, p in sorted(self.packages.items()) if name not in self.entries]

    def environment_names(self) -> list[str]:
        """Every environment with a page: scored ones and bundled packages."""
        return sorted(set(self.entries) | set(self.packages))


def load_environments(environments_dir: Path | None) -> tuple[dict[str, TaskPackage], list[str]]:
    """The packages that load, by name, and the folder names of those that do not."""
    packages: dict[str, TaskPackage] = {}
    broken: list[str] = []
    if environments_dir is not None and environments_dir.is_dir():
        for path in find_packages([environments_dir]):
            loaded = load_package(path)
            if loaded.package is None:
                broken.append(path.name)
            else:
                packages[loaded.package.name] = loaded.package
    return packages, sorted(broken)


SLUG_PART = re.compile(r"[^a-z0-9]+")


def group_label(record: ResultRecord) -> str:
    """How a group is named on the site."""
    suite = f"{record.suite} {record.suite_version}" if record.suite else "version-1 results"
    return f"{suite} · {record.base_model}"


def group_slug(record: ResultRecord, key: tuple) -> str:
    """A stable, readable URL part for a group."""
    readable = SLUG_PART.sub("-", f"{record.suite or 'v1'}-{record.suite_version or ''}-{record.base_model}".lower())
    return f"{readable.strip('-')[:60]}-{hashlib.sha256(repr(key).encode()).hexdigest()[:8]}"


def _rank_order(entry: Entry) -> tuple:
    rank = entry.standing.rank
    return (rank is None, rank or 0, -entry.record.macro_delta, entry.record.environment)


def _groups(entries: list[Entry]) -> list[Group]:
    members: dict[tuple, list[Entry]] = defaultdict(list)
    for entry in entries:
        members[entry.standing.group].append(entry)
    groups = []
    for key, group in members.items():
        current = sorted((e for e in group if not e.standing.superseded), key=_rank_order)
        newest = max(group, key=lambda e: (e.record.evaluated_at, e.record.run_id)).record
        groups.append((newest.evaluated_at, Group(key, group_slug(newest, key), group_label(newest),
                                                  newest.suite_version,
                                                  tuple(e for e in current if e.standing.rank is not None),
                                                  tuple(e for e in current if e.standing.rank is None))))
    return [g for _, g in sorted(groups, key=lambda pair: (pair[0], pair[1].slug), reverse=True)]


def load_catalog(environments_dir: Path | None, results_dir: Path | None, jobs_dir: Path | None = None,
                 reports_dir: Path | None = None, progress: Callable[[str], None] = lambda line: None) -> Catalog:
    """Read every input; raises scoring.results.ResultsError for a bad results record (one whose numbers do not
    follow from its items file among them)."""
    warnings: list[str] = []
    packages, broken = load_environments(environments_dir)
    progress(f"{len(packages)} packages read ({len(broken)} do not load)")
    runs = load_checked(results_dir)
    records = [run.record for run in runs]
    progress(f"{len(records)} results records read, every number recomputed from its items")
    ranked = standings(records, {run.record.run_id: run.items for run in runs if run.items is not None})
    progress("standings computed")
    entries = [Entry(r, ranked[r.run_id]) for r in records]
    by_environment: dict[str, list[Entry]] = defaultdict(list)
    for entry in sorted(entries, key=lambda e: (e.record.evaluated_at, e.record.run_id), reverse=True):
        by_environment[entry.record.environment].append(entry)
    return Catalog(packages=packages, broken=broken, entries=dict(by_environment), groups=_groups(entries),
                   jobs=load_jobs(jobs_dir, warnings), summaries=load_summaries(reports_dir, warnings),
                   warnings=warnings)
