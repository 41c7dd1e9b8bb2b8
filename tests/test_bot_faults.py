"""The bot under faults, against the GitHub stand-in: each fault strikes at the worst moment (after GitHub performed a
write, between two writes, two bot processes at once) and each case ends with exactly one correct comment, labels
and status that agree with it, and no launch the PR was not told about."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.facts import Comment
from bot.handoff import LaunchRequest
from bot.main import confirm_launch
from bot.markers import TrainKey, train_key
from bot.sticky import LABEL_PASS, parse_state
from tests.support.github_standin import fake_sha as sha

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"
FILES = ["environments/sample-task/task.md", "environments/sample-task/verifier.py"]
CREATE_COMMENT = r"/issues/\d+/comments$"
EDIT_COMMENT = r"/issues/comments/\d+$"


class Launches(list):
    def __call__(self, request: LaunchRequest) -> None:
        self.append(request)


def consistent(world: World, number: int, head: str, outcome: str) -> None:
    """Exactly one sticky, about `head` with `outcome`, and labels and the head's status that agree with it."""
    state = parse_state(world.sticky(number)["body"])
    assert state is not None and (state.head_sha, state.outcome) == (head, outcome), state
    arena = sorted(label for label in world.hub.labels(REPO, number) if label.startswith("arena: "))
    assert arena == sorted(state.labels)
    assert world.status(head)["state"] == state.status


# ----- GitHub performed the write, the bot heard a failure --------------------------------------------------------
@pytest.mark.parametrize("kind", ["server", "drop"])
def test_a_sticky_github_created_but_never_confirmed_is_not_created_again(world: World, kind: str) -> None:
    number, opened = world.open_fork_pr(FILES, sha(1))
    world.hub.inject(CREATE_COMMENT, 502, method="POST", kind=kind, after=True)
    assert world.run("pull_request_target", opened) == 0
    assert world.hub.calls("POST", CREATE_COMMENT) == 1  # read back, found, never posted again
    consistent(world, number, sha(1), "pending")


@pytest.mark.parametrize("after", [True, False])
def test_a_reply_is_posted_exactly_once_whether_or_not_the_lost_post_happened(world: World, passing: int,
                                                                               after: bool) -> None:
    world.hub.inject(CREATE_COMMENT, 502, method="POST", after=after)
    before = world.hub.calls("POST", CREATE_COMMENT)
    assert world.run("issue_comment", world.comment_event(passing, "drive-by", "/arena help")) == 0
    (reply,) = world.replies(passing)
    assert "PostTrain Arena commands" in reply
    assert world.hub.calls("POST", CREATE_COMMENT) - before == (1 if after else 2)


def test_an_accepted_training_reply_github_lost_is_found_and_launched_once(world: World, passing: int) -> None:
    world.hub.inject(CREATE_COMMENT, 0, method="POST", kind="drop", after=True)
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                     launcher=launches) == 0
    (reply,) = world.replies(passing)
    assert "Training accepted, requested by maintainer" in reply and len(launches) == 1
    assert launches[0].reply_comment == next(c["id"] for c in world.hub.comments(REPO, passing)
                                             if "Training accepted" in c["body"])


