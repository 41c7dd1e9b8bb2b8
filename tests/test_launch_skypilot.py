"""The SkyPilot side, checked by SkyPilot itself (skypilot 0.14.1 in .venv-launch, which scripts/setup makes): the
job's task validates against SkyPilot's schema, the committed example is what the code renders, secrets are named and
never valued in anything written, job states map from SkyPilot's own records, and an unreachable API server is a
clear error. Launching needs a cloud; that is the one thing not run here."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from launch.examples import EXAMPLE_CONFIG, EXAMPLE_SPEC
from launch.skypilot_task import SkyPilotConfig, SkyPilotConfigError, render_yaml, task_config

pytestmark = pytest.mark.slow  # each test runs SkyPilot in its own virtual environment: seconds a test

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_PYTHON = ROOT / ".venv-launch" / "bin" / "python"
EXAMPLE = ROOT / "launch" / "examples" / "arena-job.yaml"


def in_launch_env(script: str, **env: str) -> dict:
    """Run a script with the launch extra's interpreter (this checkout on its path); its JSON output."""
    if not LAUNCH_PYTHON.exists():
        message = f"{LAUNCH_PYTHON} is missing: run scripts/setup (it makes the launch extra's environment)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([str(LAUNCH_PYTHON), "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_committed_example_is_what_the_code_renders() -> None:
    assert EXAMPLE.read_text() == render_yaml(EXAMPLE_SPEC, EXAMPLE_CONFIG), (
        "regenerate it: python -c 'from launch.examples import *; from launch.skypilot_task import render_yaml; "
        "print(render_yaml(EXAMPLE_SPEC, EXAMPLE_CONFIG), end=\"\")' > launch/examples/arena-job.yaml")


def test_skypilot_accepts_the_job_and_reads_what_the_issue_asks_for() -> None:
    seen = in_launch_env("""
import json, sky
from launch.backends.skypilot import build_task
from launch.examples import EXAMPLE_CONFIG, EXAMPLE_SPEC
task = build_task(EXAMPLE_SPEC, EXAMPLE_CONFIG)
by_file = sky.Task.from_yaml("launch/examples/arena-job.yaml")
resources = list(task.resources)  # `ordered`: a list, in preference order
print(json.dumps({
    "name": task.name, "same_as_file": by_file.name == task.name and by_file.envs == task.envs,
    "ordered": isinstance(task.resources, list),
    "placements": [[str(r.cloud).lower(), r.accelerators] for r in resources], "spot": [r.use_spot for r in resources],
    "images": sorted({r.extract_docker_image() for r in resources}),
    "docker_options": [r.cluster_config_overrides["docker"]["run_options"] for r in resources],
    "mount_modes": {path: str(storage.mode) for path, storage in (task.storage_mounts or {}).items()},
    "recovery": [r.job_recovery for r in resources], "envs": task.envs, "secrets": list(task.secrets),
    "managed_secrets": [ref.name for ref in task.managed_secret_refs],
    "mounts": sorted(task.file_mounts or {}) + sorted((task.storage_mounts or {}).keys()),
    "setup": task.setup, "run": task.run}))
""")
    assert seen["name"] == EXAMPLE_SPEC.name and seen["same_as_file"]
    assert seen["ordered"] and seen["placements"] == [["aws", {"H200": 1}], ["gcp", {"H200": 1}], ["aws", {"H100": 1}],
                                                      ["gcp", {"H100": 1}]] and set(seen["spot"]) == {True}
    assert seen["images"] == [EXAMPLE_CONFIG.job_image] and "@sha256:" in EXAMPLE_CONFIG.job_image
    assert "MOUNT_CACHED" in seen["mount_modes"]["/artifacts"]
    assert seen["docker_options"] == [["-v /var/run/docker.sock:/var/run/docker.sock"]] * 4  # the sandbox's daemon
    assert all(r["strategy"] == "EAGER_NEXT_REGION" and r["max_restarts_on_errors"] == 0 for r in seen["recovery"])
    envs = seen["envs"]
    assert envs["ARENA_COMMIT"] == EXAMPLE_SPEC.arena_commit and envs["ARENA_ENV_COMMIT"] == EXAMPLE_SPEC.commit
    assert envs["ARENA_JOB_OUT"].startswith("/artifacts/") and envs["ARENA_SUITE"] == "/suite"
    # A secret named without a value is a reference to the API server's managed secret of that name.
    assert seen["secrets"] == [] and seen["managed_secrets"] == ["HF_TOKEN"]
    assert "/artifacts" in seen["mounts"] and "/suite" in seen["mounts"]
    assert "pip install --quiet --no-deps -e ." in seen["setup"]  # the stack is in the image
    assert "arena jobs extract" in seen["setup"] and "git archive" not in seen["setup"]
    assert 'git checkout --quiet --detach "$ARENA_COMMIT"' in seen["setup"]
    assert envs["ARENA_BUILD_ISOLATION"] == "registries" and envs["ARENA_JOB_WORK"].startswith("~/arena-work/")
    assert "arena jobs run" in seen["run"] and "SKYPILOT_TASK_ID" in seen["run"]


