"""The only module that talks to GitHub (through PyGithub): the client, retries, and one small function per call.

Every function returns plain records (bot.facts) and raises ApiError for any failure, so nothing else in the bot sees
PyGithub. Objects are lazy, so each function costs exactly the requests it names.

Retries (urllib3 through PyGithub's GithubRetry, see `retry_policy`): reads and idempotent writes (GET, PATCH, PUT,
DELETE) on 5xx, 429, rate-limited 403s and lost connections; a POST only when GitHub said it did not perform it (429 or
a rate-limited 403), never after a 5xx or a lost answer: such a failure is *ambiguous* (`ApiError.ambiguous`) and the
caller re-reads before writing again (bot.writes). Retry-After is honoured up to RETRY_AFTER_LIMIT_S per wait and
WAIT_BUDGET_S per process; a longer wait fails at once with ApiError, so a run never sleeps until its job's timeout.

Environment: GITHUB_REPOSITORY, GITHUB_API_URL, and either GITHUB_TOKEN or a GitHub App (ARENA_APP_ID,
ARENA_APP_PRIVATE_KEY, ARENA_APP_INSTALLATION_ID). ARENA_GITHUB_BACKOFF scales retry waits (default 1.0) and
ARENA_GITHUB_THROTTLE=off drops PyGithub's pauses between requests (for tests and benchmarks);
ARENA_GITHUB_WAIT_BUDGET sets WAIT_BUDGET_S (seconds).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.IssueComment import IssueComment
from github.Repository import Repository

from bot.facts import Comment, Pull

P = ParamSpec("P")
T = TypeVar("T")
RETRIED_STATUSES = [429, *range(500, 600)]  # GithubRetry adds 403 when it is a rate limit or has Retry-After
NOT_PERFORMED = (403, 429)  # rate limits: GitHub refused the request before doing anything
RETRY_AFTER_LIMIT_S = 60  # the longest single wait the bot accepts (Retry-After or a rate-limit reset)
WAIT_BUDGET_S = 180  # all waits of one bot process together; the jobs' timeouts are 10 minutes


class ApiError(Exception):
    """A GitHub request failed for good (after retries); status 0 when no response came."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"GitHub API {status or 'unreachable'}: {message}")
        self.status = status

    @property
    def ambiguous(self) -> bool:
        """Whether GitHub may have performed the request anyway (no answer, or a server error)."""
        return self.status == 0 or self.status >= 500


class ConfigError(Exception):
    """The environment does not say how to reach GitHub."""


@dataclass
class Client:
    """A PyGithub client bound to one repository."""

    gh: Github
    repo_name: str

    @functools.cached_property
    def repo(self) -> Repository:
        return self.gh.get_repo(self.repo_name)


def connect(env: Mapping[str, str]) -> Client:
    """A client for GITHUB_REPOSITORY, authenticated as the GitHub App when configured, else with GITHUB_TOKEN."""
    repo = env.get("GITHUB_REPOSITORY", "")
    if repo.count("/") != 1:
        raise ConfigError("GITHUB_REPOSITORY must be owner/name")
    backoff = float(env.get("ARENA_GITHUB_BACKOFF", "1.0"))
    throttle = env.get("ARENA_GITHUB_THROTTLE", "on") != "off"
    budget = WaitBudget(float(env.get("ARENA_GITHUB_WAIT_BUDGET") or WAIT_BUDGET_S))
    gh = Github(auth=_auth(env), base_url=env.get("GITHUB_API_URL") or "https://api.github.com", lazy=True,
                per_page=100, retry=retry_policy(backoff, budget), seconds_between_requests=0.25 if throttle else None,
                seconds_between_writes=1.0 if throttle else None)
    return Client(gh, repo)


class WaitBudget:
    """Seconds of waiting left to one bot process, shared by every request's retries."""

    def __init__(self, seconds: float) -> None:
        self.total = self.left = seconds
        self.lock = threading.Lock()

    def take(self, seconds: float) -> bool:
        with self.lock:
            if seconds > self.left:
                return False
            self.left -= seconds
            return True


