"""A job's life, the same for the CLI and the bot: asked for once, launched once, polled, finished or cancelled.

Every step is a compare-and-swap on the job's record (launch.state), so it is safe to repeat and to race:
- `request` records the job as queued before launching it and as running after, so a crash in between leaves a
  queued record that names the job; the next `refresh` finds that job by name (or, when the backend never
  started it, marks the record failed), and no second request starts another.
- `refresh` asks the backend about every active job in one call and moves each record to what it says; a job past
  its ceiling (launch.ceiling: wall-clock hours or GPU-hours over every segment) is cancelled there and then.
- A record's GPU-hours only ever grow, and a job that is cancelled or stale is asked for its spend once more before
  its record is closed, so the budget reads what every job really used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path

from launch import ceiling
from launch.backends import RECOVERING, Backend, BackendError, BackendJob
from launch.budget import Budget
from launch.spec import JobSpec
from launch.state import Conflict, JobRecord, JobState, JobStore, Stored

LAUNCH_GRACE = timedelta(minutes=15)  # a queued record whose job the backend does not know, after this: failed
MAX_RACES = 5


class Asked(StrEnum):
    """What a request for a job came to."""

    STARTED = "started"
    RUNNING = "running"  # one is already queued or running
    DONE = "done"  # one already succeeded
    REFUSED = "refused"  # over its ceiling or the budget, or the launch failed


@dataclass(frozen=True)
class Decision:
    """What a request came to (`outcome`), the job's record and a line that says why."""

    outcome: Asked
    record: JobRecord | None
    message: str


def request(store: JobStore, backend: Backend, spec: JobSpec, budget: Budget, environment: Path | None = None,
            reply_comment: int | None = None, limits: dict | None = None) -> Decision:
    """Start the job for (environment, commit) unless one is active or done, its package's `limits` (task.md's;
    read from `environment` when not given) do not fit its ceiling, or the budget is spent; a failed or cancelled
    one is retried as its next attempt."""
    limits = limits if limits is not None else ceiling.package_limits(environment)
    too_much = ceiling.refusal(spec, limits) if limits else None
    for _ in range(MAX_RACES):
        stored = store.get(spec.environment, spec.commit)
        if stored is not None and stored.record.active:
            return Decision(Asked.RUNNING, stored.record, f"job {stored.record.name} is already {stored.record.state}")
        if stored is not None and stored.record.state == JobState.SUCCEEDED:
            run = f" (run {stored.record.run_id})" if stored.record.run_id else ""
            return Decision(Asked.DONE, stored.record, f"{spec.environment} at {spec.commit[:12]} was already scored"
                            f"{run}; job {stored.record.name}")
        refusal = too_much or budget.refusal((s.record for s in store.all()), needs=spec.max_gpu_hours)
        if refusal:
            return Decision(Asked.REFUSED, stored.record if stored else None, refusal)
        attempt_spec = replace(spec, attempt=stored.record.attempt + 1) if stored else spec
        record = JobRecord.new(attempt_spec, backend.name, reply_comment)
        try:
            claimed = store.update(stored, record) if stored else store.create(record)
        except Conflict:
            continue  # another run changed the record first: look again
        return _launch(store, backend, claimed, attempt_spec, environment)
    raise Conflict(f"the record of {spec.environment} at {spec.commit[:12]} kept changing; try again")


def _launch(store: JobStore, backend: Backend, claimed: Stored, spec: JobSpec,
            environment: Path | None) -> Decision:
    try:
        job_id = backend.launch(spec, environment)
    except BackendError as exc:
        failed = claimed.record.moved_to(JobState.FAILED, reason=f"the launch failed: {exc}")
        _swap(store, claimed, failed)
        return Decision(Asked.REFUSED, failed, f"the launch failed: {exc}")
    running = claimed.record.moved_to(JobState.RUNNING, backend_job=job_id)
    return Decision(Asked.STARTED, _swap(store, claimed, running).record, f"job {spec.name} started ({backend.name} "
                    f"job {job_id})")


def _swap(store: JobStore, stored: Stored, record: JobRecord) -> Stored:
    """Write a record over the one read, re-reading on a race; the newest state wins unless the record moved on
    to a later attempt meanwhile."""
    for _ in range(MAX_RACES):
        try:
            return store.update(stored, record)
        except Conflict:
            current = store.get(record.environment, record.commit)
            if current is None or current.record.attempt != record.attempt:
                return current or stored
            stored = current
    raise Conflict(f"the record of {record.environment} at {record.commit[:12]} kept changing")


