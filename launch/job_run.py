"""The job itself, identical on every backend: checks → contamination gate → `arena train` → `arena score` → the
result.

`arena jobs run` reads its job from the environment (what a SkyPilot task's `envs` and the local backend both set):

  ARENA_JOB_SPEC         the job description (launch.spec.JobSpec as JSON)
  ARENA_JOB_ENVIRONMENT  the environment package's folder at the job's commit
  ARENA_JOB_OUT          the artifact folder, the same after a preemption (on a cloud: a folder of the bucket mount)
  ARENA_JOB_WORK         optional: a folder on local disk to work in; the job then mirrors finished files to
                         ARENA_JOB_OUT (launch.artifacts) and reads them back from there when it is restarted
  ARENA_JOB_GPUS         GPUs the machine gives the job (for its GPU-hours; default: the training manifest's)
  ARENA_SUITE            the held-out suite

Before anything runs, the package must be the one that passed its checks (the spec's digest) and the suite the one
the job was given (launch.job_checks). Each phase is an `arena` command of its own, so the job uses exactly the code
a contributor runs; its output goes to `logs/<phase>.log` in the artifact folder (`arena jobs logs NAME --phase P`),
never to the job's own log, which carries only `arena-job:` lines and, last, the result block (launch.result_block).
A phase that finished is not run again when the job is restarted (a recovered spot instance, a killed local job):
the gate's verdict is kept, training resumes from its newest checkpoint, scoring from its episodes log. Every run of
the job is a segment in `job.json`; their wall time, all counted, is held to the spec's wall-clock ceiling.

Exit codes: 0 scored; 1 the environment's fault (flagged by the gate, training stopped, scoring failed, over its
ceiling); 2 a bad job description (or a package or suite that is not the one it names); 3 the machine lacks
something the job needs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from launch import result_block
from launch.artifacts import ArtifactError, Mirror
from launch.job_checks import CheckFailed, check_package, check_suite
from launch.job_status import STATUS_FILE, JobStatus, PhaseRun, PhaseStatus, RunnerStatus, Segment
from launch.phase_process import run_phase
from launch.spec import JobSpec, SpecError
from launch.state import now_iso
from taskpkg.atomic_files import write_json_atomic
from taskpkg.layouts import ADAPTER_CONFIG, ADAPTER_DIR, MANIFEST_FILE, RESULTS_DIR, is_record_file, items_path
from taskpkg.run_manifest import RunStatus, TrainingManifest

RESULT_FILE = "result.json"
GATE_FILE = "gate.json"  # the gate's public verdict (`arena score --contamination-only --format json`)
GATE_REPORT_FILE = "gate-report.json"  # what matched: for maintainers only
PHASES = ("gate", "train", "score")
HEARTBEAT_S = 300.0  # how often a running phase's segment is saved and its finished files mirrored


class JobFailed(Exception):
    """The job stopped; `status` is failed or stopped, `exit_code` what `arena jobs run` returns."""

    def __init__(self, status: RunnerStatus, reason: str, exit_code: int = 1) -> None:
        super().__init__(reason)
        self.status, self.reason, self.exit_code = status, reason, exit_code


@dataclass(frozen=True)
class JobPaths:
    """Where the job reads and writes: `out` is its local working folder, `bucket` (when set) the artifact
    folder it mirrors to."""

    environment: Path
    out: Path
    suite: str
    bucket: Path | None = None

    @property
    def gate(self) -> Path:
        return self.out / GATE_FILE

    @property
    def train(self) -> Path:
        return self.out / "train"

    @property
    def score(self) -> Path:
        return self.out / "score"

    def log(self, phase: str) -> Path:
        """Where a phase's output goes."""
        return self.out / "logs" / f"{phase}.log"


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
    score = ["score", env, "--suite", suite, "--adapter", str(paths.train / ADAPTER_DIR), "--training-manifest",
             str(paths.train / MANIFEST_FILE), "--out", str(paths.score), "--profile", spec.profile, "--backend",
             spec.score_backend, "--gate", str(paths.gate), "--commit", spec.commit]
    if spec.pr:
        score += ["--pr", str(spec.pr)]
    if spec.credited != "local":
        score += ["--contributor", spec.credited]
    return {"gate": arena_command("score", "--contamination-only", "--suite", suite, "--format", "json", "--report",
                                  str(paths.out / GATE_REPORT_FILE), env),
            "train": arena_command(*train), "score": arena_command(*score)}


