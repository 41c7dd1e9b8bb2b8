"""The local backend and `arena launch` for real, on jobs that end quickly: a job that fails says why, a job is
cancelled with its whole process group, and the CLI's refusals name what to fix. The long, successful loop (train,
score, publish, a killed job recovered) is tests/test_launch_loop.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launch.backends.local import LocalBackend
from launch.spec import JobSpec
from tests.support.suites import STORIES, make_suite

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
ARENA = str(Path(sys.executable).parent / "arena")
SHA = "0123456789abcdef0123456789abcdef01234567"


def spec(**changes: object) -> JobSpec:
    return JobSpec(**{"environment": "echo-word", "commit": SHA, "recipe": "cpu-small", **changes})


def wait_until_finished(backend: LocalBackend, name: str, timeout_s: float = 180) -> object:
    deadline = time.monotonic() + timeout_s
    while True:
        job = backend.states([name])[name]
        if job.finished:
            return job
        assert time.monotonic() < deadline, backend.logs(name)[-3000:]
        time.sleep(0.5)


@pytest.mark.slow
def test_a_job_that_fails_says_which_phase_and_why(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "no-such-suite", tmp_path / "launch")
    name = backend.launch(spec(), ECHO_WORD)
    assert backend.launch(spec(), ECHO_WORD) == name  # already running: the same job
    job = wait_until_finished(backend, name)
    assert job.state == "failed" and job.detail.startswith("gate failed (exit 1); its output is in logs/gate.log")
    assert f"arena jobs logs {name} --phase gate" in job.detail
    status = json.loads((backend.artifacts(spec()) / "job.json").read_text())
    assert status["phases"]["gate"]["status"] == "failed" and "train" not in status["phases"]
    log = backend.logs(name)
    assert "arena-job: gate: started" in log and "no-such-suite" not in log  # the phase's output stays out
    assert "no-such-suite" in backend.phase_log(spec(), "gate")


def test_a_cancelled_job_stops_with_its_process_group(engine: object, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", instances=(0,))
    backend = LocalBackend(suite, tmp_path / "launch")
    name = backend.launch(spec(), ECHO_WORD)
    deadline = time.monotonic() + 120
    while "arena-job: gate: started" not in backend.logs(name):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    pid = json.loads((backend.job_folder(name) / "process").read_text())["pid"]
    backend.cancel([name])
    job = backend.states([name])[name]
    assert job.state == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # nothing of the job's process group is left


def test_a_job_flagged_by_the_gate_stops_and_says_nothing_of_the_suite(engine: object, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", instances=(0,))
    copy = shutil.copytree(ECHO_WORD, tmp_path / "echo-word")
    task = copy / "task.md"
    task.write_text(task.read_text() + f"\n{STORIES['healthcare']}\n")  # a held-out item's story
    backend = LocalBackend(suite, tmp_path / "launch")
    name = backend.launch(spec(), copy)
    job = wait_until_finished(backend, name)
    assert job.detail == "flagged by the contamination gate"  # no counts, no suite text: the PR sees this
    assert json.loads((backend.artifacts(spec()) / "job.json").read_text())["status"] == "stopped"
    report = json.loads((backend.artifacts(spec()) / "gate-report.json").read_text())
    assert report["counts"]["exact"] == 0 and report["counts"]["ngram"] >= 1  # the maintainers' report has them


def run_arena(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


@pytest.mark.slow
def test_launch_refuses_what_it_cannot_name_and_a_backend_it_cannot_reach(tmp_path: Path) -> None:
    loose = tmp_path / "echo-word"
    subprocess.run(["cp", "-r", str(ECHO_WORD), str(loose)], check=True)
    done = run_arena("launch", str(loose), "--no-wait")
    assert done.returncode == 2 and "is not a clean git checkout: commit the package, or pass --commit" in done.stderr
    done = run_arena("launch", str(loose), "--commit", "nope", "--no-wait")
    assert done.returncode == 2 and "commit is missing or malformed" in done.stderr
    done = run_arena("launch", str(loose), "--commit", SHA, "--backend", "skypilot", "--no-wait",
                     ARENA_SKYPILOT_ENDPOINT="")
    assert done.returncode == 3 and "ARENA_SKYPILOT_ENDPOINT" in done.stderr and "One-time set-up" in done.stderr


def test_render_prints_the_skypilot_task_with_secrets_by_name_only(tmp_path: Path) -> None:
    done = run_arena("launch", str(ECHO_WORD), "--commit", SHA, "--backend", "skypilot", "--render",
                     ARENA_SKYPILOT_ENDPOINT="https://sky.example.org", ARENA_ARTIFACT_BUCKET="s3://artifacts",
                     ARENA_SUITE_SOURCE="s3://suite/v1", HF_TOKEN="hf_never_printed", ARENA_PR="3",
                     ARENA_REPOSITORY="arena-org/arena", ARENA_COMMIT="9" * 40,
                     ARENA_JOB_IMAGE="ghcr.io/arena-org/arena-job@sha256:" + "e" * 64)
    assert done.returncode == 0, done.stderr
    assert "name: arena-echo-word-0123456789ab" in done.stdout and "HF_TOKEN: null" in done.stdout
    assert "ordered:" in done.stdout and "image_id: docker:ghcr.io/arena-org/arena-job@sha256:" in done.stdout
    assert "mode: MOUNT_CACHED" in done.stdout and '"package_digest":"sha256:' in done.stdout
    assert "hf_never_printed" not in done.stdout + done.stderr


def test_jobs_run_refuses_an_incomplete_description() -> None:
    done = run_arena("jobs", "run", ARENA_JOB_SPEC="", ARENA_JOB_OUT="", ARENA_JOB_ENVIRONMENT="", ARENA_SUITE="")
    assert done.returncode == 2 and "set ARENA_JOB_SPEC, ARENA_JOB_ENVIRONMENT, ARENA_JOB_OUT, ARENA_SUITE" in \
        done.stderr
    done = run_arena("jobs", "run", ARENA_JOB_SPEC='{"spec_version": 1}', ARENA_JOB_OUT="/tmp/x",
                     ARENA_JOB_ENVIRONMENT=str(ECHO_WORD), ARENA_SUITE="/tmp/s")
    assert done.returncode == 2 and "ARENA_JOB_SPEC: job description" in done.stderr
