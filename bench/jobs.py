"""Benchmark: what training jobs cost the bot, against the GitHub stand-in: GitHub API calls of the launch job (the
record, the budget, the reply) and of one poll, and calls to the backend's API server per poll, as the number of
jobs grows. The PR is acknowledged by the bot job's accepted reply, as before launch existed: the launch job's calls
come after it.

The backend is the Backend protocol kept in memory (it counts its calls: what the SkyPilot API server would be asked).

    .venv/bin/python bench/jobs.py [--jobs 1,10,50]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot import github_api, jobs
from bot.facts import Config
from bot.handoff import LaunchRequest
from bot.state_branch import BranchStore
from launch.budget import Budget
from launch.state import JobRecord
from tests.conftest_github import REPO, World, arena_report
from tests.support.github_standin import GitHubStandIn, fake_sha
from tests.test_launch_units import RecordingBackend

ENV = {"ARENA_RECIPE": "cpu-small", "ARENA_SCORE_PROFILE": "smoke", "ARENA_SCORE_BACKEND": "local"}
STAMP = "2026-12-01T00:00:00Z"


def one_size(count: int, report: Path, root: Path) -> dict[str, float]:
    with GitHubStandIn() as hub:
        hub.add_repo(REPO)
        hub.set_role(REPO, "maintainer", "maintain")
        world = World(hub, root)
        number, opened = world.open_fork_pr(["environments/sample-task/task.md"], fake_sha(1))
        with contextlib.redirect_stdout(io.StringIO()):
            world.run("pull_request_target", opened)
            world.run("workflow_run", world.run_event(number, run_id=9, conclusion="success"), report)
            handed: list[LaunchRequest] = []
            before = len(hub.log)
            world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                      launcher=handed.append)
        acknowledge = len(hub.log) - before
        client = github_api.connect({"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": hub.base_url,
                                     "GITHUB_TOKEN": hub.token, "ARENA_GITHUB_THROTTLE": "off"})
        store, backend = BranchStore(client), RecordingBackend()
        for n in range(count - 1):  # other jobs already on the branch, running, each for a PR of its own
            other, _ = world.open_fork_pr([f"environments/other-{n}/task.md"], fake_sha(1000 + n))
            store.create(JobRecord(f"other-{n}", fake_sha(1000 + n), "running", "local", "maintainer", STAMP, STAMP,
                                   other, f"arena-other-{n}", backend_job=f"arena-other-{n}"))
            backend.jobs[f"arena-other-{n}"] = backend.jobs.get(f"arena-other-{n}") or _running(f"arena-other-{n}")
        before, started = len(hub.log), time.perf_counter()
        jobs.launch(client, handed[0], backend, store, Budget(max_concurrent=10_000, gpu_hours_per_period=1e6), ENV,
                    lambda _: None)
        launch_calls, launch_ms = len(hub.log) - before, (time.perf_counter() - started) * 1000
        backend.calls = 0
        before, started = len(hub.log), time.perf_counter()
        jobs.poll(client, Config(REPO, hub.bot_login), backend, store, lambda _: None)
        return {"jobs": count, "acknowledge": acknowledge, "launch_calls": launch_calls, "launch_ms": launch_ms,
                "poll_calls": len(hub.log) - before, "poll_ms": (time.perf_counter() - started) * 1000,
                "backend_calls": backend.calls}


def _running(name: str) -> object:
    from launch.backends import BackendJob

    return BackendJob(name, name, "running")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,10,50")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = arena_report(Path(tmp))
        rows = [one_size(int(n), report, Path(tmp)) for n in args.jobs.split(",")]
    print(f"{'jobs':>5} {'ack calls':>10} {'launch calls':>13} {'launch ms':>10} {'poll GitHub calls':>18} "
          f"{'poll ms':>8} {'API-server calls':>17}")
    for r in rows:
        print(f"{r['jobs']:>5} {r['acknowledge']:>10} {r['launch_calls']:>13} {r['launch_ms']:>10.0f} "
              f"{r['poll_calls']:>18} {r['poll_ms']:>8.0f} {r['backend_calls']:>17}")
    print("ack calls: the bot job's whole handling of /arena train, which posts the accepted reply (unchanged by "
          "launch); API-server calls per poll stay at one however many jobs run.")


if __name__ == "__main__":
    main()
