"""Where a job runs. Every backend runs the same job (launch.job_run) and answers the same questions:

- `launch(spec, environment)` starts the job, or finds it when one of that name exists, and returns its id;
- `states(names)` says where each named job stands, in one call however many jobs there are;
- `cancel(ids)` stops jobs; `logs(id)` is a job's log so far (the result block is read from it);
- `phase_log(spec, phase)` is one phase's output (the package's output lives there, for maintainers only);
- `artifact_location(spec)` says where the job's artifacts are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from launch.spec import JobSpec
from launch.state import JobState

RECOVERING = "recovering"  # a backend's word only: the job restarts after a fault; its record stays running


class BackendError(RuntimeError):
    """The backend cannot be reached or refused; the message says what to check."""


@dataclass(frozen=True)
class BackendJob:
    """A job as its backend reports it."""

    id: str
    name: str
    state: str  # a JobState, or RECOVERING
    detail: str | None = None
    recoveries: int = 0
    gpu_hours: float = 0.0  # every segment's, recoveries included
    hours: float = 0.0  # wall-clock hours since the job first started, every segment counted

    @property
    def finished(self) -> bool:
        return self.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


class Backend(Protocol):
    """A place where jobs run."""

    name: str

    def launch(self, spec: JobSpec, environment: Path | None = None) -> str:
        """Start the job (or find the running job of that name); returns its id."""

    def states(self, names: list[str]) -> dict[str, BackendJob]:
        """The named jobs the backend knows, by name (one request to the backend)."""

    def cancel(self, job_ids: list[str]) -> None:
        """Stop these jobs."""

    def logs(self, job_id: str) -> str:
        """The job's log so far."""

    def phase_log(self, spec: JobSpec, phase: str) -> str:
        """One phase's output so far (BackendError says where to read it when the backend cannot)."""

    def artifact_location(self, spec: JobSpec) -> str:
        """Where the job's artifacts (job.json, logs/, train/, score/) are: a folder here or a bucket URL."""