class ArenaRetry(GithubRetry):
    """GithubRetry that never repeats a POST GitHub may have performed, and never waits past its limits."""

    def __init__(self, budget: WaitBudget | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.budget = budget or WaitBudget(WAIT_BUDGET_S)

    def new(self, **kw: Any) -> ArenaRetry:
        return super().new(budget=self.budget, **kw)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method.upper() == "POST":  # allowed_methods leaves POST out, so a lost answer is not retried either
            return status_code in NOT_PERFORMED and super().is_retry("GET", status_code, has_retry_after)
        return super().is_retry(method, status_code, has_retry_after)

    def sleep_for_retry(self, response: Any) -> bool:
        wait = self.get_retry_after(response)
        if not wait:
            return False
        self._wait(wait, response)
        return True

    def _sleep_backoff(self) -> None:
        backoff = self.get_backoff_time()
        if backoff > 0:
            self._wait(backoff, None)

    def _wait(self, seconds: float, response: Any) -> None:
        if seconds > RETRY_AFTER_LIMIT_S or not self.budget.take(seconds):
            limit = (f"the bot's limit of {RETRY_AFTER_LIMIT_S} s per wait" if seconds > RETRY_AFTER_LIMIT_S
                     else f"the {self.budget.total:g} s the bot may wait in one run")
            status = getattr(response, "status", None) or 429
            raise RateLimitExceededExceedsMaxWait(status, {"message": f"GitHub asked to wait {seconds:.0f} s, "
                                                           f"longer than {limit}; giving up"}, None, wait=seconds)
        time.sleep(seconds)


def retry_policy(backoff: float, budget: WaitBudget | None = None) -> ArenaRetry:
    """Five retries on 5xx, 429, rate-limit 403s and lost connections (POSTs only where GitHub did nothing); each wait
    at most RETRY_AFTER_LIMIT_S and all of them within the process's WaitBudget."""
    return ArenaRetry(budget=budget, total=5, backoff_factor=backoff, backoff_max=30 * backoff,
                      status_forcelist=RETRIED_STATUSES, allowed_methods=frozenset({"GET", "PATCH", "PUT", "DELETE"}),
                      respect_retry_after_header=True, raise_on_status=False,
                      secondary_rate_wait=min(60 * backoff, RETRY_AFTER_LIMIT_S),
                      max_rate_limit_wait=RETRY_AFTER_LIMIT_S)


def _auth(env: Mapping[str, str]) -> Auth.Auth:
    app_id, key, installation = (env.get(k) for k in ("ARENA_APP_ID", "ARENA_APP_PRIVATE_KEY",
                                                      "ARENA_APP_INSTALLATION_ID"))
    if app_id and key and installation:
        return Auth.AppAuth(int(app_id), key).get_installation_auth(int(installation))
    if env.get("GITHUB_TOKEN"):
        return Auth.Token(env["GITHUB_TOKEN"])
    raise ConfigError("set GITHUB_TOKEN, or ARENA_APP_ID, ARENA_APP_PRIVATE_KEY and ARENA_APP_INSTALLATION_ID")


def _api(function: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return function(*args, **kwargs)
        except GithubException as exc:
            message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
            raise ApiError(exc.status, str(message)) from exc
        except requests.RequestException as exc:
            raise ApiError(0, type(exc).__name__) from exc
    return call


def _pull(pr: Any) -> Pull:
    head_repo = pr.head.repo.full_name if pr.head.repo is not None else None
    return Pull(number=pr.number, state=pr.state, title=pr.title, author=pr.user.login if pr.user else "ghost",
                head_sha=pr.head.sha, head_ref=pr.head.ref, head_repo=head_repo, base_ref=pr.base.ref,
                default_branch=pr.base.repo.default_branch, labels=tuple(label.name for label in pr.labels))


def _comment(c: Any) -> Comment:
    return Comment(c.id, c.user.login if c.user else "ghost", c.user.type if c.user else "User", c.body or "")


def _comment_object(client: Client, comment_id: int) -> IssueComment:
    return IssueComment(client.gh.requester, url=f"{client.repo.url}/issues/comments/{comment_id}")


@_api
def get_pull(client: Client, number: int) -> Pull:
    """GET /repos/{repo}/pulls/{number}."""
    return _pull(client.repo.get_pull(number))


@_api
def list_pulls_by_head(client: Client, head_repo: str, head_ref: str) -> list[Pull]:
    """Every open pull request from head_repo's head_ref, whatever its base: one listing."""
    owner = head_repo.split("/")[0]
    return [p for p in map(_pull, client.repo.get_pulls(state="open", head=f"{owner}:{head_ref}"))
            if p.head_repo == head_repo]


@_api
def list_base_changes(client: Client, number: int) -> list[str]:
    """When the pull request's base branch was changed (ISO 8601 UTC, from its issue events), oldest first."""
    return [e.created_at.strftime("%Y-%m-%dT%H:%M:%SZ") for e in client.repo.get_issue(number).get_events()
            if e.event == "base_ref_changed"]


@_api
def count_open_pulls_by(client: Client, author: str) -> int:
    """How many open pull requests author has in the repository (lists open pull requests)."""
    return sum(1 for p in client.repo.get_pulls(state="open") if p.user is not None and p.user.login == author)


@_api
def list_changed_files(client: Client, number: int) -> list[str]:
    """Every path a pull request touches, renamed files under both names (GitHub lists at most 3000)."""
    paths = []
    for changed in client.repo.get_pull(number).get_files():
        paths.append(changed.filename)
        if changed.previous_filename:
            paths.append(changed.previous_filename)
    return paths


@_api
def list_issue_comments(client: Client, number: int) -> list[Comment]:
    """Every comment on the PR's conversation, oldest first."""
    return [_comment(c) for c in client.repo.get_issue(number).get_comments()]


@_api
def get_comment(client: Client, comment_id: int) -> Comment | None:
    """One issue comment, or None when it is gone."""
    try:
        return _comment(_comment_object(client, comment_id))
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise


@_api
def create_comment(client: Client, number: int, body: str) -> int:
    """POST a new comment; returns its id."""
    return client.repo.get_issue(number).create_comment(body).id


@_api
def edit_comment(client: Client, comment_id: int, body: str) -> None:
    """PATCH a comment's body."""
    _comment_object(client, comment_id).edit(body)


@_api
def delete_comment(client: Client, comment_id: int) -> None:
    """DELETE a comment; one that is already gone is fine."""
    try:
        _comment_object(client, comment_id).delete()
    except GithubException as exc:
        if exc.status != 404:
            raise


@_api
def add_reaction(client: Client, comment_id: int, content: str) -> None:
    """React to a comment (+1, -1, eyes, ...)."""
    _comment_object(client, comment_id).create_reaction(content)


@_api
def add_labels(client: Client, number: int, labels: list[str]) -> None:
    """Add labels in one request (GitHub creates missing ones)."""
    client.repo.get_issue(number).add_to_labels(*labels)


@_api
def remove_label(client: Client, number: int, label: str) -> None:
    """Remove one label; a label that is already gone is fine."""
    try:
        client.repo.get_issue(number).remove_from_labels(label)
    except GithubException as exc:
        if exc.status != 404:
            raise


@_api
def create_status(client: Client, sha: str, state: str, context: str, description: str,
                  target_url: str | None) -> None:
    """POST a commit status (error, failure, pending or success) on sha."""
    payload = {"state": state, "context": context, "description": description[:140]}
    if target_url:
        payload["target_url"] = target_url
    client.gh.requester.requestJsonAndCheck("POST", f"{client.repo.url}/statuses/{sha}", input=payload)


@_api
def get_permission(client: Client, login: str) -> str:
    """The user's legacy permission on the repository: admin, write, read or none (none for unknown users)."""
    try:
        return client.repo.get_collaborator_permission(login)
    except GithubException as exc:
        if exc.status == 404:
            return "none"
        raise


@_api
def rerun_workflow(client: Client, run_id: int) -> None:
    """Re-run a completed workflow run."""
    client.gh.requester.requestJsonAndCheck("POST", f"{client.repo.url}/actions/runs/{run_id}/rerun")


@_api
def get_run(client: Client, run_id: int) -> tuple[str, int]:
    """A workflow run's status (queued, in_progress, completed, ...) and attempt number."""
    _, data = client.gh.requester.requestJsonAndCheck("GET", f"{client.repo.url}/actions/runs/{run_id}")
    return str(data.get("status")), int(data.get("run_attempt") or 1)


@dataclass(frozen=True)
class File:
    """A file on a branch: its bytes and its blob SHA (what an update must name)."""

    data: bytes
    sha: str


@_api
def ensure_branch(client: Client, branch: str) -> None:
    """Create `branch` from the default branch's head unless it exists (one GET, plus a POST the first time)."""
    try:
        client.repo.get_branch(branch)
        return
    except GithubException as exc:
        if exc.status != 404:
            raise
    head = client.repo.get_branch(client.repo.default_branch).commit.sha
    try:
        client.repo.create_git_ref(f"refs/heads/{branch}", head)
    except GithubException as exc:
        if exc.status != 422:  # 422: it exists now (another run made it first)
            raise


@_api
def get_file(client: Client, path: str, branch: str) -> File | None:
    """GET /repos/{repo}/contents/{path}?ref={branch}: the file, or None when there is none."""
    try:
        found = client.repo.get_contents(path, ref=branch)
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise
    if isinstance(found, list):
        return None
    return File(found.decoded_content, found.sha)


@_api
def put_file(client: Client, path: str, data: bytes, branch: str, message: str, sha: str | None) -> str:
    """Create (sha None) or replace (sha: the blob being replaced) one file in one commit; returns the new blob SHA.
    GitHub refuses with 409 or 422 when the file changed (or came to exist) since it was read."""
    if sha is None:
        done = client.repo.create_file(path, message, data, branch=branch)
    else:
        done = client.repo.update_file(path, message, data, sha, branch=branch)
    return done["content"].sha


@_api
def list_files(client: Client, branch: str, folder: str) -> list[str]:
    """Every file path under `folder` on `branch`, from one recursive tree listing (none when the branch is new)."""
    try:
        tree = client.repo.get_git_tree(branch, recursive=True)
    except GithubException as exc:
        if exc.status == 404:
            return []
        raise
    prefix = folder.rstrip("/") + "/"
    return sorted(e.path for e in tree.tree if e.type == "blob" and e.path.startswith(prefix))


@_api
def dispatch_workflow(client: Client, workflow_file: str) -> None:
    """Start a workflow of the repository on its default branch (workflow_dispatch: the one event a GITHUB_TOKEN
    may start another workflow with)."""
    client.repo.get_workflow(workflow_file).create_dispatch(client.repo.default_branch)