@dataclass(frozen=True)
class Change:
    """A record that moved, from and to."""

    before: JobRecord
    after: JobRecord
    stored: Stored


def refresh(store: JobStore, backend: Backend, now: datetime | None = None,
            on_finished: Callable[[JobRecord, BackendJob], JobRecord] | None = None,
            records: list[Stored] | None = None, jobs: dict[str, BackendJob] | None = None) -> list[Change]:
    """Bring every active record of this backend up to date with one backend call. `on_finished` may enrich a
    record that succeeded (the bot publishes its results there) before it is written; `records` saves reading the
    store again when the caller just read it, and `jobs` the backend call when the caller just made it."""
    now = now or datetime.now(UTC)
    active = [s for s in (store.all() if records is None else records)
              if s.record.active and s.record.backend == backend.name]
    if not active:
        return []
    jobs = backend.states([s.record.name for s in active]) if jobs is None else jobs
    changes = []
    for stored in active:
        job = jobs.get(stored.record.name)
        after = _over_ceiling(backend, stored.record, job) or _next_state(stored.record, job, now)
        if after is None:
            continue
        if after.state == JobState.SUCCEEDED and on_finished is not None:
            after = on_finished(after, jobs[stored.record.name])
        written = _swap(store, stored, after)
        changes.append(Change(stored.record, written.record, written))
    return changes


def _over_ceiling(backend: Backend, record: JobRecord, job: BackendJob | None) -> JobRecord | None:
    """A running job past its ceiling, cancelled at the backend and recorded so; None when it is within it."""
    spec = record.job_spec
    if job is None or job.finished or spec is None:
        return None
    reason = ceiling.over(spec, job.hours, job.gpu_hours)
    if reason is None:
        return None
    backend.cancel([job.id])
    return record.moved_to(JobState.CANCELLED, reason=reason, backend_job=job.id,
                           gpu_hours=max(record.gpu_hours, job.gpu_hours))


def _next_state(record: JobRecord, job: BackendJob | None, now: datetime) -> JobRecord | None:
    if job is None:
        requested = datetime.strptime(record.updated_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if now - requested > LAUNCH_GRACE:
            return record.moved_to(JobState.FAILED, reason=f"the backend has no job named {record.name}: the launch "
                                   "never started; ask again")
        return None
    state = JobState.RUNNING if job.state == RECOVERING else job.state
    changes: dict = {}
    if record.backend_job != job.id:
        changes["backend_job"] = job.id  # a launch whose record was not written (a crash in between), adopted
    if job.gpu_hours > record.gpu_hours:
        changes["gpu_hours"] = job.gpu_hours  # spend only grows: a backend that forgets a segment never lowers it
    if job.finished:
        changes["reason"] = job.detail
    if state == record.state and not changes:
        return None
    return record.moved_to(state, **changes)


def cancel(store: JobStore, backend: Backend, environment: str, commit: str, state: JobState = JobState.CANCELLED,
           reason: str = "cancelled", spent: float | None = None) -> JobRecord | None:
    """Stop an active job and record why (cancelled, or stale after a new push) with what it spent (`spent`, the
    backend's word when the caller just asked it, else asked once more); None when none is active."""
    for _ in range(MAX_RACES):
        stored = store.get(environment, commit)
        if stored is None or not stored.record.active:
            return None
        if stored.record.backend_job:
            backend.cancel([stored.record.backend_job])
        used = max(stored.record.gpu_hours, spent) if spent is not None else _final_spend(backend, stored.record)
        try:
            return store.update(stored, stored.record.moved_to(state, reason=reason, gpu_hours=used)).record
        except Conflict:
            continue
    raise Conflict(f"the record of {environment} at {commit[:12]} kept changing")


def _final_spend(backend: Backend, record: JobRecord) -> float:
    """The GPU-hours of a job being closed, asked of the backend once more (what it had recorded if that fails)."""
    try:
        job = backend.states([record.name]).get(record.name)
    except BackendError:
        return record.gpu_hours
    return max(record.gpu_hours, job.gpu_hours) if job is not None else record.gpu_hours
