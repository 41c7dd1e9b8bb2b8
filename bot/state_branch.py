"""The bot's own store: job records and accepted results on a branch of the repository that only the bot writes.

    <branch>/jobs/<environment>/<commit>.json        launch.state job records (compare-and-swap on the blob SHA)
    <branch>/results/<environment>/<run_id>.json     accepted results records, with their .items.json beside them

Every write is one commit through the contents API, which refuses a write whose file changed since it was read: that
refusal is the store's Conflict. After an ambiguous failure (GitHub may have performed the write) the file is read
back, and a write that did happen counts as done. The Pages workflow checks the branch out to build the site.
Configuration: ARENA_STATE_BRANCH (default arena-state).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any

from bot import github_api
from bot.github_api import ApiError
from launch.state import MAX_RECORD_BYTES, Conflict, JobRecord, RecordError, Stored, parse_record, record_path
from taskpkg import layouts

DEFAULT_BRANCH = "arena-state"
JOBS = "jobs"
RESULTS = layouts.RESULTS_DIR
REFUSED = (409, 422)  # the file changed, or exists when a create was asked


def branch_name(env: Mapping[str, str]) -> str:
    """The state branch this arena uses (ARENA_STATE_BRANCH, default arena-state)."""
    return (env.get("ARENA_STATE_BRANCH") or DEFAULT_BRANCH).strip()


class BranchStore:
    """launch.state.JobStore on a branch, through GitHub's contents API."""

    def __init__(self, client: github_api.Client, branch: str = DEFAULT_BRANCH) -> None:
        self.client, self.branch = client, branch
        self._ensured = False

    def get(self, environment: str, commit: str) -> Stored | None:
        return self._read(f"{JOBS}/{record_path(environment, commit)}")

    def create(self, record: JobRecord) -> Stored:
        return self._write(record, None)

    def update(self, stored: Stored, record: JobRecord) -> Stored:
        if (record.environment, record.commit) != (stored.record.environment, stored.record.commit):
            raise RecordError("an update must keep the record's environment and commit")
        return self._write(record, stored.version)

    def all(self) -> list[Stored]:
        paths = github_api.list_files(self.client, self.branch, JOBS)
        found = (self._read(path) for path in paths if path.count("/") == 2 and path.endswith(".json"))
        return [stored for stored in found if stored is not None]

    def put_result(self, environment: str, run_id: str, record: dict[str, Any], items: dict[str, Any] | None) -> bool:
        """Commit an accepted record (items first); False when that run's record is there already (a second
        delivery), whatever it holds: a published record is never replaced."""
        place = layouts.record_path(PurePosixPath(RESULTS), environment, run_id)
        path = str(place)
        if github_api.get_file(self.client, path, self.branch) is not None:
            return False
        if items is not None:
            self._create_file(str(layouts.items_path(place)), _json(items),
                              f"results: {environment} {run_id} (items)")
        return self._create_file(path, _json(record), f"results: {environment} {run_id}")

    def _read(self, path: str) -> Stored | None:
        found = github_api.get_file(self.client, path, self.branch)
        if found is None or len(found.data) > MAX_RECORD_BYTES:
            return None
        try:
            return Stored(parse_record(json.loads(found.data)), found.sha)
        except (ValueError, RecordError):
            return None

    def _write(self, record: JobRecord, sha: str | None) -> Stored:
        self._ensure()
        path, data = f"{JOBS}/{record_path(record.environment, record.commit)}", record.to_text().encode()
        message = f"jobs: {record.environment} {record.commit[:12]} {record.state}"
        new_sha = _once(lambda: github_api.put_file(self.client, path, data, self.branch, message, sha),
                        lambda: self._written(path, data))
        if new_sha is None:
            raise Conflict(f"{self.branch}:{path} changed since it was read")
        return Stored(record, new_sha)

    def _create_file(self, path: str, data: bytes, message: str) -> bool:
        self._ensure()
        written = _once(lambda: github_api.put_file(self.client, path, data, self.branch, message, None),
                        lambda: self._written(path, data))
        return written is not None

    def _written(self, path: str, data: bytes) -> str | None:
        found = github_api.get_file(self.client, path, self.branch)
        return found.sha if found is not None and found.data == data else None

    def _ensure(self) -> None:
        if not self._ensured:
            github_api.ensure_branch(self.client, self.branch)
            self._ensured = True


def _once(write: Callable[[], str], written: Callable[[], str | None]) -> str | None:
    """The write's new blob SHA; after a refusal or an ambiguous failure, the SHA of the file when it holds exactly
    what was written (the write happened, the answer was lost), else None (someone else's write won)."""
    for attempt in range(3):
        try:
            return write()
        except ApiError as exc:
            if exc.status in REFUSED:
                return written()
            if not exc.ambiguous or attempt == 2:
                raise
            found = written()
            if found is not None:
                return found
    return None


def _json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
