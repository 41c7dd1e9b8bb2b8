"""The stand-in speaks GitHub's REST shapes, and bot.github_api survives its faults: retries with backoff on 5xx, 429
and rate-limited 403s honouring Retry-After, GitHub App installation auth, and the bot's exit codes when all fails."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
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


def raw(hub: GitHubStandIn, path: str, token: str | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(hub.base_url + path)
    if token:
        request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_the_standin_answers_like_github(hub: GitHubStandIn) -> None:
    assert raw(hub, f"/repos/{REPO}")[2] == {"message": "Requires authentication",
                                             "documentation_url": "https://docs.github.com/rest"}
    assert raw(hub, f"/repos/{REPO}", "wrong")[0:3:2] == (401, {"message": "Bad credentials",
                                                               "documentation_url": "https://docs.github.com/rest"})
    status, headers, body = raw(hub, "/repos/arena-org/nothing", hub.token)
    assert (status, body["message"]) == (404, "Not Found") and headers["X-RateLimit-Limit"] == "5000"
    status, headers, body = raw(hub, "/rate_limit", hub.token)
    assert status == 200 and body["resources"]["core"]["remaining"] == int(headers["X-RateLimit-Remaining"])


def test_plain_pygithub_completes_objects_against_the_standin(hub: GitHubStandIn) -> None:
    from github import Auth, Github

    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES, title="Add env")
    gh = Github(auth=Auth.Token(hub.token), base_url=hub.base_url, seconds_between_requests=None,
                seconds_between_writes=None)  # not lazy: every object is fetched as PyGithub normally does
    repo = gh.get_repo(REPO)
    pull = repo.get_pull(number)
    issue = repo.get_issue(number)
    created = pull.create_issue_comment("hello")
    created.edit("edited")
    created.create_reaction("rocket")
    assert (repo.full_name, pull.title, pull.user.login, issue.pull_request is not None) == (REPO, "Add env",
                                                                                          "alice", True)
    assert [c.body for c in pull.get_issue_comments()] == ["edited"] and hub.reactions(REPO, created.id) == ["rocket"]
    assert gh.get_rate_limit().resources.core.limit == 5000


def test_lists_are_paginated_with_link_headers(hub: GitHubStandIn) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    for n in range(250):
        hub.post_comment(REPO, number, "alice", f"comment {n}")
    _, headers, page = raw(hub, f"/repos/{REPO}/issues/{number}/comments?per_page=100", hub.token)
    assert len(page) == 100 and 'rel="next"' in headers["Link"] and "page=3" in headers["Link"]
    _, headers, page = raw(hub, f"/repos/{REPO}/issues/{number}/comments?per_page=100&page=3", hub.token)
    assert len(page) == 50 and 'rel="prev"' in headers["Link"] and 'rel="next"' not in headers["Link"]
    comments = github_api.list_issue_comments(client_for(hub), number)
    assert [c.body for c in comments] == [f"comment {n}" for n in range(250)]
    assert hub.calls("GET", rf"/issues/{number}/comments$") == 3 + 2


def test_permission_uses_githubs_legacy_mapping(hub: GitHubStandIn) -> None:
    client = client_for(hub)
    for role, permission in [("admin", "admin"), ("maintain", "write"), ("write", "write"), ("triage", "read"),
                             ("read", "read")]:
        hub.set_role(REPO, f"user-{role}", role)
        assert github_api.get_permission(client, f"user-{role}") == permission
    hub.user("stranger")
    assert github_api.get_permission(client, "stranger") == "read"  # public repository, not a collaborator
    assert github_api.get_permission(client, "no-such-user") == "none"  # GitHub answers 404


@pytest.mark.parametrize("kind", ["server", "secondary", "rate_limit"])
def test_transient_failures_are_retried(hub: GitHubStandIn, kind: str) -> None:
    number = hub.add_pull(REPO, author="alice", head_sha=fake_sha(1), files=FILES)
    hub.inject(r"/statuses/", 502, times=2, kind=kind)
    started = time.monotonic()
    github_api.create_status(client_for(hub), fake_sha(1), "success", "arena/check", "ok", None)
    elapsed = time.monotonic() - started
    assert [e.status for e in hub.log if "/statuses/" in e.path][-3:][-1] == 201
    assert hub.calls("POST", "/statuses/") == 3 and len(hub.statuses(REPO, fake_sha(1))) == 1
    if kind != "server":
        assert elapsed >= 1.9, "Retry-After: 1 must be honoured on each of the two retries"
    github_api.create_status(client_for(hub), fake_sha(1), "failure", "other/ci", "no", None)
    status, _, combined = raw(hub, f"/repos/{REPO}/commits/{fake_sha(1)}/status", hub.token)
    assert (status, combined["state"], combined["total_count"]) == (200, "failure", 2)
    assert github_api.list_changed_files(client_for(hub), number) == FILES


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
