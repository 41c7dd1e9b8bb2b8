"""bot.github_api against the stand-in's faults: what is retried and what is not (a POST GitHub may have performed is
never repeated blindly), Retry-After honoured up to its documented limit, pagination, GitHub App installation auth,
and the bot's exit codes when all fails."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot import github_api
from bot.main import run
from tests.support.github_standin import GitHubStandIn, fake_sha

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"
FILES = ["environments/sample-task/task.md"]


def client_for(hub: GitHubStandIn, **extra: str) -> github_api.Client:
    return github_api.connect({"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": hub.base_url, "GITHUB_TOKEN": hub.token,
                               "ARENA_GITHUB_THROTTLE": "off", "ARENA_GITHUB_BACKOFF": "0.01", **extra})


def test_bad_credentials_end_the_run_with_a_clear_error(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number, _ = world.open_fork_pr(FILES, fake_sha(1))
    assert world.run("pull_request_target", world.pr_event("opened", number), GITHUB_TOKEN="wrong") == 1
    out = capsys.readouterr().out
    assert "::error title=arena bot::ApiError: GitHub API 401: Bad credentials" in out
    assert world.hub.comments(REPO, number) == []


def test_every_page_of_a_long_conversation_is_read(hub: GitHubStandIn) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    for n in range(250):
        hub.post_comment(REPO, number, "alice", f"comment {n}")
    comments = github_api.list_issue_comments(client_for(hub), number)
    assert [c.body for c in comments] == [f"comment {n}" for n in range(250)]
    assert hub.calls("GET", rf"/issues/{number}/comments$") == 3  # 100 per page


def test_an_unknown_user_has_no_permission(hub: GitHubStandIn) -> None:
    assert github_api.get_permission(client_for(hub), "no-such-user") == "none"  # GitHub answers 404


@pytest.mark.parametrize("kind", ["server", "drop", "secondary", "rate_limit"])
@pytest.mark.slow
def test_reads_are_retried_after_transient_failures(hub: GitHubStandIn, kind: str) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.inject(r"/files$", 502, times=2, kind=kind)
    started = time.monotonic()
    assert github_api.list_changed_files(client_for(hub), number) == FILES
    assert hub.calls("GET", "/files$") == 3
    if kind in ("secondary", "rate_limit"):
        assert time.monotonic() - started >= 1.9, "Retry-After: 1 must be honoured on each of the two retries"


@pytest.mark.parametrize("kind", ["secondary", "rate_limit"])
@pytest.mark.slow
def test_a_post_github_refused_is_retried(hub: GitHubStandIn, kind: str) -> None:
    hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.inject(r"/statuses/", times=2, kind=kind)
    github_api.create_status(client_for(hub), fake_sha(1), "success", "arena/check", "ok", None)
    assert hub.calls("POST", "/statuses/") == 3 and len(hub.statuses(REPO, fake_sha(1))) == 1


@pytest.mark.parametrize(("kind", "after"), [("server", False), ("server", True), ("drop", False), ("drop", True)])
def test_a_post_github_may_have_performed_is_never_repeated_blindly(hub: GitHubStandIn, kind: str,
                                                                    after: bool) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.inject(r"/comments$", 502, method="POST", kind=kind, after=after)
    with pytest.raises(github_api.ApiError) as caught:
        github_api.create_comment(client_for(hub), number, "hello")
    assert caught.value.ambiguous and hub.calls("POST", "/comments$") == 1
    assert len(hub.comments(REPO, number)) == (1 if after else 0)  # the caller must read back to know


def test_a_retry_after_beyond_the_limit_fails_at_once(hub: GitHubStandIn) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.inject(r"/files$", times=1, kind="secondary", retry_after=3600)
    started = time.monotonic()
    with pytest.raises(github_api.ApiError) as caught:
        github_api.list_changed_files(client_for(hub), number)
    assert time.monotonic() - started < 5
    assert caught.value.status == 429 and not caught.value.ambiguous
    assert f"GitHub asked to wait 3600 s, longer than the bot's limit of {github_api.RETRY_AFTER_LIMIT_S} s" in str(
        caught.value)


def test_all_waits_of_a_run_share_one_budget(hub: GitHubStandIn) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    client = client_for(hub, ARENA_GITHUB_WAIT_BUDGET="1.5")
    hub.inject(r"/files$", times=3, kind="secondary", retry_after=1)
    with pytest.raises(github_api.ApiError) as caught:
        github_api.list_changed_files(client, number)
    assert "GitHub asked to wait 1 s, longer than the 1.5 s the bot may wait in one run" in str(caught.value)
    assert hub.calls("GET", "/files$") == 2  # waited once (1 s), then the second wait would overdraw the budget


def test_persistent_failures_become_api_errors(hub: GitHubStandIn) -> None:
    hub.inject(r"/pulls/", 503, times=100)
    with pytest.raises(github_api.ApiError) as caught:
        github_api.get_pull(client_for(hub), 1)
    assert caught.value.status == 503 and hub.calls("GET", "/pulls/") == 6  # one try and five retries
    hub.add_token("read-only", "reader", write=False)
    with pytest.raises(github_api.ApiError) as refused:
        github_api.create_comment(client_for(hub, GITHUB_TOKEN="read-only"), 1, "hello")
    assert refused.value.status == 403 and hub.calls("POST") == 1  # a plain 403 is not retried


def test_github_app_installation_auth(hub: GitHubStandIn) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    hub.add_app(app_id=1234, public_key_pem=public, installation_id=5678, slug="posttrain-arena")
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    env = {"ARENA_APP_ID": "1234", "ARENA_APP_PRIVATE_KEY": private, "ARENA_APP_INSTALLATION_ID": "5678"}
    client = client_for(hub, GITHUB_TOKEN="", **env)
    github_api.create_comment(client, number, "hello")
    github_api.create_comment(client, number, "again")
    assert [c["user"] for c in hub.comments(REPO, number)] == ["posttrain-arena[bot]"] * 2
    assert hub.calls("POST", "/app/installations/5678/access_tokens") == 1  # the token is reused until it expires
    with pytest.raises(github_api.ApiError):
        github_api.create_comment(client_for(hub, GITHUB_TOKEN="", **(env | {"ARENA_APP_ID": "999"})), number, "x")


def test_bad_invocations_exit_2(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    env = world.env("workflow_run", {})
    assert run({k: v for k, v in env.items() if k != "GITHUB_EVENT_NAME"}) == 2
    assert run(env | {"GITHUB_EVENT_PATH": "/nonexistent.json"}) == 2
    assert run({k: v for k, v in env.items() if k != "GITHUB_TOKEN"}) == 2
    assert "::error title=arena bot::bad invocation" in capsys.readouterr().out


def test_a_failure_midway_is_explained_on_the_pr(world: World, reports: dict[str, Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    number, _ = world.open_fork_pr(FILES, fake_sha(1))
    world.hub.inject(r"/statuses/", 502, times=100)
    assert world.run("workflow_run", world.run_event(number, run_id=41), reports["fixed"]) == 0
    body = world.sticky(number)["body"]
    assert "No verdict: the arena bot failed" in body and "GitHub API 502" in body
    assert "::error title=arena bot::ApiError: GitHub API 502" in capsys.readouterr().out


def test_when_github_refuses_everything_the_bot_exits_1(world: World, reports: dict[str, Path],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    number, _ = world.open_fork_pr(FILES, fake_sha(1))
    event = world.run_event(number, run_id=42)
    world.hub.add_token("read-only", "reader", write=False)
    assert world.run("workflow_run", event, reports["fixed"], GITHUB_TOKEN="read-only") == 1
    assert "could not post an explanation either" in capsys.readouterr().out
    world.hub.inject(r".", 500, times=1000)
    assert world.run("issue_comment", world.comment_event(number, "maintainer", "/arena train")) == 1
    assert world.hub.comments(REPO, number)[-1]["body"] == "/arena train"