def test_secret_values_reach_the_task_object_only() -> None:
    seen = in_launch_env("""
import json
from launch.backends.skypilot import build_task
from launch.examples import EXAMPLE_CONFIG, EXAMPLE_SPEC
from launch.skypilot_task import render_yaml
task = build_task(EXAMPLE_SPEC, EXAMPLE_CONFIG, {"HF_TOKEN": "hf_do_not_leak_123"})
print(json.dumps({"on_task": task.secrets["HF_TOKEN"].get_secret_value(), "shown": repr(task.secrets["HF_TOKEN"]),
                  "rendered": render_yaml(EXAMPLE_SPEC, EXAMPLE_CONFIG),
                  "envs": task.envs, "setup": task.setup, "run": task.run}))
""")
    assert seen["on_task"] == "hf_do_not_leak_123" and "hf_do_not_leak_123" not in seen["shown"]
    assert "hf_do_not_leak_123" not in json.dumps([seen["rendered"], seen["envs"], seen["setup"], seen["run"]])


def test_skypilot_refuses_a_task_it_does_not_accept() -> None:
    seen = in_launch_env("""
import json, sky
from launch.examples import EXAMPLE_CONFIG, EXAMPLE_SPEC
from launch.skypilot_task import task_config
config = task_config(EXAMPLE_SPEC, EXAMPLE_CONFIG)
config["resources"]["ordered"][0]["accelerators"] = {"H200": "one"}
try:
    sky.Task.from_yaml_config(config)
    print(json.dumps({"refused": None}))
except Exception as exc:
    print(json.dumps({"refused": type(exc).__name__}))
""")
    assert seen["refused"] is not None


def test_job_states_come_from_skypilots_own_queue_records() -> None:
    seen = in_launch_env("""
import json, sky
from sky.schemas.api.responses import ManagedJobRecord
from launch.backends.skypilot import job_state
out = {}
for status in sky.ManagedJobStatus:
    job = job_state(ManagedJobRecord(job_id=7, job_name="arena-x", status=status, job_duration=5400.0,
                                     accelerators={"H200": 1}, recovery_count=2, failure_reason="boom"))
    out[status.value] = [job.state, job.id, job.name, job.recoveries, job.gpu_hours, job.detail]
# Two segments with a recovery between them: 1.5 h of running (job_duration), 2 h from first start to the end.
recovered = job_state(ManagedJobRecord(job_id=8, job_name="arena-y", status=sky.ManagedJobStatus.SUCCEEDED,
                                       job_duration=5400.0, accelerators={"H100": 1}, start_at=1000.0,
                                       end_at=8200.0, recovery_count=1))
out["segments"] = [recovered.gpu_hours, recovered.hours]
print(json.dumps(out))
""")
    segments = seen.pop("segments")
    assert {v[0] for v in seen.values()} == {"queued", "running", "recovering", "succeeded", "failed", "cancelled"}
    assert seen["RECOVERING"][0] == "recovering" and seen["FAILED_SETUP"][0] == "failed"
    assert seen["SUCCEEDED"][1:5] == ["7", "arena-x", 2, 1.5] and seen["FAILED"][5] == "boom"
    assert segments == [1.5, 2.0]  # GPU-hours over both segments; wall-clock hours with the recovery


def test_an_unreachable_api_server_is_a_clear_error() -> None:
    seen = in_launch_env("""
import json
from launch.backends import BackendError
from launch.backends.skypilot import SkyPilotBackend
from launch.skypilot_task import SkyPilotConfig
backend = SkyPilotBackend(SkyPilotConfig("http://127.0.0.1:9", "s3://a", "s3://b", "x@sha256:" + "0" * 64), {})
try:
    backend.states(["arena-x"])
    print(json.dumps({"error": None}))
except BackendError as exc:
    print(json.dumps({"error": str(exc)}))
""")
    assert "the SkyPilot API server at http://127.0.0.1:9 failed" in seen["error"]
    assert "Could not connect" in seen["error"]


def test_missing_or_wrong_configuration_names_the_variable() -> None:
    with pytest.raises(SkyPilotConfigError, match="ARENA_SKYPILOT_ENDPOINT, ARENA_ARTIFACT_BUCKET"):
        SkyPilotConfig.from_env({"ARENA_SUITE_SOURCE": "s3://x"})
    good = {"ARENA_SKYPILOT_ENDPOINT": "https://sky.example.org", "ARENA_ARTIFACT_BUCKET": "s3://a",
            "ARENA_SUITE_SOURCE": "gs://b/suite", "ARENA_JOB_IMAGE": "ghcr.io/o/arena-job@sha256:" + "ab" * 32}
    assert SkyPilotConfig.from_env(good).gpu_types == ("H200", "H100")
    for variable, value in [("ARENA_SKYPILOT_ENDPOINT", "sky.example.org"), ("ARENA_ARTIFACT_BUCKET", "/tmp/x"),
                            ("ARENA_USE_SPOT", "maybe"), ("ARENA_SECRETS", "hf token"),
                            ("ARENA_JOB_IMAGE", "ghcr.io/o/arena-job:latest"), ("ARENA_CLOUDS", "aws,kubernetes")]:
        with pytest.raises(SkyPilotConfigError, match=variable.split("_")[1]):
            SkyPilotConfig.from_env({**good, variable: value})
    with pytest.raises(SkyPilotConfigError, match="the repository, the arena's commit and the PR"):
        task_config(EXAMPLE_SPEC.__class__("echo-word", "a" * 40, "cpu-small"), EXAMPLE_CONFIG)


def test_the_rendered_yaml_reads_as_the_job_it_describes() -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    assert data["name"] == EXAMPLE_SPEC.name and data["secrets"] == {"HF_TOKEN": None}
    assert json.loads(data["envs"]["ARENA_JOB_SPEC"])["commit"] == EXAMPLE_SPEC.commit
