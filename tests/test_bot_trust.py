"""One source of truth, end to end against the stand-in: only the bot's own login writes verdicts, the base branch is
part of every decision, GitHub's conclusion of a run counts, every push reaches the bot, and why a report gave no
verdict reaches the Actions log as well as the PR."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.handoff import LaunchRequest
from bot.sticky import LABEL_PASS, LABEL_SCOPE, StickyState, parse_state
from tests.support.github_standin import fake_sha as sha

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"
FILES = ["environments/sample-task/task.md", "environments/sample-task/verifier.py"]


class Launches(list):
    def __call__(self, request: LaunchRequest) -> None:
        self.append(request)


def outcome(world: World, number: int) -> StickyState:
    state = parse_state(world.sticky(number)["body"])
    assert state is not None
    return state


def train(world: World, number: int) -> tuple[list[LaunchRequest], str]:
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                     launcher=launches) == 0
    return launches, world.replies(number)[-1]


# ----- the bot's own identity -------------------------------------------------------------------------------------
def test_the_bot_will_not_run_without_knowing_its_own_login(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _, opened = world.open_fork_pr(FILES, sha(1))
    assert world.run("pull_request_target", opened, ARENA_BOT_LOGIN="") == 2
    assert "set ARENA_BOT_LOGIN" in capsys.readouterr().out and world.hub.log == []


@pytest.mark.parametrize(("login", "kind"), [("attacker", "User"), ("evil-app[bot]", "Bot")])
def test_a_verdict_written_by_any_other_account_is_not_the_bots(world: World, login: str, kind: str) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    world.hub.user(login, kind=kind)
    state = StickyState(sha(1), "main", "pass", "sample-task", 999, 1)
    forged = world.hub.post_comment(REPO, number, login, f"<!-- posttrain-arena:sticky -->\n{state.line()}\n## ✅")
    launches, reply = train(world, number)
    assert launches == [] and "there is no verdict on the head commit" in reply
    assert world.run("pull_request_target", world.pr_event("synchronize", number)) == 0
    assert world.hub.repos[REPO].comments[forged]["body"].endswith("## ✅")  # never taken over by the bot
    assert outcome(world, number).outcome == "pending"


# ----- the base branch --------------------------------------------------------------------------------------------
def test_a_pr_against_another_branch_gets_no_verdict_and_cannot_train(world: World, reports: dict[str, Path],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    number, opened = world.open_fork_pr(FILES, sha(1), base="release")
    assert world.run("pull_request_target", opened) == 0
    assert outcome(world, number).outcome == "scope" and world.hub.labels(REPO, number) == [LABEL_SCOPE]
    assert "targets `release`, not the default branch `main`" in world.sticky(number)["body"]
    assert world.run("workflow_run", world.run_event(number, run_id=3, conclusion="success"), reports["fixed"]) == 0
    assert outcome(world, number) == StickyState(sha(1), "release", "scope", "sample-task", 3, 1)
    assert world.status(sha(1))["state"] == "failure"
    assert "::warning title=arena: no verdict from this report::This pull request targets" in capsys.readouterr().out
    launches, reply = train(world, number)
    assert launches == [] and "targets `release`, not the default branch `main`" in reply


def test_a_run_set_up_before_the_base_changed_gives_no_verdict(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1), base="release")
    event = world.run_event(number, run_id=4, conclusion="success")  # validated against release...
    world.hub.retarget(REPO, number, "main")  # ...then retargeted before the report arrives
    assert world.run("workflow_run", event, reports["fixed"]) == 0
    assert outcome(world, number).outcome == "error" and LABEL_PASS not in world.hub.labels(REPO, number)
    assert "base branch changed after this run was set up" in world.sticky(number)["body"]
    assert world.run("pull_request_target", world.pr_event("synchronize", number)) == 0  # a push validates again
    later = (datetime.now(UTC) + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = world.run_event(number, run_id=5, conclusion="success", created_at=later)
    assert world.run("workflow_run", event, reports["fixed"]) == 0
    found = outcome(world, number)
    assert found == StickyState(sha(1), "main", "pass", "sample-task", 5, 1, found.package_digest)
    assert found.package_digest and found.package_digest.startswith("sha256:")


def test_retargeting_a_passing_pr_voids_its_verdict(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=6, conclusion="success"), reports["fixed"]) == 0
    for base, expected in [("release", "scope"), ("main", "pending")]:
        world.hub.retarget(REPO, number, base)
        edited = world.pr_event("edited", number) | {"changes": {"base": {"ref": {"from": "x"}}}}
        assert world.run("pull_request_target", edited) == 0
        assert outcome(world, number).outcome == expected and LABEL_PASS not in world.hub.labels(REPO, number)
    assert "The base branch changed, so no verdict from before counts" in world.sticky(number)["body"]
    launches, reply = train(world, number)
    assert launches == [] and "there is no verdict on the head commit" in reply


def test_a_branch_with_a_second_pr_against_another_base_gets_no_verdict(world: World,
                                                                        reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    pull = world.hub.repos[REPO].pulls[number]
    other = world.hub.add_pull(REPO, author=pull.author, head_sha=sha(1), files=FILES, head_ref=pull.head_ref,
                               head_repo=pull.head_repo, base_ref="release")
    assert world.run("workflow_run", world.run_event(number, run_id=7, conclusion="success"), reports["fixed"]) == 0
    assert outcome(world, number).outcome == "scope"
    assert f"Pull request #{other} comes from the same branch but targets `release`" in world.sticky(number)["body"]


# ----- GitHub's conclusion of the run -----------------------------------------------------------------------------
@pytest.mark.parametrize(("conclusion", "report", "expected"), [
    ("success", "fixed", "pass"), ("failure", "broken", "fail"), ("failure", "fixed", "error"),
    ("cancelled", "fixed", "error"), ("timed_out", "fixed", "error"), ("cancelled", "broken", "error"),
])
def test_only_a_run_github_marked_successful_can_pass(world: World, reports: dict[str, Path], conclusion: str,
                                                     report: str, expected: str) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    event = world.run_event(number, run_id=8, conclusion=conclusion)
    assert world.run("workflow_run", event, reports[report]) == 0
    assert outcome(world, number).outcome == expected
    assert (LABEL_PASS in world.hub.labels(REPO, number)) == (expected == "pass")
    if expected == "error":
        assert f"GitHub marked the validation run {conclusion.replace('_', chr(92) + '_')}" in world.sticky(
            number)["body"]


def test_a_skipped_run_changes_nothing(world: World) -> None:
    number, opened = world.open_fork_pr(FILES, sha(1))
    assert world.run("pull_request_target", opened) == 0
    writes = world.hub.calls("POST") + world.hub.calls("PATCH")
    assert world.run("workflow_run", world.run_event(number, run_id=9, conclusion="skipped")) == 0
    assert world.hub.calls("POST") + world.hub.calls("PATCH") == writes


# ----- pushes reach the bot ---------------------------------------------------------------------------------------
def test_a_push_that_edits_the_validate_workflow_cannot_keep_the_old_green(world: World,
                                                                           reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=10, conclusion="success"), reports["fixed"]) == 0
    assert world.hub.labels(REPO, number) == [LABEL_PASS]
    world.hub.push(REPO, number, sha(2), [*FILES, {"filename": ".github/workflows/validate.yml", "status": "modified"}])
    assert world.run("pull_request_target", world.pr_event("synchronize", number)) == 0
    assert world.hub.labels(REPO, number) == [LABEL_SCOPE] and world.status(sha(2))["state"] == "failure"
    assert ".github/workflows/validate.yml" in world.sticky(number)["body"]
    # the edited workflow may upload any report it likes; it still is no verdict
    assert world.run("workflow_run", world.run_event(number, run_id=11, conclusion="success"), reports["fixed"]) == 0
    assert outcome(world, number).outcome == "scope" and world.hub.labels(REPO, number) == [LABEL_SCOPE]
    launches, reply = train(world, number)
    assert launches == [] and "there is no verdict on the head commit" in reply


def test_an_edited_title_costs_no_write_and_keeps_the_verdict(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=12, conclusion="success"), reports["fixed"]) == 0
    writes = world.hub.calls("POST") + world.hub.calls("PATCH") + world.hub.calls("DELETE")
    assert world.run("pull_request_target", world.pr_event("edited", number)) == 0
    assert world.hub.calls("POST") + world.hub.calls("PATCH") + world.hub.calls("DELETE") == writes
    assert outcome(world, number).outcome == "pass"


# ----- text that reaches people -----------------------------------------------------------------------------------
def test_why_a_report_was_rejected_reaches_the_log_too(world: World, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    bad = tmp_path / "artifact"
    bad.mkdir()
    (bad / "report.json").write_text('{"report_version": 1, "verdict": "pass"}')
    assert world.run("workflow_run", world.run_event(number, run_id=13), bad) == 0
    out = capsys.readouterr().out
    assert ("::warning title=arena: no verdict from this report::the validation report could not be read: the "
            "report does not match report schema v1") in out
    assert "report schema v1" in world.sticky(number)["body"]


def test_invisible_and_bidi_characters_never_reach_the_comment(world: World, reports: dict[str, Path]) -> None:
    import unicodedata

    number, _ = world.open_fork_pr(FILES, sha(1))
    world.hub.repos[REPO].pulls[number].head_ref = "fix\u202egnp.exe\u2066x\u2069\U000e0041\u061c\u2060\ufeff"
    assert world.run("workflow_run", world.run_event(number, run_id=14), reports["broken"]) == 0
    body = world.sticky(number)["body"]
    assert {c for c in body if unicodedata.category(c) == "Cf"} <= {"\u200b"}  # only the bot's own mention breaks
    assert "fixgnp.exex" in body
