"""Job records: where each (environment, commit) job stands, kept in a store that compares before it swaps.

A record is the JSON file `<environment>/<commit>.json` (the shape the leaderboard reads as untrusted data):

    {"job_version": 1, "environment", "commit", "pr", "state", "backend", "requested_by", "requested_at",
     "updated_at", "name", "attempt", "backend_job", "spec", "reply_comment", "gpu_hours", "reason", "run_id",
     "results_comment"}

Every change is a compare-and-swap on the record's version (a content hash here, the blob SHA in the GitHub
store), so two runs racing on one job cannot both win: one gets `Conflict` and re-reads.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from launch.spec import COMMIT, LOGIN, JobSpec, SpecError
from taskpkg.atomic_files import write_text_atomic
from taskpkg.scaffold import NAME_PATTERN

JOB_VERSION = 1


class JobState(StrEnum):
    """Where a job stands: a record's `state` (the value is what the JSON file holds)."""

    QUEUED = "queued"  # recorded before the launch; the backend may not have started it yet
    RUNNING = "running"
    SUCCEEDED = "succeeded"  # finished, and its results accepted
    FAILED = "failed"
    CANCELLED = "cancelled"  # stopped by a maintainer or at its ceiling
    STALE = "stale"  # stopped because the pull request moved on


STATES = tuple(JobState)
ACTIVE_STATES = frozenset({JobState.QUEUED, JobState.RUNNING})
BACKENDS = ("skypilot", "local")
MAX_RECORD_BYTES = 64 * 1024
TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$")


class Conflict(Exception):
    """The record changed (or came to exist) since it was read: re-read it and decide again."""


class RecordError(ValueError):
    """Data that is not a job record; the message names the field."""


