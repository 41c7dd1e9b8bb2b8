"""Held-out results as the leaderboard page shows them today: one row per environment, from its current record.

Reading, validation and ranking of the records live in `scoring` (`scoring.results`: both the version-1 files
`results/<environment>.json` and the version-2 runs `results/<environment>/<run_id>.json`; `scoring.ranking`: which
run is current). This module only adapts the current records to the rows the template renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoring.ranking import standings
from scoring.results import ResultRecord, ResultsError, load_records

__all__ = ["DomainScore", "Result", "ResultsError", "load_results"]


@dataclass(frozen=True)
class DomainScore:
    """One held-out domain's mean scores."""

    domain: str
    base: float
    trained: float

    @property
    def improvement(self) -> float:
        """Trained minus base."""
        return self.trained - self.base


@dataclass(frozen=True)
class Result:
    """One environment's held-out evaluation."""

    environment: str
    model: str
    evaluated_at: str
    commit: str | None
    domains: tuple[DomainScore, ...]

    @property
    def base(self) -> float:
        """The base model's mean over the domains."""
        return sum(d.base for d in self.domains) / len(self.domains)

    @property
    def trained(self) -> float:
        """The trained model's mean over the domains."""
        return sum(d.trained for d in self.domains) / len(self.domains)

    @property
    def improvement(self) -> float:
        """The environment's score: mean improvement over the domains."""
        return self.trained - self.base


def _result(record: ResultRecord) -> Result:
    return Result(record.environment, record.base_model, record.evaluated_at, record.commit,
                  tuple(DomainScore(d.domain, d.base, d.trained) for d in record.domains))


def load_results(results_dir: Path | None) -> list[Result]:
    """Each environment's current record, best improvement first; [] when the folder is absent. Raises ResultsError."""
    records = load_records(results_dir)
    places = standings(records)
    current = [_result(r) for r in records if not places[r.run_id].superseded]
    return sorted(current, key=lambda r: (-r.improvement, r.environment))