def test_labels_and_status_github_set_without_saying_so_are_not_doubled(world: World,
                                                                        reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    world.hub.inject(r"/labels$", 502, method="POST", after=True)
    world.hub.inject(r"/statuses/", 502, method="POST", after=True)
    assert world.run("workflow_run", world.run_event(number, run_id=5, conclusion="success"), reports["fixed"]) == 0
    consistent(world, number, sha(1), "pass")
    assert world.hub.labels(REPO, number) == [LABEL_PASS]


@pytest.mark.parametrize("after", [True, False])
def test_a_rerun_github_started_without_saying_so_is_not_started_again(world: World, passing: int,
                                                                       after: bool) -> None:
    world.hub.inject(r"/rerun$", 502, method="POST", after=after)
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena check")) == 0
    assert world.hub.repos[REPO].reruns == [300]
    assert world.hub.repos[REPO].runs[300]["run_attempt"] == 2


# ----- the world changes between two writes -----------------------------------------------------------------------
def test_a_push_between_the_verdict_and_its_labels_leaves_the_new_head_pending(world: World, passing: int,
                                                                              reports: dict[str, Path]) -> None:
    world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena check"))  # attempt 2 of run 300
    world.hub.between(EDIT_COMMENT, lambda: world.hub.push(REPO, passing, sha(2)), method="PATCH")
    event = world.run_event(passing, run_id=300, attempt=2, conclusion="success")
    assert world.run("workflow_run", event, reports["fixed"]) == 0
    consistent(world, passing, sha(2), "pending")  # the run saw the PR move and decided again for its new head
    assert LABEL_PASS not in world.hub.labels(REPO, passing)


@pytest.mark.slow
def test_a_verdict_that_cannot_be_published_leaves_nothing_green(world: World, passing: int,
                                                                 reports: dict[str, Path]) -> None:
    world.hub.inject(EDIT_COMMENT, 502, method="PATCH", times=1000)
    event = world.run_event(passing, run_id=300, attempt=2)  # a re-run attempt fails on the same head
    assert world.run("workflow_run", event, reports["broken"]) == 1
    assert world.hub.labels(REPO, passing) == [] and world.status(sha(1))["state"] in ("failure", "error")
    world.hub.faults.clear()  # GitHub recovers; the same delivery again settles everything
    assert world.run("workflow_run", event, reports["broken"]) == 0
    consistent(world, passing, sha(1), "fail")


# ----- two bot processes at once ---------------------------------------------------------------------------------
def test_two_runs_creating_the_sticky_at_once_leave_exactly_one(world: World) -> None:
    number, opened = world.open_fork_pr(FILES, sha(1))
    world.hub.rendezvous(CREATE_COMMENT, parties=2, method="POST")
    results = world.together(("pull_request_target", opened, None), ("pull_request_target", opened, None))
    assert [code for code, _, _ in results] == [0, 0], results
    assert world.hub.calls("POST", CREATE_COMMENT) == 2  # both did create one
    consistent(world, number, sha(1), "pending")


def test_a_verdict_and_a_push_written_at_once_end_describing_the_new_head(world: World,
                                                                           reports: dict[str, Path]) -> None:
    number, opened = world.open_fork_pr(FILES, sha(1))
    assert world.run("pull_request_target", opened) == 0
    world.hub.between(r"/issues/\d+/events$", lambda: world.hub.push(REPO, number, sha(2)))
    world.hub.rendezvous(EDIT_COMMENT, parties=2, method="PATCH")
    verdict, _ = world.spawn("workflow_run", world.run_event(number, run_id=7, conclusion="success"),
                             reports["fixed"])
    deadline = time.monotonic() + 60
    while world.hub.repos[REPO].pulls[number].head_sha != sha(2) and time.monotonic() < deadline:
        time.sleep(0.05)  # the verdict run has read the PR at sha(1); now the push
    push, _ = world.spawn("pull_request_target", world.pr_event("synchronize", number))
    assert verdict.wait(120) == 0 and push.wait(120) == 0
    consistent(world, number, sha(2), "pending")
    assert world.hub.calls("PATCH", EDIT_COMMENT) >= 2 and LABEL_PASS not in world.hub.labels(REPO, number)


def test_two_maintainers_asking_to_train_at_once_start_one_launch(world: World, passing: int) -> None:
    world.hub.set_role(REPO, "other-maintainer", "maintain")
    world.hub.rendezvous(CREATE_COMMENT, parties=2, method="POST")
    results = world.together(
        ("issue_comment", world.comment_event(passing, "maintainer", "/arena train"), None),
        ("issue_comment", world.comment_event(passing, "other-maintainer", f"/arena train {sha(1)[:8]}"), None))
    assert [code for code, _, _ in results] == [0, 0], results
    outputs = [output for _, _, output in results if output]
    assert len(outputs) == 1 and outputs[0].startswith("train=true\n"), results
    request = LaunchRequest.from_json(outputs[0].splitlines()[3].removeprefix("request="))
    accepted = [c for c in world.hub.comments(REPO, passing)
                if train_key(Comment(c["id"], c["user"], "Bot", c["body"]))]
    assert [c["id"] for c in accepted] == [request.reply_comment]
    assert request.key == TrainKey("sample-task", sha(1), "main")
    assert sum("was already accepted [here]" in reply for reply in world.replies(passing)) == 1


# ----- what the launch job is handed agrees with what the PR was told ---------------------------------------------
def test_no_launch_when_the_acceptance_cannot_be_posted(world: World, passing: int,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    world.hub.inject(CREATE_COMMENT, 502, method="POST", times=100)
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                     launcher=launches) == 1
    assert launches == [] and world.replies(passing) == []
    assert "could not post an explanation either" in capsys.readouterr().out


def test_a_handoff_that_fails_after_the_reply_corrects_the_reply(world: World, passing: int, tmp_path: Path) -> None:
    (proc, _), = [world.spawn("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                              GITHUB_OUTPUT=str(tmp_path))]  # a folder: the step outputs cannot be written
    log, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, log
    replies = world.replies(passing)
    assert "failed before handing this request to the launch job, so nothing was started" in replies[0]
    assert "; nothing was started." in replies[1] and not any("Training accepted" in r for r in replies)
    accepted = [c for c in world.hub.comments(REPO, passing) if "posttrain-arena:train" in c["body"]]
    assert accepted == []  # a later /arena train can be accepted


def test_the_launch_job_starts_only_what_the_pr_was_told(world: World, passing: int) -> None:
    launches = Launches()
    event = world.comment_event(passing, "maintainer", "/arena train")
    assert world.run("issue_comment", event, launcher=launches) == 0
    (request,) = launches
    env = world.env("issue_comment", event)
    assert confirm_launch(env | {"ARENA_LAUNCH_REQUEST": request.to_json()}) == 0
    other = LaunchRequest(REPO, passing, "sample-task", sha(9), "main", "maintainer", request.command_comment,
                          request.reply_comment)
    assert confirm_launch(env | {"ARENA_LAUNCH_REQUEST": other.to_json()}) == 1  # not the commit the PR was told
    forged = world.hub.post_comment(REPO, passing, "maintainer", world.hub.repos[REPO].comments[
        request.reply_comment]["body"])
    copy = LaunchRequest(REPO, passing, "sample-task", sha(1), "main", "maintainer", request.command_comment, forged)
    assert confirm_launch(env | {"ARENA_LAUNCH_REQUEST": copy.to_json()}) == 1  # not the bot's reply
    assert confirm_launch(env | {"ARENA_LAUNCH_REQUEST": "{}"}) == 2
    world.hub.repos[REPO].comments.pop(request.reply_comment)
    assert confirm_launch(env | {"ARENA_LAUNCH_REQUEST": request.to_json()}) == 1  # the reply is gone


# ----- waits are bounded ------------------------------------------------------------------------------------------
def test_a_retry_after_far_in_the_future_ends_the_run_with_a_message_on_the_pr(world: World,
                                                                              reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    world.hub.inject(r"/statuses/", method="POST", kind="secondary", retry_after=3600, times=100)
    started = time.monotonic()
    assert world.run("workflow_run", world.run_event(number, run_id=8), reports["broken"]) == 0
    assert time.monotonic() - started < 20
    body = world.sticky(number)["body"]
    assert "No verdict: the arena bot failed" in body and "GitHub asked to wait 3600 s" in body
    assert world.hub.labels(REPO, number) == []


def test_when_every_request_says_come_back_in_an_hour_the_log_says_so(world: World, reports: dict[str, Path],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    event = world.run_event(number, run_id=8)
    world.hub.inject(r".", kind="secondary", retry_after=3600, times=1000)
    started = time.monotonic()
    assert world.run("workflow_run", event, reports["broken"]) == 1
    assert time.monotonic() - started < 20
    out = capsys.readouterr().out
    assert "::error title=arena bot::ApiError: GitHub API 429: GitHub asked to wait 3600 s, longer than" in out
    assert "could not post an explanation either" in out
