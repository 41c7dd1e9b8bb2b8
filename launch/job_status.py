"""A job's own status file (`job.json` in its artifact folder) as one typed class that owns reading and writing.

The job runner (launch.job_run) writes it after every phase and heartbeat; the local backend reads how the job stands
from it. Its JSON Schema is launch/schema/job-status-v1.schema.json (tests/test_formats.py holds the class to it).
The runner updates it as the job goes, so the classes are not frozen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from launch.state import JobState
from taskpkg.atomic_files import write_json_atomic

STATUS_FILE = "job.json"


class RunnerStatus(StrEnum):
    """How the job stands in its own file (the backend reports it as a JobState: see `job_state`)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # a phase failed, or the machine lacked something
    STOPPED = "stopped"  # the environment's fault: flagged, training stopped, over its ceiling

    @property
    def job_state(self) -> JobState:
        """The backend's state for a job that ended so (a stopped job failed, as the pull request sees it)."""
        return {RunnerStatus.RUNNING: JobState.RUNNING, RunnerStatus.SUCCEEDED: JobState.SUCCEEDED}.get(
            self, JobState.FAILED)


class PhaseStatus(StrEnum):
    """How a phase (gate, train, score) ended."""

    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"  # over the job's wall-clock ceiling


@dataclass
class PhaseRun:
    """One phase: how it ended, its wall time over every run of the job, and its exit code (-1: stopped)."""

    status: PhaseStatus
    wall_s: float
    exit_code: int


@dataclass
class Segment:
    """One run of the job (a restart after a preemption starts another)."""

    started_at: str | None = None
    wall_s: float = 0.0


_WRITTEN_WHEN_NULL = frozenset({"reason"})  # cleared at each start: the key stays, null


@dataclass
class JobStatus:
    """The contents of job.json. Fields not reached yet are None and left out of the file."""

    phases: dict[str, PhaseRun] = field(default_factory=dict)
    segments: list[Segment] | None = None
    status: RunnerStatus | None = None
    spec: str | None = None  # the job description as launch.spec.JobSpec.to_json writes it
    restarts: int | None = None
    started_at: str | None = None
    reason: str | None = None
    finished_at: str | None = None
    run_id: str | None = None
    gpu_hours: float | None = None
    updated_at: str | None = None

    @property
    def wall_s(self) -> float:
        """Wall time of every run of the job so far."""
        return sum(segment.wall_s for segment in self.segments or [])

    def to_json(self) -> dict[str, Any]:
        """The file's contents (reason is written even when null once the job has started)."""
        written: dict[str, Any] = {"phases": {name: {"status": run.status, "wall_s": run.wall_s,
                                                     "exit_code": run.exit_code} for name, run in self.phases.items()}}
        if self.segments is not None:
            written["segments"] = [{key: value for key, value in (("started_at", s.started_at), ("wall_s", s.wall_s))
                                    if value is not None} for s in self.segments]
        for name in ("status", "spec", "restarts", "started_at", "reason", "finished_at", "run_id", "gpu_hours",
                     "updated_at"):
            value = getattr(self, name)
            if value is not None or (name in _WRITTEN_WHEN_NULL and self.status is not None):
                written[name] = value
        return written

    def write(self, path: Path) -> None:
        """Write the file whole (sorted keys, atomically)."""
        write_json_atomic(path, self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: object) -> JobStatus:
        """The status in a parsed file. Raises ValueError (or KeyError, TypeError) when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("job.json is not a JSON object")
        phases = {name: PhaseRun(PhaseStatus(run["status"]), float(run["wall_s"]), int(run["exit_code"]))
                  for name, run in (data.get("phases") or {}).items()}
        segments = data.get("segments")
        status = data.get("status")
        return cls(phases, None if segments is None else
                   [Segment(s.get("started_at"), float(s.get("wall_s") or 0.0)) for s in segments],
                   None if status is None else RunnerStatus(status), data.get("spec"), data.get("restarts"),
                   data.get("started_at"), data.get("reason"), data.get("finished_at"), data.get("run_id"),
                   data.get("gpu_hours"), data.get("updated_at"))

    @classmethod
    def read(cls, path: Path) -> JobStatus | None:
        """The status at `path`, or None when it is missing or unreadable."""
        try:
            return cls.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
