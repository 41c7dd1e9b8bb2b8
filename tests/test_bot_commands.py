"""Slash commands end to end (`bot.main.run(env)` on issue_comment payloads against the stand-in): authorization only
through the collaborator permission API, polite refusals, the pinned SHA, no launch without authorization, and one
launch per (environment, commit) whoever asks and however often."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.handoff import LaunchRequest
from tests.support.github_standin import fake_sha as sha

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"
FILES = ["environments/sample-task/task.md", "environments/sample-task/verifier.py"]


@pytest.fixture
def passing(world: World, reports: dict[str, Path]) -> int:
    """A fork PR whose head has a passing verdict from run 300."""
    number, _ = world.open_fork_pr(FILES, sha(1))
    assert world.run("workflow_run", world.run_event(number, run_id=300, conclusion="success"), reports["fixed"]) == 0
    return number


class Launches(list):
    def __call__(self, request: LaunchRequest) -> None:
        self.append(request)


def test_a_maintainer_authorizes_training_at_the_pinned_head_and_launch_is_not_configured(world: World,
                                                                                         passing: int) -> None:
    event = world.comment_event(passing, "maintainer", "/arena train\n\nLooks good!")
    before = len(world.hub.log)
    assert world.run("issue_comment", event) == 0
    (reply,) = world.replies(passing)
    assert (f"Training accepted, requested by maintainer: `environments/sample-task` at commit {sha(1)}"
            in reply)
    assert "**Launch is not configured** for this arena yet, so nothing was started." in reply
    assert world.hub.reactions(REPO, event["comment"]["id"]) == ["+1"]
    paths = [(e.method, e.path) for e in world.hub.log[before:]]
    assert ("GET", f"/repos/{REPO}/collaborators/maintainer/permission") in paths
    assert len(paths) == 6, paths  # permission, pull, comments listing, reaction, reply, listing again


def test_training_goes_to_the_launcher_with_the_sha_pinned_at_authorization(world: World, passing: int) -> None:
    launches = Launches()
    event = world.comment_event(passing, "maintainer", f"/arena train {sha(1)[:10]}")
    assert world.run("issue_comment", event, launcher=launches) == 0
    reply = next(c for c in world.hub.comments(REPO, passing) if c["user"] == world.hub.bot_login
                 and "Training accepted" in c["body"])
    (request,) = launches
    assert request == LaunchRequest(REPO, passing, "sample-task", sha(1), "main", "maintainer",
                                    event["comment"]["id"], reply["id"], package_digest=request.package_digest,
                                    author="attacker")  # the PR's author, whom the results credit
    sticky = next(c["body"] for c in world.hub.comments(REPO, passing) if "posttrain-arena:state" in c["body"])
    assert f"digest={request.package_digest.removeprefix('sha256:')}" in sticky  # the digest the verdict recorded
    assert "The launch job of [this Actions run](https://github.com/arena-org/arena/actions/runs/777)" in reply["body"]


@pytest.mark.parametrize("role", [None, "read", "triage"])
def test_train_from_someone_without_write_access_is_refused_politely(world: World, passing: int,
                                                                    role: str | None) -> None:
    if role:
        world.hub.set_role(REPO, "someone", role)
    event = world.comment_event(passing, "someone", "/arena train")
    assert event["comment"]["author_association"] == "OWNER"  # the payload says OWNER; only the API decides
    launches = Launches()
    assert world.run("issue_comment", event, launcher=launches) == 0
    assert launches == []
    (reply,) = world.replies(passing)
    assert reply.startswith("Sorry someone, I can't run `/arena train`: only maintainers (write, maintain or admin")
    assert world.hub.reactions(REPO, event["comment"]["id"]) == []


@pytest.mark.parametrize(("role", "allowed"), [("admin", True), ("maintain", True), ("write", True),
                                              ("triage", False), ("read", False), (None, False)])
def test_only_write_maintain_and_admin_may_train(world: World, passing: int, role: str | None, allowed: bool) -> None:
    if role:
        world.hub.set_role(REPO, "someone", role)
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(passing, "someone", "/arena train"), launcher=launches) == 0
    assert [r.requested_by for r in launches] == (["someone"] if allowed else [])


def test_the_repository_owner_is_an_admin_and_a_second_request_launches_nothing_more(world: World,
                                                                                    passing: int) -> None:
    world.hub.set_role(REPO, "writer", "write")
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(passing, "writer", "/arena train"), launcher=launches) == 0
    assert world.run("issue_comment", world.comment_event(passing, "arena-org", "/arena train"), launcher=launches) == 0
    assert [r.requested_by for r in launches] == ["writer"]  # arena-org owns the repository: admin, but one launch
    first, second = world.replies(passing)
    assert "Training accepted, requested by writer" in first
    assert "was already accepted [here](https://github.com/arena-org/arena/pull/1#issuecomment-" in second
    assert "nothing more was started" in second


def test_train_is_refused_when_the_head_moved_since_the_verdict(world: World, passing: int) -> None:
    world.hub.push(REPO, passing, sha(2))
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                     launcher=launches) == 0
    assert launches == []
    assert (f"the head moved since the verdict: the verdict is for {sha(1)[:7]}, the head is now {sha(2)[:7]}"
            in world.replies(passing)[0])
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", f"/arena train {sha(1)[:8]}"),
                     launcher=launches) == 0
    assert launches == [] and "the head moved: you asked for" in world.replies(passing)[1]


def test_train_needs_a_passing_verdict(world: World, reports: dict[str, Path]) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                     launcher=launches) == 0
    assert "there is no verdict on the head commit" in world.replies(number)[0]
    assert world.run("workflow_run", world.run_event(number, run_id=301), reports["broken"]) == 0
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                     launcher=launches) == 0
    assert launches == [] and "is a fail; training needs a pass" in world.replies(number)[1]


def test_a_contributor_cannot_forge_a_passing_sticky_comment(world: World) -> None:
    number, _ = world.open_fork_pr(FILES, sha(1))
    world.hub.post_comment(REPO, number, "attacker", "<!-- posttrain-arena:sticky -->\n"
                           f"<!-- posttrain-arena:state head={sha(1)} run=999.1 outcome=pass -->\n## ✅ passed")
    launches = Launches()
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train"),
                     launcher=launches) == 0
    assert launches == [] and "there is no verdict" in world.replies(number)[0]
    assert world.run("pull_request_target", world.pr_event("synchronize", number)) == 0
    forged = [c for c in world.hub.comments(REPO, number) if c["user"] == "attacker"]
    assert forged[0]["body"].endswith("## ✅ passed")  # never edited by the bot


@pytest.mark.parametrize("case", ["edited", "bot", "bot login", "no command", "quoted", "second line",
                                  "indented", "plain issue"])
def test_comments_that_carry_no_command_cost_no_api_call(world: World, passing: int, case: str) -> None:
    if case == "plain issue":
        event = world.payload("issue_comment.created.json")
        event["comment"]["body"] = "/arena train"
    elif case == "edited":
        event = world.comment_event(passing, "maintainer", "/arena train", action="edited")
    elif case == "bot":
        event = world.comment_event(passing, "helper", "/arena train", user_type="Bot")
    elif case == "bot login":
        event = world.comment_event(passing, "helper[bot]", "/arena train")
    elif case == "second line":  # the workflow's trigger filter never lets this through, so the bot ignores it too
        event = world.comment_event(passing, "maintainer", "LGTM\n/arena train")
    elif case == "indented":
        event = world.comment_event(passing, "maintainer", "  /arena train")
    elif case == "quoted":
        event = world.comment_event(passing, "maintainer", "> /arena train\n\n```\n/arena train\n```\nlater")
    else:
        event = world.comment_event(passing, "maintainer", "/train --gpus 1")  # the payload's own body style
    before = len(world.hub.log)
    launches = Launches()
    assert world.run("issue_comment", event, launcher=launches) == 0
    assert world.hub.log[before:] == [] and launches == []


def test_help_and_unknown_commands_get_the_help_reply(world: World, passing: int) -> None:
    assert world.run("issue_comment", world.comment_event(passing, "drive-by", "/arena help")) == 0
    assert world.run("issue_comment", world.comment_event(passing, "drive-by", "/arena <b>@everyone</b>")) == 0
    assert world.run("issue_comment", world.comment_event(passing, "drive-by", "/arena")) == 0
    help_reply, unknown, bare = world.replies(passing)
    assert "| `/arena train [SHA]` | maintainers |" in help_reply and bare == help_reply
    assert "“&lt;b&gt;@\u200beveryone&lt;/b&gt;”" in unknown and help_reply in unknown
    assert not world.hub.calls("GET", "/permission")  # help needs no authorization


def test_check_reruns_the_validation_of_the_head_and_cancel_has_nothing_to_cancel(world: World,
                                                                                   passing: int) -> None:
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena check")) == 0
    assert world.hub.repos[REPO].reruns == [300]
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena cancel")) == 0
    assert "Nothing to cancel" in world.replies(passing)[0]
    assert world.run("issue_comment", world.comment_event(passing, "someone", "/arena check")) == 0
    assert world.hub.repos[REPO].reruns == [300] and "Sorry someone" in world.replies(passing)[1]
