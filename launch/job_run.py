"""The job itself, identical on every backend: contamination gate → `arena train` → `arena score` → the result.

`arena jobs run` reads its job from the environment (what a SkyPilot task's `envs` and the local backend both set):

  ARENA_JOB_SPEC         the job description (launch.spec.JobSpec as JSON)
  ARENA_JOB_ENVIRONMENT  the environment package's folder at the job's commit
  ARENA_JOB_OUT          the artifact folder (a bucket mount on a cloud), the same after a preemption
  ARENA_SUITE            the held-out suite

Each phase is an `arena` command of its own, so the job uses exactly the code a contributor runs. A phase that
finished is not run again when the job is restarted (a recovered spot instance, a killed local job): the gate's
verdict is kept, training resumes from its newest checkpoint, scoring from its episodes log. The job's state is in
`job.json` in the artifact folder; at the end the results record is printed as a result block (launch.result_block).

Exit codes: 0 scored; 1 the environment's fault (flagged by the gate, training stopped, scoring failed);
2 a bad job description; 3 the machine lacks something the job needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from launch import result_block
from launch.spec import JobSpec, SpecError
from launch.state import now_iso
from taskpkg.atomic_files import write_json_atomic

STATUS_FILE = "job.json"
TAIL_LINES = 30
PHASES = ("gate", "train", "score")


class JobFailed(Exception):
    """The job stopped; `status` is failed or stopped, `exit_code` what `arena jobs run` returns."""

    def __init__(self, status: str, reason: str, exit_code: int = 1) -> None:
        super().__init__(reason)
        self.status, self.reason, self.exit_code = status, reason, exit_code


@dataclass(frozen=True)
class JobPaths:
    """Where the job reads and writes."""

    environment: Path
    out: Path
    suite: str

    @property
    def gate(self) -> Path:
        return self.out / "gate.json"

    @property
    def train(self) -> Path:
        return self.out / "train"

    @property
    def score(self) -> Path:
        return self.out / "score"


def arena_command(*args: str) -> list[str]:
    """An `arena` command line run by this interpreter (the job's own install)."""
    return [sys.executable, "-m", "arena", *args]


def phase_commands(spec: JobSpec, paths: JobPaths) -> dict[str, list[str]]:
    """Each phase's command line, as the job runs it (and the docs show it)."""
    env, suite = str(paths.environment), paths.suite
    train = ["train", env, "--recipe", spec.recipe, "--out", str(paths.train), "--commit", spec.commit]
    if spec.steps:
        train += ["--steps", str(spec.steps)]
    if spec.skip_calibration:
        train.append("--skip-calibration")
    if paths.train.is_dir() and any(paths.train.iterdir()):
        train.append("--resume")  # an earlier run of this job began training: go on from its newest checkpoint
    score = ["score", env, "--suite", suite, "--adapter", str(paths.train / "adapter"), "--training-manifest",
             str(paths.train / "manifest.json"), "--out", str(paths.score), "--profile", spec.profile, "--backend",
             spec.score_backend, "--gate", str(paths.gate), "--commit", spec.commit]
    if spec.pr:
        score += ["--pr", str(spec.pr)]
    if spec.requested_by and spec.requested_by != "local":
        score += ["--contributor", spec.requested_by]
    return {"gate": arena_command("score", "--contamination-only", "--suite", suite, "--format", "json", "--report",
                                  str(paths.out / "gate-report.json"), env),
            "train": arena_command(*train), "score": arena_command(*score)}


class JobRun:
    """One run of the job over its artifact folder (resuming what an earlier run left)."""

    def __init__(self, spec: JobSpec, paths: JobPaths, say: Callable[[str], None] = print) -> None:
        self.spec, self.paths, self.say = spec, paths, say
        self.status = _read_status(paths.out / STATUS_FILE) or {"phases": {}}
        self.started = time.monotonic()

    def run(self) -> int:
        """Run the phases still to do; returns the exit code."""
        self.paths.out.mkdir(parents=True, exist_ok=True)
        restarts = self.status.get("restarts", -1) + 1
        self._save(status="running", spec=self.spec.to_json(), restarts=restarts,
                   started_at=self.status.get("started_at") or now_iso(), reason=None)
        if restarts:
            self.say(f"arena-job: restart {restarts}: resuming {self.spec.name} from {self.paths.out}")
        try:
            for phase in PHASES:
                self._phase(phase)
            payload = self._result()
        except JobFailed as failed:
            self._save(status=failed.status, reason=failed.reason, finished_at=now_iso())
            self.say(f"arena-job: {failed.status}: {failed.reason}")
            return failed.exit_code
        self._save(status="succeeded", finished_at=now_iso(), run_id=payload["record"].get("run_id"),
                   gpu_hours=self._gpu_hours())
        for line in result_block.encode(payload):
            self.say(line)
        self.say(f"arena-job: succeeded: {self.spec.name} ({payload['record'].get('run_id')})")
        return 0

    def _phase(self, phase: str) -> None:
        done = self.status["phases"].get(phase, {})
        if done.get("status") == "done":
            self.say(f"arena-job: {phase}: done in an earlier run, kept")
            return
        if phase == "train" and _train_completed(self.paths.train):
            self._mark(phase, "done", 0.0, 0)
            return
        command = phase_commands(self.spec, self.paths)[phase]
        self.say(f"arena-job: {phase}: started")
        started = time.monotonic()
        code, tail = _run(command, self.paths.gate if phase == "gate" else None)
        wall = round(time.monotonic() - started, 1)
        if code == 0:
            self._mark(phase, "done", wall, code)
            self.say(f"arena-job: {phase}: done in {wall:.0f} s")
            return
        self._mark(phase, "failed", wall, code)
        raise self._failure(phase, code, tail)

    def _failure(self, phase: str, code: int, tail: list[str]) -> JobFailed:
        last = next((line for line in reversed(tail) if line.strip()), "no output")
        if code == 3:
            return JobFailed("failed", f"{phase}: the machine lacks something the job needs: {last}", 3)
        verdict = (_read_status(self.paths.gate) or {}) if phase == "gate" else {}
        if code == 1 and verdict.get("verdict") == "flagged":
            counts = ", ".join(f"{k} {v}" for k, v in (verdict.get("counts") or {}).items())
            return JobFailed("stopped", f"flagged by the contamination gate ({counts})")
        if phase == "train" and code == 1:
            manifest = _read_status(self.paths.train / "manifest.json") or {}
            if manifest.get("status") == "stopped":
                return JobFailed("stopped", f"training stopped: {manifest.get('reason')}")
        return JobFailed("failed", f"{phase} failed (exit {code}): {last}")

    def _result(self) -> dict:
        records = sorted((self.paths.score / "results" / self.spec.environment).glob("*.json"))
        records = [p for p in records if not p.name.endswith(".items.json")]
        if not records:
            raise JobFailed("failed", f"score wrote no results record under {self.paths.score / 'results'}")
        newest = max(records, key=lambda p: p.stat().st_mtime)
        payload = {"record": json.loads(newest.read_text())}
        items = newest.with_name(newest.stem + ".items.json")
        if items.is_file():
            payload["items"] = json.loads(items.read_text())
        payload["job"] = {"name": self.spec.name, "phases": self.status["phases"], "gpu_hours": self._gpu_hours()}
        return payload

    def _gpu_hours(self) -> float:
        manifest = _read_status(self.paths.train / "manifest.json") or {}
        gpus = int(manifest.get("gpus") or 0)
        wall = sum(p.get("wall_s", 0.0) for p in self.status["phases"].values())
        return round(wall / 3600 * gpus, 4)

    def _mark(self, phase: str, status: str, wall: float, code: int) -> None:
        earlier = self.status["phases"].get(phase, {}).get("wall_s", 0.0)
        self.status["phases"][phase] = {"status": status, "wall_s": round(earlier + wall, 1), "exit_code": code}
        self._save()

    def _save(self, **changes: object) -> None:
        self.status.update(changes)
        self.status["updated_at"] = now_iso()
        write_json_atomic(self.paths.out / STATUS_FILE, self.status, sort_keys=True)


def _run(command: list[str], stdout_file: Path | None) -> tuple[int, list[str]]:
    """Run one phase, its output passed through line by line (its stdout into `stdout_file` when given); returns
    the exit code and the last lines of its output."""
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(open(stdout_file, "w")) if stdout_file else None
        process = stack.enter_context(subprocess.Popen(
            command, stdout=target or subprocess.PIPE, stderr=subprocess.PIPE if target else subprocess.STDOUT,
            text=True, bufsize=1))
        stream = process.stderr if target else process.stdout
        assert stream is not None
        for line in stream:
            tail.append(line.rstrip("\n"))
            print(line, end="", flush=True)
        return process.wait(), list(tail)


def _train_completed(folder: Path) -> bool:
    manifest = _read_status(folder / "manifest.json") or {}
    return manifest.get("status") == "completed" and (folder / "adapter" / "adapter_config.json").is_file()


def _read_status(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_from_env(env: Mapping[str, str]) -> int:
    """`arena jobs run`: the job described by the environment; returns the exit code."""
    missing = [v for v in ("ARENA_JOB_SPEC", "ARENA_JOB_ENVIRONMENT", "ARENA_JOB_OUT", "ARENA_SUITE") if not env.get(v)]
    if missing:
        print(f"arena-job: set {', '.join(missing)} (launch/job_run.py says what each holds)", file=sys.stderr)
        return 2
    try:
        spec = JobSpec.from_json(env["ARENA_JOB_SPEC"])
    except SpecError as exc:
        print(f"arena-job: ARENA_JOB_SPEC: {exc}", file=sys.stderr)
        return 2
    environment = Path(env["ARENA_JOB_ENVIRONMENT"])
    if not (environment / "task.md").is_file():
        print(f"arena-job: {environment}: no task.md there; ARENA_JOB_ENVIRONMENT must be the package's folder",
              file=sys.stderr)
        return 2
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    paths = JobPaths(environment.resolve(), Path(env["ARENA_JOB_OUT"]).resolve(), env["ARENA_SUITE"])
    return JobRun(spec, paths, lambda line: print(line, flush=True)).run()