class JobRun:
    """One run (segment) of the job over its artifact folder, resuming what an earlier run left."""

    def __init__(self, spec: JobSpec, paths: JobPaths, say: Callable[[str], None] = print,
                 env: Mapping[str, str] | None = None) -> None:
        self.spec, self.paths, self.say = spec, paths, say
        self.env = dict(os.environ if env is None else env)
        self.mirror = Mirror(paths.out, paths.bucket) if paths.bucket else None
        self.status = JobStatus()
        self.started = time.monotonic()

    def run(self) -> int:
        """Run the phases still to do; returns the exit code."""
        self.paths.out.mkdir(parents=True, exist_ok=True)
        if self.mirror is not None:
            self.say(f"arena-job: {self.mirror.restore()} file(s) read back from {self.paths.bucket}")
        self.status = JobStatus.read(self.paths.out / STATUS_FILE) or JobStatus()
        if self.status.status == RunnerStatus.SUCCEEDED and (self.paths.out / RESULT_FILE).is_file():
            return self._report(json.loads((self.paths.out / RESULT_FILE).read_text()))
        restarts = (-1 if self.status.restarts is None else self.status.restarts) + 1
        self.status.segments = [*(self.status.segments or []), Segment(now_iso(), 0.0)]
        self.status.status, self.status.spec, self.status.restarts = RunnerStatus.RUNNING, self.spec.to_json(), restarts
        self.status.started_at, self.status.reason = self.status.started_at or now_iso(), None
        self._save()
        if restarts:
            self.say(f"arena-job: restart {restarts}: resuming {self.spec.name} from {self.paths.out}")
        try:
            check_package(self.spec, self.paths.environment)
            check_suite(self.spec, self.paths.suite)
            for phase in PHASES:
                self._phase(phase)
            payload = self._result()
        except CheckFailed as refused:
            return self._end(JobFailed(RunnerStatus.FAILED, refused.reason, refused.exit_code))
        except JobFailed as failed:
            return self._end(failed)
        self.status.status, self.status.finished_at = RunnerStatus.SUCCEEDED, now_iso()
        self.status.run_id = payload["record"].get("run_id")
        self._save()
        return self._report(payload)

    def _end(self, failed: JobFailed) -> int:
        self.status.status, self.status.reason, self.status.finished_at = failed.status, failed.reason, now_iso()
        self._save()
        self._publish(final=True)
        self.say(f"arena-job: {failed.status}: {failed.reason}")
        return failed.exit_code

    def _report(self, payload: dict) -> int:
        """Say the job succeeded, then print the result block: the last thing the job prints."""
        self._publish(final=True)
        self.say(f"arena-job: succeeded: {self.spec.name} ({payload['record'].get('run_id')})")
        manifest = TrainingManifest.read(self.paths.train / MANIFEST_FILE) or TrainingManifest()
        for part in ("preflight", "in_domain"):  # what training measured, beside the transfer score on the suite
            line = manifest.line(part)
            if line is not None:
                self.say(f"arena-job: {line[:400]}")
        for line in result_block.encode(payload):
            self.say(line)
        return 0

    def _phase(self, phase: str) -> None:
        done = self.status.phases.get(phase)
        if done is not None and done.status == PhaseStatus.DONE:
            self.say(f"arena-job: {phase}: done in an earlier run, kept")
            return
        if phase == "train" and _train_completed(self.paths.train):
            self._mark(phase, PhaseStatus.DONE, 0.0, 0)
            return
        left = self.spec.max_hours * 3600 - self._wall()
        if left <= 0:
            raise self._over_ceiling()
        self.say(f"arena-job: {phase}: started (output in logs/{phase}.log)")
        outcome = run_phase(phase_commands(self.spec, self.paths)[phase], self.paths.log(phase),
                            f"{phase}, segment {len(self.status.segments or [])}, {now_iso()}", left,
                            lambda elapsed: self._heartbeat(phase, elapsed), HEARTBEAT_S,
                            self.paths.gate if phase == "gate" else None)
        if outcome.over_deadline:
            self._mark(phase, PhaseStatus.STOPPED, outcome.wall_s, -1)
            raise self._over_ceiling()
        code = outcome.exit_code
        self._mark(phase, PhaseStatus.DONE if code == 0 else PhaseStatus.FAILED, outcome.wall_s, code or 0)
        if code != 0:
            raise self._failure(phase, int(code or 0))
        self.say(f"arena-job: {phase}: done in {outcome.wall_s:.0f} s")

    def _heartbeat(self, phase: str, elapsed: float) -> None:
        self._save()
        self._publish()
        self.say(f"arena-job: {phase}: running for {elapsed / 60:.0f} min")

    def _over_ceiling(self) -> JobFailed:
        return JobFailed(RunnerStatus.STOPPED, f"over its wall-clock ceiling: its runs took {self._wall() / 3600:.2f} "
                         f"h of the {self.spec.max_hours:g} h a job may use")

    def _failure(self, phase: str, code: int) -> JobFailed:
        where = (f"its output is in logs/{phase}.log (maintainers: `arena jobs logs {self.spec.name} --phase "
                 f"{phase}`)")
        if code == 3:
            lacks = f"{phase}: the machine lacks something the job needs (exit 3); {where}"
            return JobFailed(RunnerStatus.FAILED, lacks, 3)
        verdict = (_read_json(self.paths.gate) or {}) if phase == "gate" else {}
        if code == 1 and verdict.get("verdict") == "flagged":  # what matched is for maintainers only (gate report)
            return JobFailed(RunnerStatus.STOPPED, "flagged by the contamination gate")
        if phase == "train" and code == 1:
            manifest = TrainingManifest.read(self.paths.train / MANIFEST_FILE) or TrainingManifest()
            if manifest.status == RunStatus.STOPPED:
                return JobFailed(RunnerStatus.STOPPED, f"training stopped: {manifest.reason}")
            if manifest.status == RunStatus.NO_EFFECTIVE_UPDATE:  # trained, but nothing moved: never scored
                return JobFailed(RunnerStatus.STOPPED, f"training had no effective update, so it was not scored: "
                                            f"{manifest.reason}")
        return JobFailed(RunnerStatus.FAILED, f"{phase} failed (exit {code}); {where}")

    def _result(self) -> dict:
        folder = self.paths.score / RESULTS_DIR
        records = [p for p in sorted((folder / self.spec.environment).glob("*")) if is_record_file(p.name)]
        if not records:
            raise JobFailed(RunnerStatus.FAILED, f"score wrote no results record under {folder}")
        newest = max(records, key=lambda p: p.stat().st_mtime)  # a rescore with other inputs writes another run
        payload = {"record": json.loads(newest.read_text())}
        items = items_path(newest)
        if items.is_file():
            payload["items"] = json.loads(items.read_text())
        payload["job"] = {"name": self.spec.name, "phases": self.status.to_json()["phases"],
                          "gpu_hours": self._gpu_hours(), "segments": len(self.status.segments or [])}
        write_json_atomic(self.paths.out / RESULT_FILE, payload, sort_keys=True)  # a restart prints it again
        return payload

    def _wall(self) -> float:
        """Wall time of every run of this job so far, this one included."""
        return self.status.wall_s

    def _gpu_hours(self) -> float:
        manifest = TrainingManifest.read(self.paths.train / MANIFEST_FILE) or TrainingManifest()
        gpus = int(self.env.get("ARENA_JOB_GPUS") or manifest.gpus or 0)
        return round(self._wall() / 3600 * gpus, 4)

    def _mark(self, phase: str, status: PhaseStatus, wall: float, code: int) -> None:
        earlier = self.status.phases[phase].wall_s if phase in self.status.phases else 0.0
        self.status.phases[phase] = PhaseRun(status, round(earlier + wall, 1), code)
        self._save()

    def _save(self) -> None:
        if self.status.segments:
            self.status.segments[-1].wall_s = round(time.monotonic() - self.started, 1)
        self.status.gpu_hours = self._gpu_hours()
        self.status.updated_at = now_iso()
        self.status.write(self.paths.out / STATUS_FILE)

    def _publish(self, final: bool = False) -> None:
        if self.mirror is None:
            return
        try:
            self.mirror.publish(final=final)
        except ArtifactError as exc:  # the next heartbeat tries again; a final one that fails is said
            self.say(f"arena-job: artifacts: {exc}")


def _train_completed(folder: Path) -> bool:
    manifest = TrainingManifest.read(folder / MANIFEST_FILE)
    completed = manifest is not None and manifest.status == RunStatus.COMPLETED
    return completed and (folder / ADAPTER_DIR / ADAPTER_CONFIG).is_file()


def _read_json(path: Path) -> dict | None:
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
    out = Path(env["ARENA_JOB_OUT"]).expanduser().resolve()
    work = Path(env["ARENA_JOB_WORK"]).expanduser().resolve() if env.get("ARENA_JOB_WORK") else None
    paths = (JobPaths(environment.resolve(), work, env["ARENA_SUITE"], bucket=out) if work and work != out
             else JobPaths(environment.resolve(), out, env["ARENA_SUITE"]))
    return JobRun(spec, paths, lambda line: print(line, flush=True), env).run()