@dataclass(frozen=True)
class JobRecord:
    """One job's last known state."""

    environment: str
    commit: str
    state: str
    backend: str
    requested_by: str
    requested_at: str
    updated_at: str
    pr: int | None = None
    name: str = ""  # the backend's job name (launch.spec.JobSpec.name); every record launch writes has one
    attempt: int = 1
    backend_job: str | None = None
    spec: str | None = None
    reply_comment: int | None = None
    gpu_hours: float = 0.0
    reason: str | None = None
    run_id: str | None = None
    results_comment: int | None = None

    @property
    def active(self) -> bool:
        """Queued or running: the job may still produce results."""
        return self.state in ACTIVE_STATES

    @property
    def job_spec(self) -> JobSpec | None:
        return JobSpec.from_json(self.spec) if self.spec else None

    def moved_to(self, state: str, **changes: Any) -> JobRecord:
        """The record in a new state (a JobState; RecordError for any other word), stamped now."""
        if state not in STATES:
            raise RecordError(f"state: {state!r} is not one of {', '.join(STATES)}")
        return replace(self, state=state, updated_at=now_iso(), **changes)

    def to_dict(self) -> dict[str, Any]:
        return {"job_version": JOB_VERSION, **asdict(self)}

    def to_text(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def new(cls, spec: JobSpec, backend: str, reply_comment: int | None = None) -> JobRecord:
        """A queued record for a job about to be launched."""
        stamp = now_iso()
        return cls(spec.environment, spec.commit, JobState.QUEUED, backend, spec.requested_by, stamp, stamp, spec.pr,
                   spec.name, spec.attempt, spec=spec.to_json(), reply_comment=reply_comment)


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def parse_record(data: object) -> JobRecord:
    """A JobRecord from untrusted data; RecordError names the first field that is wrong."""
    if not isinstance(data, dict) or data.get("job_version") != JOB_VERSION:
        raise RecordError(f"job_version: expected {JOB_VERSION}")
    body = {k: v for k, v in data.items() if k != "job_version"}
    known = set(JobRecord.__dataclass_fields__)
    unknown = sorted(set(body) - known)
    if unknown:
        raise RecordError(f"{unknown[0]}: not a field of a job record")
    try:
        record = JobRecord(**body)
    except TypeError as exc:
        raise RecordError(f"missing field ({exc})") from None
    checks = {
        "environment": isinstance(record.environment, str) and len(record.environment) <= 64
        and NAME_PATTERN.match(record.environment),
        "commit": isinstance(record.commit, str) and COMMIT.match(record.commit),
        "pr": record.pr is None or (type(record.pr) is int and record.pr >= 1),
        "state": record.state in STATES,
        "backend": record.backend in BACKENDS,
        "requested_by": isinstance(record.requested_by, str) and LOGIN.match(record.requested_by),
        "name": isinstance(record.name, str) and len(record.name) <= 63,
        "attempt": type(record.attempt) is int and record.attempt >= 1,
        "gpu_hours": type(record.gpu_hours) in (int, float) and 0 <= record.gpu_hours < 1e6,
        "reply_comment": record.reply_comment is None or type(record.reply_comment) is int,
        "results_comment": record.results_comment is None or type(record.results_comment) is int,
    }
    for key in ("requested_at", "updated_at"):
        checks[key] = isinstance(getattr(record, key), str) and TIMESTAMP.match(getattr(record, key))
    for key in ("backend_job", "reason", "run_id", "spec"):
        value = getattr(record, key)
        checks[key] = value is None or (isinstance(value, str) and len(value) <= 4096)
    wrong = [key for key, ok in checks.items() if not ok]
    if wrong:
        raise RecordError(f"{wrong[0]}: missing or not valid (states: {', '.join(STATES)}; backends: "
                          f"{', '.join(BACKENDS)})")
    if record.spec is not None:
        try:
            JobSpec.from_json(record.spec)
        except SpecError as exc:
            raise RecordError(f"spec: {exc}") from None
    return record


@dataclass(frozen=True)
class Stored:
    """A record as read from a store, with the version a later swap must match."""

    record: JobRecord
    version: str


class JobStore(Protocol):
    """Where job records live. Implementations: FolderStore (a folder on this machine) and the bot's store on a
    branch of the repository (through GitHub's contents API)."""

    def get(self, environment: str, commit: str) -> Stored | None:
        """The record of one job, or None."""

    def create(self, record: JobRecord) -> Stored:
        """Write a record that must not exist yet; Conflict when it does."""

    def update(self, stored: Stored, record: JobRecord) -> Stored:
        """Replace a record read earlier; Conflict when it changed since."""

    def all(self) -> list[Stored]:
        """Every record (unreadable files are skipped)."""


def record_path(environment: str, commit: str) -> str:
    """A record's path inside a store."""
    return f"{environment}/{commit}.json"


class FolderStore:
    """Job records as files under a folder, swapped under a lock file; safe across processes on one machine."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, environment: str, commit: str) -> Stored | None:
        return self._read(self.root / record_path(environment, commit))

    def create(self, record: JobRecord) -> Stored:
        with self._locked():
            target = self.root / record_path(record.environment, record.commit)
            if target.exists():
                raise Conflict(f"{target}: the job record exists already")
            return self._write(target, record)

    def update(self, stored: Stored, record: JobRecord) -> Stored:
        if (record.environment, record.commit) != (stored.record.environment, stored.record.commit):
            raise RecordError("an update must keep the record's environment and commit")
        with self._locked():
            target = self.root / record_path(record.environment, record.commit)
            current = self._read(target)
            if current is None or current.version != stored.version:
                raise Conflict(f"{target}: the job record changed since it was read")
            return self._write(target, record)

    def all(self) -> list[Stored]:
        found = (self._read(path) for path in sorted(self.root.glob("*/*.json")))
        return [stored for stored in found if stored is not None]

    def _read(self, path: Path) -> Stored | None:
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        if len(raw) > MAX_RECORD_BYTES:
            return None
        try:
            record = parse_record(json.loads(raw))
        except (ValueError, RecordError):
            return None
        return Stored(record, hashlib.sha256(raw).hexdigest())

    def _write(self, target: Path, record: JobRecord) -> Stored:
        text = record.to_text()
        write_text_atomic(target, text)
        return Stored(record, hashlib.sha256(text.encode()).hexdigest())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
