"""The spending guard: how many jobs may run at once and how many GPU-hours a period may use.

Configuration (repository variables in Actions, environment variables anywhere):
  ARENA_MAX_CONCURRENT_JOBS    jobs queued or running at once (default 2)
  ARENA_GPU_HOURS_PER_PERIOD   GPU-hours the jobs of one period may use, finished and running (default 200)
  ARENA_BUDGET_PERIOD_DAYS     the period's length in days, counted back from now (default 30)
  ARENA_JOB_GPU_HOURS          what a job without a ceiling in its spec may use (default 24)

The spend is what the records say the jobs really used: every job of the period counts, whatever its state
(succeeded, failed, cancelled, stale), with its GPU-hours over every segment. A job still running may use up to its
ceiling (launch.ceiling), so what is left of its ceiling is held back; a new job needs its whole ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from launch.settings import read_numbers
from launch.state import JobRecord


class BudgetConfigError(ValueError):
    """A budget variable that is not a number in range; the message names it."""


@dataclass(frozen=True)
class Budget:
    """Limits on what the arena spends."""

    max_concurrent: int = 2
    gpu_hours_per_period: float = 200.0
    period_days: int = 30
    job_gpu_hours: float = 24.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Budget:
        """The budget from environment variables (unset ones keep their defaults)."""
        got = read_numbers(env, (("ARENA_MAX_CONCURRENT_JOBS", "max_concurrent", int, 0, math.inf),
                                 ("ARENA_GPU_HOURS_PER_PERIOD", "gpu_hours_per_period", float, 0, math.inf),
                                 ("ARENA_BUDGET_PERIOD_DAYS", "period_days", int, 1, math.inf),
                                 ("ARENA_JOB_GPU_HOURS", "job_gpu_hours", float, 0, math.inf)), BudgetConfigError)
        return cls(max_concurrent=int(got.get("max_concurrent", cls.max_concurrent)),
                   gpu_hours_per_period=got.get("gpu_hours_per_period", cls.gpu_hours_per_period),
                   period_days=int(got.get("period_days", cls.period_days)),
                   job_gpu_hours=got.get("job_gpu_hours", cls.job_gpu_hours))

    def refusal(self, records: Iterable[JobRecord], now: datetime | None = None,
                needs: float | None = None) -> str | None:
        """Why one more job (that may use `needs` GPU-hours, its ceiling) may not start now, or None when it may."""
        now = now or datetime.now(UTC)
        needs = self.job_gpu_hours if needs is None else needs
        records = list(records)
        active = [r for r in records if r.active]
        if len(active) >= self.max_concurrent:
            names = ", ".join(f"{r.environment}@{r.commit[:7]}" for r in active[:5])
            return (f"{len(active)} job(s) are queued or running ({names}) and at most {self.max_concurrent} may run "
                    "at once (ARENA_MAX_CONCURRENT_JOBS); ask again when one finishes")
        since = now - timedelta(days=self.period_days)
        used = sum(r.gpu_hours for r in records if r.active or _when(r) >= since)
        held = sum(max(0.0, self._ceiling(r) - r.gpu_hours) for r in active)
        if used + held + needs > self.gpu_hours_per_period:
            return (f"the last {self.period_days} days used {used:.1f} GPU-hours, the running jobs may use {held:.1f} "
                    f"more (up to their ceilings), and this job may use {needs:.1f}: {used:.1f} + {held:.1f} + "
                    f"{needs:.1f} = {used + held + needs:.1f}, over the budget of {self.gpu_hours_per_period:.1f} "
                    "(ARENA_GPU_HOURS_PER_PERIOD); a maintainer can raise it")
        return None

    def _ceiling(self, record: JobRecord) -> float:
        try:
            spec = record.job_spec
        except ValueError:
            spec = None
        return spec.max_gpu_hours if spec is not None else self.job_gpu_hours


def _when(record: JobRecord) -> datetime:
    try:
        return datetime.strptime(record.updated_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return datetime.now(UTC)  # a record with an odd stamp counts as recent: never under-count spending
