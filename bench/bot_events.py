"""Benchmark: replay 1,000 GitHub events through the bot (`bot.main.run(env)`, as Actions runs it) against the local
GitHub stand-in, and print the API calls and milliseconds each kind of event costs.

Each pull request lives through ten events: opened, a failing verdict, the same verdict delivered again, /arena help,
/arena train from a non-maintainer, a push (synchronize), a passing verdict, the old verdict delivered late, /arena
train from a maintainer, an edited comment. Reports are real (`arena check --static --format json`), made once; the
payloads are the vendored ones in tests/fixtures/github/payloads.

    .venv/bin/python bench/bot_events.py [--events 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest_github import REPO, World, arena_report
from tests.support.github_standin import GitHubStandIn, fake_sha
from tests.support.packages import edit

FILES = ["environments/sample-task/task.md", "environments/sample-task/environment/Dockerfile"]


def broken(package: Path) -> None:
    edit(package / "environment/Dockerfile", "FROM debian:bookworm-slim", "FROM debian")


def lifecycle(world: World, index: int, reports: dict[str, Path]) -> list[tuple[str, str, dict, Path | None]]:
    """The ten events of one pull request, built lazily as the world moves (pushes happen between events)."""
    first, second = fake_sha(2 * index + 1), fake_sha(2 * index + 2)
    number, opened = world.open_fork_pr(FILES, first, author=f"contributor-{index}")
    old_run = world.run_event(number, run_id=10 * index + 1)
    yield "pull_request opened", "pull_request_target", opened, None
    yield "workflow_run verdict", "workflow_run", old_run, reports["broken"]
    yield "workflow_run duplicate", "workflow_run", old_run, reports["broken"]
    yield "comment /arena help", "issue_comment", world.comment_event(number, "visitor", "/arena help"), None
    yield "comment train refused", "issue_comment", world.comment_event(number, "visitor", "/arena train"), None
    world.hub.push(REPO, number, second)
    yield "pull_request synchronize", "pull_request_target", world.pr_event("synchronize", number), None
    passed = world.run_event(number, run_id=10 * index + 2, conclusion="success")
    yield "workflow_run verdict", "workflow_run", passed, reports["fixed"]
    yield "workflow_run stale", "workflow_run", old_run, reports["broken"]
    yield "comment train authorized", "issue_comment", world.comment_event(number, "maintainer", "/arena train"), None
    yield "comment edited", "issue_comment", world.comment_event(number, "maintainer", "/arena train", "edited"), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, GitHubStandIn() as hub:
        root = Path(tmp)
        reports = {"broken": arena_report(root, mutate=broken), "fixed": arena_report(root)}
        hub.add_repo(REPO)
        hub.set_role(REPO, "maintainer", "maintain")
        world = World(hub, root)
        calls: dict[str, list[int]] = defaultdict(list)
        millis: dict[str, list[float]] = defaultdict(list)
        done, index = 0, 0
        while done < args.events:
            for kind, event, data, report in lifecycle(world, index, reports):
                if done == args.events:
                    break
                before = len(hub.log)
                started = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    code = world.run(event, data, report)
                millis[kind].append((time.perf_counter() - started) * 1000)
                calls[kind].append(len(hub.log) - before)
                assert code == 0, (kind, code)
                done += 1
            index += 1
        report_table(calls, millis)
        stickies = sum(len(world.stickies(n)) for n in hub.repos[REPO].pulls)
        print(f"\n{done} events on {index} pull requests; {stickies} sticky comments (one per PR expected)")


def report_table(calls: dict[str, list[int]], millis: dict[str, list[float]]) -> None:
    print(f"{'event':<26} {'n':>5} {'API calls/event':>16} {'max':>4} {'ms/event':>9} {'p95 ms':>7}")
    for kind in calls:
        c, m = calls[kind], sorted(millis[kind])
        print(f"{kind:<26} {len(c):>5} {statistics.mean(c):>16.2f} {max(c):>4} {statistics.mean(m):>9.2f} "
              f"{m[int(0.95 * (len(m) - 1))]:>7.2f}")
    every_call = [x for c in calls.values() for x in c]
    every_ms = sorted(x for m in millis.values() for x in m)
    print(f"{'all':<26} {len(every_call):>5} {statistics.mean(every_call):>16.2f} {max(every_call):>4} "
          f"{statistics.mean(every_ms):>9.2f} {every_ms[int(0.95 * (len(every_ms) - 1))]:>7.2f}")


if __name__ == "__main__":
    main()
