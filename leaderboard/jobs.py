"""Job states from the launch system, read as untrusted data: `<jobs dir>/<environment>/<commit>.json`, the records
launch.state writes (the fields the site shows):

    {"job_version": 1, "environment", "commit", "pr", "state", "backend", "requested_by", "requested_at",
     "updated_at", ...}

A file that breaks the shape is skipped with a warning naming it and the field.
"""

from __future__ import annotations

from pathlib import Path

from launch.state import JobRecord, RecordError, parse_record
from leaderboard.untrusted import parsed_files

Job = JobRecord  # the site shows environment, commit, pr, state, backend, requested_by/at and updated_at


def parse_job(data: dict) -> Job | str:
    """A Job, or the reason the data is not one."""
    try:
        return parse_record(data)
    except RecordError as exc:
        return str(exc)


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
