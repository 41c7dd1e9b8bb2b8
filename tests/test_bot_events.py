"""bot.events and bot.commands are pure: decisions from payloads and facts, asking for each fact only when the decision
needs it."""

from __future__ import annotations

import pytest

from bot.actions import AcceptTraining, Ignore, Need, Publish, Reply
from bot.commands import Command, parse_command
from bot.events import decide, scope
from bot.facts import Comment, Config, Facts, Pull
from bot.markers import MARKER, TrainKey
from bot.sticky import StickyState, plan, supersedes
from tests.support.github_standin import fake_sha

BOT = "github-actions[bot]"
CFG = Config(repo="arena-org/arena", bot_login=BOT, max_open_prs_per_author=0)
PULL = Pull(1, "open", "Add env", "alice", fake_sha(1), "branch", "alice/arena", "main", "main")


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
    ("/ARENA TRAIN abc1234 extra  \n/arena help", Command("train", ("abc1234", "extra"))),
    ("/arena", Command("help", ())),
    ("/Arena", Command("help", ())),
    ("/arena \nthanks", Command("help", ())),
    ("LGTM\n/arena train", None),
    ("  /arena train", None),
    ("/arena\ntrain", None),
    ("/arena\ttrain", None),
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
    assert isinstance(refusal, Reply) and "only maintainers" in refusal.body and refusal.to == 9


DIGEST = "sha256:" + "ab" * 32


def _verdict(author: str = BOT, kind: str = "Bot", base: str = "main", digest: str | None = DIGEST) -> Comment:
    state = StickyState(PULL.head_sha, base, "pass", "ab-cd", 3, 1, digest)
    return Comment(5, author, kind, f"{MARKER}\n{state.line()}\n## ✅")


@pytest.mark.parametrize(("verdict", "accepted"), [
    (_verdict(), True),
    (_verdict("carol", "User"), False),  # a contributor's copy of the markers
    (_verdict("other-app[bot]"), False),  # another bot: only the bot's own login counts
    (_verdict(base="release"), False),  # a verdict about another base
    (_verdict(digest=None), False),  # a verdict that does not say which package passed
])
def test_train_trusts_only_the_bots_own_verdict_on_this_base_and_head(verdict: Comment, accepted: bool) -> None:
    facts = Facts(pull=PULL, permission="write", comments=[verdict], fetched={"permission", "pull", "comments"})
    actions = decide("issue_comment", _comment_payload("/arena train"), facts, CFG)
    if accepted:
        assert actions[-1] == AcceptTraining(1, TrainKey("ab-cd", PULL.head_sha, "main"), "carol", 9, DIGEST,
                                             PULL.author)
    else:
        assert [type(a) for a in actions] == [Reply] and "Sorry carol" in actions[0].body


def test_train_refuses_a_pr_against_another_branch_even_with_a_verdict() -> None:
    pull = Pull(1, "open", "Add env", "alice", fake_sha(1), "branch", "alice/arena", "release", "main")
    facts = Facts(pull=pull, permission="admin", comments=[_verdict(base="release")],
                  fetched={"permission", "pull", "comments"})
    (refusal,) = decide("issue_comment", _comment_payload("/arena train"), facts, CFG)
    assert isinstance(refusal, Reply) and "targets `release`, not the default branch `main`" in refusal.body


def test_workflow_run_resolves_the_pr_from_the_run_never_from_the_artifact() -> None:
    run = {"action": "completed", "workflow_run": {"id": 7, "run_attempt": 1, "event": "pull_request",
                                                   "head_sha": PULL.head_sha, "head_branch": "branch",
                                                   "conclusion": "success", "created_at": "2026-01-01T00:00:00Z",
                                                   "head_repository": {"full_name": "alice/arena"}}}
    assert decide("workflow_run", run, Facts(), CFG) == [Need("pulls_by_head", ("alice/arena", "branch"))]
    moved = Pull(1, "open", "t", "alice", fake_sha(2), "branch", "alice/arena", "main", "main")
    (ignored,) = decide("workflow_run", run, Facts(pulls_by_head=[moved], fetched={"pulls_by_head"}), CFG)
    assert isinstance(ignored, Ignore) and "stale run" in ignored.reason
    facts = Facts(pulls_by_head=[PULL], fetched={"pulls_by_head"})
    assert decide("workflow_run", run, facts, CFG) == [Need("files", (1,)), Need("base_changes", (1,)),
                                                        Need("report")]
    facts.files, facts.report_error, facts.base_changes = ["environments/ab-cd/task.md"], "broken", []
    facts.fetched |= {"files", "report", "base_changes"}
    (published,) = decide("workflow_run", run, facts, CFG)
    assert isinstance(published, Publish) and published.state == StickyState(PULL.head_sha, "main", "error", "ab-cd",
                                                                               7, 1)
    assert published.note and "broken" in published.note  # why the report was rejected goes to the log too


@pytest.mark.parametrize(("changed_at", "trusted"), [("2025-12-31T00:00:00Z", True), ("2026-01-01T00:00:00Z", False),
                                                     ("not a time", False)])
def test_a_base_change_near_the_run_or_unreadable_forbids_its_verdict(changed_at: str, trusted: bool) -> None:
    run = {"action": "completed", "workflow_run": {"id": 7, "run_attempt": 1, "event": "pull_request",
                                                   "head_sha": PULL.head_sha, "head_branch": "branch",
                                                   "conclusion": "success", "created_at": "2026-01-01T00:00:00Z",
                                                   "head_repository": {"full_name": "alice/arena"}}}
    facts = Facts(pulls_by_head=[PULL], files=["environments/ab-cd/task.md"], report_error="broken",
                  base_changes=[changed_at], fetched={"pulls_by_head", "files", "report", "base_changes"})
    (published,) = decide("workflow_run", run, facts, CFG)
    assert isinstance(published, Publish)
    assert ("base branch changed" in (published.note or "")) is not trusted, published.note


def test_ordering_of_sticky_states() -> None:
    old = StickyState(fake_sha(1), "main", "fail", "ab-cd", 5, 1)
    assert supersedes(StickyState(fake_sha(2), "main", "pending"), old)  # a new head always wins
    assert supersedes(StickyState(fake_sha(1), "release", "scope"), old)  # so does a new base
    assert supersedes(StickyState(fake_sha(1), "main", "pass", "ab-cd", 5, 2), old)  # a re-run attempt wins
    assert not supersedes(StickyState(fake_sha(1), "main", "pass", "ab-cd", 4, 9), old)  # an older run loses
    assert not supersedes(StickyState(fake_sha(1), "main", "pending"), old)  # pending never replaces a verdict
    mine = Comment(1, BOT, "Bot", f"{MARKER}\n{old.line()}\nbody")
    assert plan([mine], mine.body, old, BOT).kind == "unchanged"
    assert plan([mine], mine.body, old, "other[bot]").kind == "create"  # only ARENA_BOT_LOGIN's comments count
