"""The whole loop on this machine, for real: a fork PR adding an environment is validated, a writer's `/arena train`
is accepted (a non-writer's refused), the launch job starts the job on the local backend, the job is killed mid-way
and recovered from its checkpoint, it trains (GRPO + LoRA on the small model) and scores (the trained model against
the base on a held-out suite) in the sandbox, the poller publishes the results record on the bot's branch and
comments it on the PR through the GitHub stand-in, and the site built from that branch shows the new row; a second
`/arena train` on the same commit starts nothing new."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.handoff import LaunchRequest
from launch.backends.local import LocalBackend
from launch.spec import JobSpec
from sandbox.cleanup import collect_garbage
from tests.conftest import OWNER
from tests.support.github_standin import fake_sha as sha
from tests.support.suites import make_suite

if TYPE_CHECKING:
    from tests.conftest_github import World

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
ARENA = str(Path(sys.executable).parent / "arena")
REPO = "arena-org/arena"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def bot(world: World, command: str, **extra: str) -> subprocess.CompletedProcess:
    """`arena bot COMMAND` as the launch job or the jobs workflow runs it, against the stand-in."""
    env = os.environ | world.env("issue_comment", {}) | extra
    return subprocess.run([ARENA, "bot", command], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_pr_is_trained_scored_published_and_shown(engine: object, world: World, tmp_path: Path) -> None:
    started = time.monotonic()
    timings: dict[str, float] = {}
    checkout = tmp_path / "checkout"
    shutil.copytree(ECHO_WORD, checkout / "environments" / "echo-word")
    files = [f"environments/echo-word/{p.relative_to(ECHO_WORD).as_posix()}" for p in ECHO_WORD.rglob("*")
             if p.is_file()]
    number, opened = world.open_fork_pr(files, sha(1))
    assert world.run("pull_request_target", opened) == 0

    # Validated: the report of `arena check` on the package, as the validate workflow uploads it.
    report = tmp_path / "report"
    report.mkdir()
    done = subprocess.run([ARENA, "check", "--static", "--format", "json", "environments/echo-word"], cwd=checkout,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (report / "report.json").write_text(done.stdout)
    assert world.run("workflow_run", world.run_event(number, run_id=41, conclusion="success"), report) == 0
    assert "outcome=pass" in world.sticky(number)["body"]

    # A non-writer is refused; a writer is accepted and the request is handed to the launch job.
    world.hub.user("drive-by")
    handed: list[LaunchRequest] = []
    assert world.run("issue_comment", world.comment_event(number, "drive-by", "/arena train"),
                     launcher=handed.append) == 0
    assert handed == [] and "only maintainers" in world.replies(number)[-1]
    event = world.comment_event(number, "maintainer", "/arena train")
    assert world.run("issue_comment", event, launcher=handed.append) == 0
    (request,) = handed

    # The launch job: the local backend, the CPU recipe (3 steps, a checkpoint after 2), a small held-out suite.
    suite = make_suite(tmp_path / "suite", instances=(0,))
    launch_dir = tmp_path / "launch"
    launch_env = {"ARENA_LAUNCH_REQUEST": request.to_json(), "ARENA_LAUNCH_BACKEND": "local",
                  "ARENA_SUITE": str(suite), "ARENA_LAUNCH_DIR": str(launch_dir),
                  "ARENA_LOCAL_CHECKOUT": str(checkout), "ARENA_RECIPE": "cpu-small", "ARENA_STEPS": "3",
                  "ARENA_SKIP_CALIBRATION": "1", "ARENA_SCORE_PROFILE": "smoke", "ARENA_SCORE_BACKEND": "local",
                  "ARENA_SCORE_CACHE": str(tmp_path / "score-cache")}
    launched = bot(world, "launch", **launch_env)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    reply = world.hub.repos[REPO].comments[request.reply_comment]["body"]
    assert "**Training started**" in reply
    spec = JobSpec.from_json(json.loads(world.hub.files(REPO, "arena-state")[
        f"jobs/echo-word/{sha(1)}.json"])["spec"])
    backend = LocalBackend(suite, launch_dir)
    artifacts = backend.artifacts(spec)

    # A second /arena train on the same commit starts nothing new, at the bot and at the launch job.
    again: list[LaunchRequest] = []
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                     launcher=again.append) == 0
    assert again == [] and "was already accepted" in world.replies(number)[-1]
    assert bot(world, "launch", **launch_env).returncode == 0
    assert "already running" in world.hub.repos[REPO].comments[request.reply_comment]["body"]

    # Preempted: the job is killed once its first checkpoint is written; the next poll recovers it.
    checkpoint = artifacts / "train" / "checkpoints" / "checkpoint-2" / "trainer_state.json"
    _wait(lambda: checkpoint.is_file(), 1500, backend, spec)
    timings["to the checkpoint"] = time.monotonic() - started
    process = json.loads((backend.job_folder(spec.name) / "process").read_text())
    os.killpg(process["pid"], signal.SIGKILL)
    _wait(lambda: not backend._alive(backend.job_folder(spec.name)), 60, None, spec)
    collect_garbage(engine, include_images=False, owner=OWNER)  # what the killed run left, as `arena gc` removes it

    # The jobs workflow, every few seconds here: it recovers the killed job, then publishes its results.
    deadline = time.monotonic() + 1500
    while True:
        polled = bot(world, "poll-jobs", **launch_env)
        assert polled.returncode == 0, polled.stdout + polled.stderr
        record = json.loads(world.hub.files(REPO, "arena-state")[f"jobs/echo-word/{sha(1)}.json"])
        if record["state"] not in ("queued", "running"):
            break
        assert time.monotonic() < deadline, backend.logs(spec.name)[-3000:]
        time.sleep(5)
    timings["to the results"] = time.monotonic() - started
    log = backend.logs(spec.name)
    assert record["state"] == "succeeded", (record, log[-4000:])
    assert "restart 1: resuming" in log and "resuming from checkpoint-2" in backend.phase_log(spec, "train")
    assert "resuming from checkpoint-2" not in log  # phase output stays out of the job's log
    manifest = json.loads((artifacts / "train" / "manifest.json").read_text())
    assert manifest["resumed_from_step"] == 2 and manifest["steps"] == 3

    # Published: the record on the bot's branch, one results comment, the pages workflow started.
    state = world.hub.files(REPO, "arena-state")
    record_path = f"results/echo-word/{record['run_id']}.json"
    results = json.loads(state[record_path])
    assert (results["environment"], results["commit"], results["pr"]) == ("echo-word", sha(1), number)
    assert results["training"]["steps"] == 3 and results["suite"]["items"] == 8
    comments = [c["body"] for c in world.hub.comments(REPO, number) if "posttrain-arena:results" in c["body"]]
    assert len(comments) == 1 and "Training results: `environments/echo-word`" in comments[0]
    assert world.hub.repos[REPO].dispatches == [("pages.yml", "main")]
    assert bot(world, "poll-jobs", **launch_env).returncode == 0  # a later poll publishes nothing twice
    assert len([c for c in world.hub.comments(REPO, number) if "posttrain-arena:results" in c["body"]]) == 1

    # The site, built as the pages workflow builds it from a checkout of the bot's branch.
    branch = tmp_path / "state"
    for path, data in state.items():
        (branch / path).parent.mkdir(parents=True, exist_ok=True)
        (branch / path).write_bytes(data)
    site = tmp_path / "site"
    built = subprocess.run([ARENA, "site", "build", "--out", str(site), "--results", str(branch / "results"),
                            "--jobs", str(branch / "jobs"), "--environments", str(checkout / "environments")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    index = (site / "index.html").read_text()
    assert 'href="e/echo-word/"' in index or "e/echo-word/" in index
    assert (site / "e" / "echo-word" / "index.html").is_file()
    timings["whole loop"] = time.monotonic() - started
    print("timings:", {k: round(v) for k, v in timings.items()})


def _wait(done: Callable[[], bool], timeout_s: float, backend: LocalBackend | None, spec: JobSpec) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if backend is not None:
            job = backend.states([spec.name]).get(spec.name)
            assert job is not None and not job.finished, backend.logs(spec.name)[-4000:]
        assert time.monotonic() < deadline, backend.logs(spec.name)[-4000:] if backend else "timed out"
        time.sleep(2)
