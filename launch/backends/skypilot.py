"""The SkyPilot backend: managed jobs through the SkyPilot SDK, the only module that calls SkyPilot.

Every SDK call returns a request id that `sky.get` resolves. `states` asks for the whole managed-jobs queue once,
however many jobs the arena is polling. Needs the `launch` extra (skypilot 0.14.1) in its own environment: skypilot
pins click < 8.2, which the `train` extra's huggingface-hub does not accept (README, "Installing").
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launch.backends import RECOVERING, BackendError, BackendJob
from launch.skypilot_task import SkyPilotConfig, task_config
from launch.spec import JobSpec
from launch.state import JobState

STATES = {"PENDING": JobState.QUEUED, "SUBMITTED": JobState.QUEUED, "STARTING": JobState.QUEUED,
          "RUNNING": JobState.RUNNING, "WINDING_DOWN": JobState.RUNNING, "RECOVERING": RECOVERING,
          "CANCELLING": JobState.CANCELLED, "CANCELLED": JobState.CANCELLED, "SUCCEEDED": JobState.SUCCEEDED,
          "FAILED": JobState.FAILED, "FAILED_SETUP": JobState.FAILED, "FAILED_PRECHECKS": JobState.FAILED,
          "FAILED_NO_RESOURCE": JobState.FAILED, "FAILED_CONTROLLER": JobState.FAILED}
ENDPOINT_VARIABLE = "SKYPILOT_API_SERVER_ENDPOINT"


def _sky() -> Any:  # the SDK is optional (the launch extra) and ships no type information
    try:
        import sky
    except ImportError:
        raise BackendError("the SkyPilot backend needs the launch extra: pip install -e '.[launch]' (in an "
                           "environment of its own, see the README)") from None
    return sky


def build_task(spec: JobSpec, config: SkyPilotConfig, secret_values: dict[str, str] | None = None) -> object:
    """The job as a `sky.Task`, validated by SkyPilot's own schema; secret values (when given) are set on the task
    object only, never written into its YAML."""
    sky = _sky()
    try:
        task = sky.Task.from_yaml_config(task_config(spec, config))
    except Exception as exc:  # SkyPilot's InvalidSkyPilotConfigError and friends
        raise BackendError(f"SkyPilot refused the job's task: {exc}") from None
    if secret_values:
        task.update_secrets(secret_values)
    return task


def job_state(record: object, now: float | None = None) -> BackendJob:
    """A managed-jobs queue record as a BackendJob. `job_duration` is the time the job ran over every segment
    (setup included, provisioning and recovery waits excluded): its GPU-hours. Its wall-clock hours, which the
    ceiling limits, run from its first start to its end (or now), recoveries included."""
    def field(name: str) -> object:
        return record.get(name) if isinstance(record, dict) else getattr(record, name, None)

    status = field("status")
    status = getattr(status, "value", status)
    seconds = float(field("job_duration") or 0.0)
    gpus = _gpu_count(field("accelerators"))
    detail = field("failure_reason") or field("details")
    started = float(field("start_at") or 0.0)
    ended = float(field("end_at") or 0.0) or (now if now is not None else time.time())
    hours = max(0.0, ended - started) / 3600 if started > 0 else 0.0
    return BackendJob(str(field("job_id")), str(field("job_name") or ""), STATES.get(str(status), JobState.QUEUED),
                      str(detail) if detail else None, int(field("recovery_count") or 0),
                      round(seconds / 3600 * gpus, 4), round(hours, 4))


def _gpu_count(accelerators: object) -> int:
    if isinstance(accelerators, dict):
        return int(sum(float(n) for n in accelerators.values()))
    return 1


class SkyPilotBackend:
    """Managed jobs on the API server named by the configuration."""

    name = "skypilot"

    def __init__(self, config: SkyPilotConfig, env: dict[str, str] | None = None) -> None:
        self.config = config
        self.env = dict(os.environ if env is None else env)
        os.environ[ENDPOINT_VARIABLE] = config.endpoint  # the SDK reads its server from here

    def launch(self, spec: JobSpec, environment: Path | None = None) -> str:
        existing = self.states([spec.name]).get(spec.name)
        if existing is not None and not existing.finished:
            return existing.id  # launched before (a crash between launch and record): never a second one
        # A secret set in the launching environment goes to the task object only; one that is not set is the API
        # server's managed secret of that name (`sky secrets`), which the task names and never holds.
        values = {name: self.env[name] for name in self.config.secrets if self.env.get(name)}
        task = build_task(spec, self.config, values)
        sky = _sky()
        job_ids, _ = self._call(lambda: sky.jobs.launch(task, name=spec.name))
        if not job_ids:
            raise BackendError(f"SkyPilot accepted {spec.name} but returned no job id")
        return str(job_ids[0])

    def states(self, names: list[str]) -> dict[str, BackendJob]:
        sky = _sky()
        records = self._call(lambda: sky.jobs.queue(refresh=False, skip_finished=False,
                                                    all_users=True))
        wanted, found = set(names), {}
        for record in records or []:
            job = job_state(record)
            if job.name in wanted and (job.name not in found or int(job.id) > int(found[job.name].id)):
                found[job.name] = job  # the newest job of a name
        return found

    def cancel(self, job_ids: list[str]) -> None:
        if job_ids:
            sky = _sky()
            self._call(lambda: sky.jobs.cancel(job_ids=[int(i) for i in job_ids]))

    def logs(self, job_id: str) -> str:
        sky = _sky()
        buffer = io.StringIO()
        try:
            sky.jobs.tail_logs(job_id=int(job_id), follow=False, output_stream=buffer)
        except Exception as exc:
            raise BackendError(f"could not read the logs of SkyPilot job {job_id} from {self.config.endpoint}: "
                               f"{type(exc).__name__}: {exc}") from None
        return buffer.getvalue()

    def artifact_location(self, spec: JobSpec) -> str:
        return f"{self.config.artifact_bucket.rstrip('/')}/{spec.artifact_path}"

    def phase_log(self, spec: JobSpec, phase: str) -> str:
        folder = self.artifact_location(spec)
        raise BackendError(f"a SkyPilot job's phase logs are in its artifact bucket: {folder}/manifest-*.json names "
                           f"logs/{phase}.log by its hash under {folder}/objects/ (read them with the bucket's "
                           "credentials; they hold the package's output, so never post them)")

    def _call(self, request: Callable[[], object]) -> Any:
        """Send one request and wait for its result; any SDK failure becomes a BackendError naming the server."""
        sky = _sky()
        try:
            return sky.get(request())
        except BackendError:
            raise
        except Exception as exc:  # the SDK raises its own exceptions, requests' and plain ones
            raise BackendError(f"the SkyPilot API server at {self.config.endpoint} failed: {type(exc).__name__}: "
                               f"{str(exc)[:500]}") from None
