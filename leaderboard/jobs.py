"""Job states from the launch system, read as untrusted data: `<jobs dir>/<environment>/<commit>.json`, the records
launch.state writes (the fields the site shows):

    {"job_version": 1, "environment", "commit", "pr", "state", "backend", "requested_by", "requested_at",
     "updated_at", ...}

A file that breaks the shape is skipped with a warning naming it and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from launch.spec import COMMIT, LOGIN
from launch.state import ACTIVE_STATES, BACKENDS, STATES
from leaderboard.untrusted import parsed_files, text_field
from taskpkg.scaffold import NAME_PATTERN as NAME

TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$")


@dataclass(frozen=True)
class Job:
    """One training job's last known state."""

    environment: str
    commit: str
    pr: int | None
    state: str
    backend: str
    requested_by: str
    requested_at: str
    updated_at: str

    @property
    def active(self) -> bool:
        """Queued or running: the environment has a result on the way."""
        return self.state in ACTIVE_STATES


def parse_job(data: dict) -> Job | str:
    """A Job, or the reason the data is not one."""
    if data.get("job_version") != 1:
        return "job_version: expected 1"
    environment, commit = text_field(data, "environment", 48), text_field(data, "commit", 40)
    checks = {
        "environment": environment is not None and NAME.match(environment),
        "commit": commit is not None and COMMIT.match(commit),
        "pr": data.get("pr") is None or (type(data.get("pr")) is int and data["pr"] >= 1),
        "state": data.get("state") in STATES,
        "backend": data.get("backend") in BACKENDS,
        "requested_by": LOGIN.match(text_field(data, "requested_by", 39) or ""),
        "requested_at": TIMESTAMP.match(text_field(data, "requested_at", 40) or ""),
        "updated_at": TIMESTAMP.match(text_field(data, "updated_at", 40) or ""),
    }
    wrong = [key for key, ok in checks.items() if not ok]
    if wrong:
        return f"{wrong[0]}: missing or not valid (states: {', '.join(STATES)}; backends: {', '.join(BACKENDS)})"
    return Job(environment=data["environment"], commit=data["commit"], pr=data.get("pr"), state=data["state"],
               backend=data["backend"], requested_by=data["requested_by"], requested_at=data["requested_at"],
               updated_at=data["updated_at"])


def load_jobs(jobs_dir: Path | None, warnings: list[str]) -> list[Job]:
    """Every valid job under jobs_dir, newest update first; bad files are skipped with a warning."""
    jobs = []
    for path, job in parsed_files(jobs_dir, "*/*.json", parse_job, warnings):
        assert isinstance(job, Job)
        if (job.environment, job.commit) != (path.parent.name, path.stem):
            warnings.append(f"{path}: skipped: names {job.environment}/{job.commit} but is filed elsewhere")
        else:
            jobs.append(job)
    return sorted(jobs, key=lambda j: (j.updated_at, j.environment, j.commit), reverse=True)
