"""bot.events is pure: decisions from payloads and facts, asking for each fact only when the decision needs it."""

from __future__ import annotations

import pytest

from bot.actions import Ignore, LaunchTraining, Need, Publish, Refuse
from bot.events import Command, decide, parse_command, scope
from bot.model import Comment, Config, Facts, Pull
from bot.sticky import MARKER, StickyState, plan, supersedes
from tests.support.github_standin import fake_sha

CFG = Config(repo="arena-org/arena", max_open_prs_per_author=0)
PULL = Pull(1, "open", "Add env", "alice", fake_sha(1), "branch", "alice/arena")


@pytest.mark.parametrize(("files", "name", "outside"), [
    (["environments/ab-cd/task.md", "environments/ab-cd/oracle/solve.sh"], "ab-cd", []),
    (["environments/ab-cd/task.md", "README.md"], "ab-cd", ["README.md"]),
    (["environments/ab-cd/task.md", "environments/ef-gh/task.md"], None,
     ["environments/ab-cd/task.md", "environments/ef-gh/task.md"]),
    (["environments/Bad_Name/task.md"], None, ["environments/Bad_Name/task.md"]),
    (["environments/ab-cd"], None, ["environments/ab-cd"]),
    (["environments/ab-cd/../../x"], None, ["environments/ab-cd/../../x"]),
    ([], None, ["(no files changed)"]),
])
def test_scope_is_exactly_one_environment_folder(files: list[str], name: str | None, outside: list[str]) -> None:
    assert scope(files) == (name, outside)


def test_scope_refuses_a_listing_github_may_have_truncated() -> None:
    name, outside = scope([f"environments/ab-cd/f{n}" for n in range(3000)])
    assert name == "ab-cd" and "GitHub lists only 3000 files" in outside[0]


@pytest.mark.parametrize(("body", "command"), [
    ("/arena train", Command("train", ())),
    ("LGTM\n  /arena TRAIN abc1234 extra  \n/arena help", Command("train", ("abc1234", "extra"))),
    ("/arena", Command("help", ())),
    ("/arenatrain", None),
    ("> /arena train", None),
    ("```\n/arena train\n```", None),
    ("please /arena train", None),
    ("/train --gpus 1", None),
])
def test_parse_command(body: str, command: Command | None) -> None:
    assert parse_command(body) == command


def _comment_payload(body: str, action: str = "created") -> dict:
    return {"action": action, "issue": {"number": 1, "pull_request": {}},
            "comment": {"id": 9, "body": body, "user": {"login": "carol", "type": "User"},
                        "author_association": "OWNER"}}


def test_train_asks_for_permission_first_and_nothing_else_when_it_is_missing() -> None:
    facts = Facts()
    assert decide("issue_comment", _comment_payload("/arena train"), facts, CFG) == [Need("permission", ("carol",))]
    facts.permission, facts.fetched = "read", {"permission"}
    (refusal,) = decide("issue_comment", _comment_payload("/arena train"), facts, CFG)
    assert isinstance(refusal, Refuse) and "only maintainers" in refusal.reason


def test_train_pins_the_head_the_verdict_is_about() -> None:
    verdict = f"{MARKER}\n{StickyState(PULL.head_sha, 'pass', 3, 1).line()}\n## ✅"
    facts = Facts(pull=PULL, permission="write", comments=[Comment(5, "github-actions[bot]", "Bot", verdict)],
                  fetched={"permission", "pull", "comments"})
    actions = decide("issue_comment", _comment_payload("/arena train"), facts, CFG)
    assert actions[-1] == LaunchTraining(1, PULL.head_sha, "carol")
    spoofed = Facts(pull=PULL, permission="write", comments=[Comment(5, "carol", "User", verdict)],
                    fetched={"permission", "pull", "comments"})
    assert isinstance(decide("issue_comment", _comment_payload("/arena train"), spoofed, CFG)[0], Refuse)


def test_workflow_run_resolves_the_pr_from_the_run_never_from_the_artifact() -> None:
    run = {"action": "completed", "workflow_run": {"id": 7, "run_attempt": 1, "event": "pull_request",
                                                   "head_sha": PULL.head_sha, "head_branch": "branch",
                                                   "head_repository": {"full_name": "alice/arena"}}}
    assert decide("workflow_run", run, Facts(), CFG) == [Need("pull_by_head", ("alice/arena", "branch",
                                                                                PULL.head_sha))]
    moved = Facts(pull=Pull(1, "open", "t", "alice", fake_sha(2), "branch", "alice/arena"), fetched={"pull"})
    (ignored,) = decide("workflow_run", run, moved, CFG)
    assert isinstance(ignored, Ignore) and "stale run" in ignored.reason
    facts = Facts(pull=PULL, fetched={"pull"})
    assert decide("workflow_run", run, facts, CFG) == [Need("files", (1,)), Need("report")]
    facts.files, facts.report_error, facts.fetched = ["environments/ab-cd/task.md"], "broken", {"pull", "files",
                                                                                               "report"}
    (published,) = decide("workflow_run", run, facts, CFG)
    assert isinstance(published, Publish) and published.sticky.state == StickyState(PULL.head_sha, "error", 7, 1)


def test_ordering_of_sticky_states() -> None:
    old = StickyState(fake_sha(1), "fail", 5, 1)
    assert supersedes(StickyState(fake_sha(2), "pending"), old)  # a new head always wins
    assert supersedes(StickyState(fake_sha(1), "pass", 5, 2), old)  # a re-run attempt wins
    assert not supersedes(StickyState(fake_sha(1), "pass", 4, 9), old)  # an older run loses
    assert not supersedes(StickyState(fake_sha(1), "pending"), old)  # pending never replaces a verdict
    mine = Comment(1, "github-actions[bot]", "Bot", f"{MARKER}\n{old.line()}\nbody")
    assert plan([mine], mine.body, old, None).kind == "unchanged"
    assert plan([mine], mine.body, old, "other[bot]").kind == "create"  # ARENA_BOT_LOGIN narrows whose it is
