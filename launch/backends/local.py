"""The local backend: the job as a detached subprocess on this machine, recovered like a managed job.

State lives under a folder (`ARENA_LAUNCH_DIR`, default `~/.cache/posttrain-arena/launch`):

    jobs/<name>/spec.json   the job description
    jobs/<name>/log         everything the job printed (all its runs): `arena-job:` lines and the result block
    jobs/<name>/process     the running process (pid and start time, so a reused pid is not mistaken for it)
    jobs/<name>/cancelled   present once the job was cancelled
    artifacts/<environment>/<commit>/attempt-N/   the job's artifact folder (job.json, logs/, train/, score/)

A job whose process is gone without the job having ended (killed, the machine rebooted) is restarted on the next
`states` call, from its checkpoints, up to MAX_RECOVERIES times: what SkyPilot's managed jobs do after a preemption.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from launch.backends import RECOVERING, BackendError, BackendJob
from launch.job_status import STATUS_FILE, JobStatus, RunnerStatus
from launch.spec import JobSpec
from launch.state import JobState
from taskpkg.atomic_files import write_json_atomic, write_text_atomic

MAX_RECOVERIES = 3
CANCEL_GRACE_S = 30.0


def default_root() -> Path:
    """$ARENA_LAUNCH_DIR, else the arena's cache folder."""
    if os.environ.get("ARENA_LAUNCH_DIR"):
        return Path(os.environ["ARENA_LAUNCH_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "posttrain-arena" / "launch"


class LocalBackend:
    """Jobs as subprocesses of this machine, running the job script with the sample (or a given) suite."""

    name = "local"

    def __init__(self, suite: Path, root: Path | None = None) -> None:
        self.suite = suite
        self.root = root or default_root()
        self._children: dict[int, subprocess.Popen] = {}

    def job_folder(self, name: str) -> Path:
        return self.root / "jobs" / name

    def artifacts(self, spec: JobSpec) -> Path:
        return self.root / "artifacts" / spec.artifact_path

    def artifact_location(self, spec: JobSpec) -> str:
        return str(self.artifacts(spec))

    def launch(self, spec: JobSpec, environment: Path | None = None) -> str:
        if environment is None or not (environment / "task.md").is_file():
            raise BackendError(f"{environment}: the local backend needs the environment's folder (with task.md)")
        folder = self.job_folder(spec.name)
        if self._alive(folder):
            return spec.name
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / "spec.json", spec.to_json() + "\n")
        write_text_atomic(folder / "environment", str(environment.resolve()) + "\n")
        (folder / "cancelled").unlink(missing_ok=True)
        self._start(spec, folder)
        return spec.name

    def states(self, names: list[str]) -> dict[str, BackendJob]:
        found = {}
        for name in names:
            folder = self.job_folder(name)
            if (folder / "spec.json").is_file():
                found[name] = self._state(name, folder)
        return found

    def cancel(self, job_ids: list[str]) -> None:
        for name in job_ids:
            folder = self.job_folder(name)
            if not folder.is_dir():
                continue
            (folder / "cancelled").touch()
            process = self._process(folder)
            if process is None:
                continue
            _signal_group(process, signal.SIGTERM)
            deadline = time.monotonic() + CANCEL_GRACE_S
            while self._alive(folder) and time.monotonic() < deadline:
                time.sleep(0.2)
            if self._alive(folder):
                _signal_group(process, signal.SIGKILL)

    def logs(self, job_id: str) -> str:
        try:
            return (self.job_folder(job_id) / "log").read_text(errors="replace")
        except OSError:
            raise BackendError(f"no local job named {job_id}") from None

    def phase_log(self, spec: JobSpec, phase: str) -> str:
        try:
            return (self.artifacts(spec) / "logs" / f"{phase}.log").read_text(errors="replace")
        except OSError:
            raise BackendError(f"job {spec.name} has no {phase} log yet ({self.artifacts(spec)}/logs)") from None

    def wait(self, name: str, poll_s: float = 2.0, timeout_s: float | None = None) -> BackendJob:
        """Poll until the job ends (recovering it if its process dies); returns its final state."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.states([name])[name]
            if job.finished:
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise BackendError(f"job {name} did not finish within {timeout_s:.0f} s")
            time.sleep(poll_s)

    def _state(self, name: str, folder: Path) -> BackendJob:
        spec = JobSpec.from_json((folder / "spec.json").read_text())
        status = JobStatus.read(self.artifacts(spec) / STATUS_FILE) or JobStatus()
        restarts = int(status.restarts or 0)
        spent = {"recoveries": restarts, "gpu_hours": float(status.gpu_hours or 0.0),
                 "hours": round(status.wall_s / 3600, 4)}
        if self._alive(folder):
            state = JobState.RUNNING if status.status == RunnerStatus.RUNNING else JobState.QUEUED
            return BackendJob(name, name, state, status.reason, **spent)
        if (folder / "cancelled").exists():
            return BackendJob(name, name, JobState.CANCELLED, "cancelled", **spent)
        if status.status == RunnerStatus.SUCCEEDED:
            return BackendJob(name, name, JobState.SUCCEEDED, None, **spent)
        if status.status in (RunnerStatus.FAILED, RunnerStatus.STOPPED):
            return BackendJob(name, name, status.status.job_state, status.reason, **spent)
        if restarts >= MAX_RECOVERIES:
            return BackendJob(name, name, JobState.FAILED, f"the job's process died {restarts + 1} times; not "
                              "restarted again", **spent)
        self._start(spec, folder)  # its process died mid-run: recover it from its checkpoints
        return BackendJob(name, name, RECOVERING, "restarted after its process died",
                          **{**spent, "recoveries": restarts + 1})

    def _start(self, spec: JobSpec, folder: Path) -> None:
        environment = Path((folder / "environment").read_text().strip())
        out = self.artifacts(spec)
        out.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "ARENA_JOB_SPEC": spec.to_json(), "ARENA_JOB_ENVIRONMENT": str(environment),
               "ARENA_JOB_OUT": str(out), "ARENA_SUITE": str(self.suite.resolve()), "PYTHONUNBUFFERED": "1"}
        with open(folder / "log", "a", encoding="utf-8") as log:
            process = subprocess.Popen([sys.executable, "-m", "arena", "jobs", "run"], env=env, stdout=log,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._children[process.pid] = process
        write_json_atomic(folder / "process", {"pid": process.pid, "started": _start_ticks(process.pid)})

    def _process(self, folder: Path) -> dict | None:
        process = _read_json(folder / "process")
        return process if process.get("pid") else None

    def _alive(self, folder: Path) -> bool:
        process = self._process(folder)
        if process is None:
            return False
        pid = int(process["pid"])
        child = self._children.get(pid)
        if child is not None and child.poll() is not None:  # our own child ended: reap it
            del self._children[pid]
            return False
        return _start_ticks(pid) == process.get("started") and process.get("started") is not None


def _start_ticks(pid: int) -> int | None:
    """When a live (non-zombie) process started, in clock ticks since boot; None when there is no such process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


def _signal_group(process: dict, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(int(process["pid"]), sig)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
