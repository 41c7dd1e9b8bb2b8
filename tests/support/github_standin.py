"""A local stand-in for the GitHub REST API: a real HTTP server on 127.0.0.1 that PyGithub talks to unchanged.

State lives in memory (repositories, pull requests and their files, issue comments and issue events, reactions,
labels, commit statuses, collaborator roles, workflow runs, GitHub App installations). Every request is logged (method,
path, query, status) so tests can count API calls. Faults are injected at the worst moments: an error before the
request is served (5xx, rate limits with any Retry-After, 429), an error after it was performed (GitHub did the write
but the client never hears so), a connection closed without an answer (before or after performing), a delay, a hook
that changes the world between the request being performed and answered, and a rendezvous that holds requests from
separate processes until all of them have arrived (two bot runs racing).
Responses follow the shapes of docs.github.com/rest: status codes (201 on create, 204 on delete, 404 with
{"message": "Not Found"}, 401 without credentials, 422 on invalid input), Link pagination and X-RateLimit-* headers.

    with GitHubStandIn() as hub:
        hub.add_repo("octo/arena")
        gh = Github(auth=Auth.Token(hub.token), base_url=hub.base_url)
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt

from tests.support.serving import start_serving, stop_serving

HTML = "https://github.com"
DOCS = "https://docs.github.com/rest"
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
STATUS_STATES = ("error", "failure", "pending", "success")
ROLES = ("admin", "maintain", "write", "triage", "read")
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
RATE_LIMIT = 5000


def fake_sha(n: int) -> str:
    """A distinct, realistic commit SHA for test data (no two share a short prefix)."""
    return hashlib.sha1(f"commit {n}".encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class HttpError(Exception):
    """An error response: status, message, extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class Logged:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    status: int


DROP = 0  # a fault status meaning: close the connection without answering


@dataclass
class Fault:
    """What happens to the next `times` matching requests: held at a rendezvous, delayed, answered with `status`
    (DROP: no answer at all) before or after being performed, and a hook run once one was performed."""

    pattern: re.Pattern[str]
    method: str | None
    times: int
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Server Error"
    after: bool = False
    delay: float = 0.0
    hook: Callable[[], None] | None = None
    gate: threading.Barrier | None = None


@dataclass
class Pull:
    """A pull request (and its issue: same number)."""

    number: int
    id: int
    title: str
    author: str
    head_sha: str
    head_ref: str
    head_repo: str | None
    base_ref: str
    base_sha: str
    files: list[dict]
    state: str = "open"
    body: str | None = None
    labels: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)  # issue events (base_ref_changed)
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)


@dataclass
class Branch:
    """A branch: its head commit and the files of that commit (path -> bytes)."""

    head: str
    files: dict[str, bytes] = field(default_factory=dict)


def blob_sha(data: bytes) -> str:
    """Git's blob id for a file's bytes (what the contents API calls a file's sha)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    """A repository and everything hanging off it."""

    id: int
    owner: str
    name: str
    private: bool
    default_branch: str
    roles: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, Pull] = field(default_factory=dict)
    comments: dict[int, dict] = field(default_factory=dict)  # id -> {issue, user, body, created_at, updated_at}
    reactions: dict[int, list[dict]] = field(default_factory=dict)
    label_defs: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, list[dict]] = field(default_factory=dict)
    runs: dict[int, dict] = field(default_factory=dict)
    reruns: list[int] = field(default_factory=list)
    branches: dict[str, Branch] = field(default_factory=dict)
    dispatches: list[tuple[str, str]] = field(default_factory=list)  # (workflow file, ref) started by dispatch

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class GitHubStandIn:
    """The server and its state. Use as a context manager; `base_url` and `token` are for PyGithub."""

    def __init__(self, token: str = "ghs_standin_token", bot_login: str = "github-actions[bot]") -> None:
        self.token = token
        self.bot_login = bot_login
        self.lock = threading.RLock()
        self.ids = itertools.count(1000)
        self.users: dict[str, dict] = {}
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, tuple[str, bool]] = {}  # token -> (login, can write)
        self.apps: dict[int, dict] = {}  # installation id -> {app_id, public_key, login}
        self.faults: list[Fault] = []
        self.log: list[Logged] = []
        self.remaining: dict[str, int] = {}
        self.server: ThreadingHTTPServer | None = None
        self.user(bot_login, kind="Bot")
        self.add_token(token, bot_login)

    # ----- lifecycle -------------------------------------------------------------------------------------------
    def __enter__(self) -> GitHubStandIn:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        start_serving(self.server, "github-standin")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        stop_serving(self.server)

    @property
    def base_url(self) -> str:
        assert self.server is not None, "use the stand-in as a context manager"
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    # ----- building the world ----------------------------------------------------------------------------------
    def user(self, login: str, kind: str = "User") -> dict:
        """The user record for login, created on first use."""
        with self.lock:
            if login not in self.users:
                self.users[login] = {"login": login, "id": next(self.ids), "type": kind}
            return self.users[login]

    def add_token(self, token: str, login: str, write: bool = True) -> None:
        """A token acting as login; read-only tokens get 403 on every write, like a fork PR's GITHUB_TOKEN."""
        self.tokens[token] = (login, write)

    def add_app(self, app_id: int, public_key_pem: str, installation_id: int, slug: str = "arena-bot") -> None:
        """A GitHub App installation whose JWTs (RS256, iss=app_id) buy installation tokens."""
        login = f"{slug}[bot]"
        self.user(login, kind="Bot")
        self.apps[installation_id] = {"app_id": str(app_id), "public_key": public_key_pem, "login": login}

    def add_repo(self, full_name: str, private: bool = False, default_branch: str = "main") -> Repo:
        owner, name = full_name.split("/")
        self.user(owner)
        repo = Repo(id=next(self.ids), owner=owner, name=name, private=private, default_branch=default_branch)
        repo.branches[default_branch] = Branch(fake_sha(next(self.ids)))
        self.repos[full_name] = repo
        return repo

    def files(self, repo: str, branch: str) -> dict[str, bytes]:
        """The files of a branch (empty when the branch does not exist)."""
        found = self.repos[repo].branches.get(branch)
        return dict(found.files) if found else {}

    def set_role(self, repo: str, login: str, role: str) -> None:
        """Make login a collaborator with one of admin, maintain, write, triage, read."""
        assert role in ROLES, role
        self.user(login)
        self.repos[repo].roles[login] = role

    def add_pull(self, repo: str, *, author: str, head_sha: str, files: list[str] | list[dict], title: str = "Add env",
                 head_ref: str = "changes", head_repo: str | None = None, base_ref: str = "main",
                 number: int | None = None, state: str = "open") -> int:
        """Open a pull request; head_repo defaults to the base repository (a same-repo branch)."""
        with self.lock:
            r = self.repos[repo]
            self.user(author)
            number = number or max([0, *r.pulls, *(c["issue"] for c in r.comments.values())]) + 1
            r.pulls[number] = Pull(number=number, id=next(self.ids), title=title, author=author, head_sha=head_sha,
                                   head_ref=head_ref, head_repo=head_repo or repo, base_ref=base_ref,
                                   base_sha="f" * 40, files=[_file_entry(f) for f in files], state=state)
            return number

    def push(self, repo: str, number: int, head_sha: str, files: list[str] | list[dict] | None = None) -> None:
        """Move a pull request's head (a new commit pushed to its branch)."""
        with self.lock:
            pull = self.repos[repo].pulls[number]
            pull.head_sha = head_sha
            pull.updated_at = _now()
            if files is not None:
                pull.files = [_file_entry(f) for f in files]

    def post_comment(self, repo: str, number: int, login: str, body: str) -> int:
        """A comment written by someone on the web (not through the API under test)."""
        with self.lock:
            return self._new_comment(self.repos[repo], number, self.user(login)["login"], body)["id"]

    def retarget(self, repo: str, number: int, base_ref: str, at: datetime | None = None) -> None:
        """Change a pull request's base branch (recorded as a base_ref_changed issue event at `at`, default now)."""
        with self.lock:
            pull = self.repos[repo].pulls[number]
            stamp = (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
            pull.events.append({"id": next(self.ids), "event": "base_ref_changed", "created_at": stamp,
                                "actor": self.j_user(pull.author), "commit_id": None})
            pull.base_ref = base_ref

    def add_run(self, repo: str, run_id: int, head_sha: str, created_at: str | None = None) -> dict:
        """A completed workflow run that can be re-run; created_at defaults to now."""
        run = {"id": run_id, "head_sha": head_sha, "status": "completed", "run_attempt": 1,
               "created_at": created_at or _now()}
        self.repos[repo].runs[run_id] = run
        return run

    def inject(self, pattern: str, status: int = 502, times: int = 1, method: str | None = None,
               kind: str = "server", after: bool = False, retry_after: int = 1) -> None:
        """Fail the next `times` requests whose path matches `pattern` (re.search). kind: server (plain `status`),
        drop (close the connection without an answer), rate_limit (403, Retry-After, X-RateLimit-Remaining: 0),
        secondary (429, Retry-After). after=True performs the request first: GitHub did it, the client hears a
        failure."""
        headers: dict[str, str] = {}
        message = "Server Error"
        if kind == "drop":
            status = DROP
        elif kind == "rate_limit":
            status, message = 403, "API rate limit exceeded for installation."
            headers = {"Retry-After": str(retry_after), "X-RateLimit-Remaining": "0",
                       "X-RateLimit-Reset": str(int(time.time()) + retry_after)}
        elif kind == "secondary":
            status, message = 429, "You have exceeded a secondary rate limit. Please wait a few minutes."
            headers = {"Retry-After": str(retry_after)}
        self.faults.append(Fault(re.compile(pattern), method, times, status, headers, message, after=after))

    def delay(self, pattern: str, seconds: float, method: str | None = None, times: int = 1) -> None:
        """Hold the next `times` matching requests for `seconds` before serving them."""
        self.faults.append(Fault(re.compile(pattern), method, times, delay=seconds))

    def between(self, pattern: str, hook: Callable[[], None], method: str | None = None, times: int = 1) -> None:
        """Run hook() right after the next matching request was performed, before it is answered (the world
        changes between two of the client's writes)."""
        self.faults.append(Fault(re.compile(pattern), method, times, hook=hook))

    def rendezvous(self, pattern: str, parties: int = 2, method: str | None = None, timeout: float = 20) -> None:
        """Hold each of the next `parties` matching requests until all of them have arrived, then serve them at
        once: two bot processes that both decided to write, writing together."""
        gate = threading.Barrier(parties, timeout=timeout)
        self.faults.append(Fault(re.compile(pattern), method, parties, gate=gate))

    # ----- inspecting the world --------------------------------------------------------------------------------
    def comments(self, repo: str, number: int) -> list[dict]:
        return [c for c in self.repos[repo].comments.values() if c["issue"] == number]

    def labels(self, repo: str, number: int) -> list[str]:
        return list(self.repos[repo].pulls[number].labels)

    def statuses(self, repo: str, sha: str) -> list[dict]:
        return list(self.repos[repo].statuses.get(sha, []))

    def reactions(self, repo: str, comment_id: int) -> list[str]:
        return [r["content"] for r in self.repos[repo].reactions.get(comment_id, [])]

    def calls(self, method: str | None = None, pattern: str = "") -> int:
        """How many logged requests match a method and a path pattern."""
        return sum(1 for e in self.log if (method is None or e.method == method) and re.search(pattern, e.path))

    # ----- serving ---------------------------------------------------------------------------------------------
    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[int, Any, dict[str, str]]:
        """Route one request; returns status, JSON payload (None for no body) and extra headers."""
        split = urllib.parse.urlsplit(raw_path)
        path, query = split.path, urllib.parse.parse_qs(split.query, keep_blank_values=True)
        try:
            fault = self._fault(method, path) or Fault(re.compile(""), None, 0)
            if fault.gate is not None:
                fault.gate.wait()
            if fault.delay:
                time.sleep(fault.delay)
            if fault.status is not None and not fault.after:
                raise HttpError(fault.status, fault.message, fault.headers)
            login, can_write = self._authenticate(path, headers.get("Authorization", ""))
            if method != "GET" and not can_write and not path.startswith("/app/"):
                raise HttpError(403, "Resource not accessible by integration")
            payload = json.loads(body) if body else None
            for verb, pattern, handler in ROUTES:
                match = pattern.fullmatch(path)
                if verb == method and match:
                    with self.lock:
                        status, out = handler(self, login, query, payload,
                                              *[urllib.parse.unquote(g) for g in match.groups()])
                        if fault.hook is not None:
                            fault.hook()
                    if fault.status is not None:  # performed, and now the client hears a failure
                        raise HttpError(fault.status, fault.message, fault.headers)
                    extra = self._paginate_headers(out, path, query) if isinstance(out, Page) else {}
                    self._log(method, path, query, status)
                    return status, out.items if isinstance(out, Page) else out, extra
            raise HttpError(404, "Not Found")
        except HttpError as exc:
            self._log(method, path, query, exc.status)
            return exc.status, {"message": exc.message, "documentation_url": DOCS}, exc.headers
        except (ValueError, KeyError, TypeError) as exc:
            self._log(method, path, query, 400)
            return 400, {"message": f"Problems parsing JSON: {exc}", "documentation_url": DOCS}, {}

    def rate_headers(self, login: str | None) -> dict[str, str]:
        left = self.remaining.get(login or "", RATE_LIMIT)
        return {"X-RateLimit-Limit": str(RATE_LIMIT), "X-RateLimit-Remaining": str(left),
                "X-RateLimit-Used": str(RATE_LIMIT - left), "X-RateLimit-Resource": "core",
                "X-RateLimit-Reset": str(int(time.time()) + 3600)}

    def _log(self, method: str, path: str, query: dict, status: int) -> None:
        with self.lock:
            self.log.append(Logged(method, path, query, status))

    def _fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and (fault.method in (None, method)) and fault.pattern.search(path):
                    fault.times -= 1
                    return fault
        return None

    def _authenticate(self, path: str, header: str) -> tuple[str, bool]:
        scheme, _, credential = header.partition(" ")
        if not credential:
            raise HttpError(401, "Requires authentication")
        if path.startswith("/app/"):
            if scheme.lower() != "bearer":
                raise HttpError(401, "A JSON web token could not be decoded")
            return credential, False
        if scheme.lower() not in ("token", "bearer") or credential not in self.tokens:
            raise HttpError(401, "Bad credentials")
        login, can_write = self.tokens[credential]
        with self.lock:
            self.remaining[login] = self.remaining.get(login, RATE_LIMIT) - 1
        return login, can_write

    def _paginate_headers(self, page: Page, path: str, query: dict) -> dict[str, str]:
        if page.last <= 1:
            return {}
        def link(n: int) -> str:
            params = {k: v[-1] for k, v in query.items()} | {"page": str(n)}
            return f"<{self.base_url}{path}?{urllib.parse.urlencode(params)}>"
        rels = []
        if page.page < page.last:
            rels += [f'{link(page.page + 1)}; rel="next"', f'{link(page.last)}; rel="last"']
        if page.page > 1:
            rels += [f'{link(page.page - 1)}; rel="prev"', f'{link(1)}; rel="first"']
        return {"Link": ", ".join(rels)}

    # ----- JSON shapes -----------------------------------------------------------------------------------------
    def j_user(self, login: str) -> dict:
        u = self.user(login)
        api = f"{self.base_url}/users/{urllib.parse.quote(login)}"
        return {"login": login, "id": u["id"], "node_id": f"U_{u['id']}", "avatar_url": "", "gravatar_id": "",
                "url": api, "html_url": f"{HTML}/{login}", "followers_url": f"{api}/followers",
                "repos_url": f"{api}/repos", "type": u["type"], "site_admin": False}

    def j_repo(self, full_name: str) -> dict:
        r = self.repos.get(full_name)
        owner, name = full_name.split("/")
        api = f"{self.base_url}/repos/{full_name}"
        return {"id": r.id if r else 0, "node_id": f"R_{r.id if r else 0}", "name": name, "full_name": full_name,
                "private": bool(r and r.private), "owner": self.j_user(owner), "html_url": f"{HTML}/{full_name}",
                "description": None, "fork": r is None, "url": api,
                "pulls_url": f"{api}/pulls{{/number}}", "issues_url": f"{api}/issues{{/number}}",
                "statuses_url": f"{api}/statuses/{{sha}}", "default_branch": r.default_branch if r else "main",
                "visibility": "private" if r and r.private else "public"}

    def j_pull(self, repo: Repo, p: Pull) -> dict:
        api = f"{self.base_url}/repos/{repo.full_name}"
        head_owner = (p.head_repo or repo.full_name).split("/")[0]
        return {"url": f"{api}/pulls/{p.number}", "id": p.id, "node_id": f"PR_{p.id}",
                "html_url": f"{HTML}/{repo.full_name}/pull/{p.number}", "number": p.number, "state": p.state,
                "locked": False, "title": p.title, "user": self.j_user(p.author), "body": p.body,
                "labels": [self.j_label(repo, n) for n in p.labels], "created_at": p.created_at,
                "updated_at": p.updated_at, "closed_at": None, "merged_at": None, "draft": False,
                "issue_url": f"{api}/issues/{p.number}", "comments_url": f"{api}/issues/{p.number}/comments",
                "statuses_url": f"{api}/statuses/{p.head_sha}", "author_association": "CONTRIBUTOR",
                "head": {"label": f"{head_owner}:{p.head_ref}", "ref": p.head_ref, "sha": p.head_sha,
                         "user": self.j_user(head_owner), "repo": self.j_repo(p.head_repo) if p.head_repo else None},
                "base": {"label": f"{repo.owner}:{p.base_ref}", "ref": p.base_ref, "sha": p.base_sha,
                         "user": self.j_user(repo.owner), "repo": self.j_repo(repo.full_name)}}

    def j_issue(self, repo: Repo, p: Pull) -> dict:
        api = f"{self.base_url}/repos/{repo.full_name}"
        pull = self.j_pull(repo, p)
        return {**{k: pull[k] for k in ("id", "node_id", "number", "state", "title", "user", "body", "labels",
                                        "locked", "created_at", "updated_at", "closed_at", "author_association")},
                "url": f"{api}/issues/{p.number}", "html_url": pull["html_url"],
                "comments_url": f"{api}/issues/{p.number}/comments", "repository_url": api,
                "comments": len([c for c in repo.comments.values() if c["issue"] == p.number]),
                "pull_request": {"url": pull["url"], "html_url": pull["html_url"]}}

    def j_comment(self, repo: Repo, c: dict) -> dict:
        api = f"{self.base_url}/repos/{repo.full_name}"
        return {"id": c["id"], "node_id": f"IC_{c['id']}", "url": f"{api}/issues/comments/{c['id']}",
                "html_url": f"{HTML}/{repo.full_name}/pull/{c['issue']}#issuecomment-{c['id']}",
                "issue_url": f"{api}/issues/{c['issue']}", "body": c["body"], "user": self.j_user(c["user"]),
                "created_at": c["created_at"], "updated_at": c["updated_at"], "author_association": "NONE",
                "performed_via_github_app": None,
                "reactions": {"url": f"{api}/issues/comments/{c['id']}/reactions",
                              "total_count": len(repo.reactions.get(c["id"], []))}}

    def j_label(self, repo: Repo, name: str) -> dict:
        label_id = repo.label_defs.setdefault(name, next(self.ids))
        return {"id": label_id, "node_id": f"LA_{label_id}", "name": name, "color": "ededed", "default": False,
                "description": None,
                "url": f"{self.base_url}/repos/{repo.full_name}/labels/{urllib.parse.quote(name, safe='')}"}

    def _new_comment(self, repo: Repo, number: int, login: str, body: str) -> dict:
        if number not in repo.pulls:
            raise HttpError(404, "Not Found")
        stamp = _now()
        comment = {"id": next(self.ids), "issue": number, "user": login, "body": body, "created_at": stamp,
                   "updated_at": stamp}
        repo.comments[comment["id"]] = comment
        return comment


@dataclass
class Page:
    """One page of a list response, for the Link header."""

    items: list
    page: int
    last: int


def paginate(items: list, query: dict[str, list[str]]) -> Page:
    """Slice like GitHub: per_page (default 30, at most 100) and page (from 1)."""
    per_page = max(1, min(100, int(query.get("per_page", ["30"])[-1])))
    page = max(1, int(query.get("page", ["1"])[-1]))
    last = max(1, -(-len(items) // per_page))
    return Page(items[(page - 1) * per_page: page * per_page], page, last)


def _file_entry(spec: str | dict) -> dict:
    entry = {"filename": spec, "status": "added"} if isinstance(spec, str) else dict(spec)
    entry.setdefault("status", "added")
    entry.setdefault("additions", 1)
    entry.setdefault("deletions", 0)
    return entry


# ----- route handlers: (hub, login, query, body, *path parameters) -> (status, payload) -------------------------
def _repo(hub: GitHubStandIn, owner: str, name: str) -> Repo:
    repo = hub.repos.get(f"{owner}/{name}")
    if repo is None:
        raise HttpError(404, "Not Found")
    return repo


def _pull(hub: GitHubStandIn, owner: str, name: str, number: str) -> tuple[Repo, Pull]:
    repo = _repo(hub, owner, name)
    pull = repo.pulls.get(int(number))
    if pull is None:
        raise HttpError(404, "Not Found")
    return repo, pull


def _comment(hub: GitHubStandIn, owner: str, name: str, comment_id: str) -> tuple[Repo, dict]:
    repo = _repo(hub, owner, name)
    comment = repo.comments.get(int(comment_id))
    if comment is None:
        raise HttpError(404, "Not Found")
    return repo, comment


def get_rate_limit(hub: GitHubStandIn, login: str, query: dict, body: Any) -> tuple[int, Any]:
    h = hub.rate_headers(login)
    core = {"limit": RATE_LIMIT, "remaining": int(h["X-RateLimit-Remaining"]), "reset": int(h["X-RateLimit-Reset"]),
            "used": int(h["X-RateLimit-Used"]), "resource": "core"}
    return 200, {"resources": {"core": core, "search": {**core, "limit": 30, "remaining": 30, "used": 0}},
                 "rate": core}


def get_repo(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str) -> tuple[int, Any]:
    return 200, hub.j_repo(_repo(hub, o, r).full_name)


def list_pulls(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    state = query.get("state", ["open"])[-1]
    if state not in ("open", "closed", "all"):
        raise HttpError(422, "Validation Failed")
    pulls = [p for p in repo.pulls.values() if state == "all" or p.state == state]
    if "head" in query:
        owner, _, ref = query["head"][-1].rpartition(":")
        pulls = [p for p in pulls if p.head_ref == ref and (p.head_repo or "").split("/")[0] == (owner or o)]
    if "base" in query:
        pulls = [p for p in pulls if p.base_ref == query["base"][-1]]
    pulls.sort(key=lambda p: p.number, reverse=query.get("direction", ["desc"])[-1] != "asc")
    page = paginate(pulls, query)
    page.items = [hub.j_pull(repo, p) for p in page.items]
    return 200, page


def get_pull(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    return 200, hub.j_pull(repo, pull)


def list_files(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    page = paginate(pull.files[:3000], query)  # GitHub lists at most 3000 files
    api = f"{HTML}/{repo.full_name}"
    page.items = [{"sha": "0" * 40, "changes": f["additions"] + f["deletions"], "patch": "",
                   "blob_url": f"{api}/blob/{pull.head_sha}/{f['filename']}",
                   "raw_url": f"{api}/raw/{pull.head_sha}/{f['filename']}",
                   "contents_url": f"{hub.base_url}/repos/{repo.full_name}/contents/{f['filename']}", **f}
                  for f in page.items]
    return 200, page


def get_issue(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    return 200, hub.j_issue(repo, pull)


def list_comments(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, _ = _pull(hub, o, r, n)
    mine = sorted((c for c in repo.comments.values() if c["issue"] == int(n)), key=lambda c: c["id"])
    page = paginate(mine, query)
    page.items = [hub.j_comment(repo, c) for c in page.items]
    return 200, page


def create_comment(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
        raise HttpError(422, "Validation Failed")
    if len(body["body"]) > 65536:
        raise HttpError(422, "Body is too long (maximum is 65536 characters)")
    repo = _repo(hub, o, r)
    return 201, hub.j_comment(repo, hub._new_comment(repo, int(n), login, body["body"]))


def get_comment(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, c: str) -> tuple[int, Any]:
    repo, comment = _comment(hub, o, r, c)
    return 200, hub.j_comment(repo, comment)


def edit_comment(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, c: str) -> tuple[int, Any]:
    repo, comment = _comment(hub, o, r, c)
    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
        raise HttpError(422, "Validation Failed")
    if len(body["body"]) > 65536:
        raise HttpError(422, "Body is too long (maximum is 65536 characters)")
    comment["body"], comment["updated_at"] = body["body"], _now()
    return 200, hub.j_comment(repo, comment)


def delete_comment(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, c: str) -> tuple[int, Any]:
    repo, comment = _comment(hub, o, r, c)
    del repo.comments[comment["id"]]
    return 204, None


def add_reaction(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, c: str) -> tuple[int, Any]:
    repo, comment = _comment(hub, o, r, c)
    content = body.get("content") if isinstance(body, dict) else None
    if content not in REACTIONS:
        raise HttpError(422, "Validation Failed")
    existing = repo.reactions.setdefault(comment["id"], [])
    for reaction in existing:
        if reaction["content"] == content and reaction["user"]["login"] == login:
            return 200, reaction
    reaction = {"id": next(hub.ids), "node_id": "REA_x", "user": hub.j_user(login), "content": content,
                "created_at": _now()}
    existing.append(reaction)
    return 201, reaction


def list_labels(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    page = paginate(pull.labels, query)
    page.items = [hub.j_label(repo, name) for name in page.items]
    return 200, page


def add_labels(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    names = body.get("labels") if isinstance(body, dict) else body
    if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
        raise HttpError(422, "Validation Failed")
    for name in names:
        if name not in pull.labels:
            pull.labels.append(name)
    return 200, [hub.j_label(repo, name) for name in pull.labels]


def set_labels(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str) -> tuple[int, Any]:
    _, pull = _pull(hub, o, r, n)
    pull.labels = []
    return add_labels(hub, login, query, body, o, r, n)


def remove_label(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, n: str,
                 name: str) -> tuple[int, Any]:
    repo, pull = _pull(hub, o, r, n)
    if name not in pull.labels:
        raise HttpError(404, "Label does not exist")
    pull.labels.remove(name)
    return 200, [hub.j_label(repo, label) for label in pull.labels]


def create_status(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, sha: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    if not isinstance(body, dict) or body.get("state") not in STATUS_STATES:
        raise HttpError(422, "Validation Failed")
    stamp = _now()
    status = {"url": f"{hub.base_url}/repos/{repo.full_name}/statuses/{sha}", "avatar_url": "",
              "id": next(hub.ids), "node_id": "SC_x", "state": body["state"],
              "description": body.get("description"), "target_url": body.get("target_url"),
              "context": body.get("context") or "default", "created_at": stamp, "updated_at": stamp,
              "creator": hub.j_user(login)}
    repo.statuses.setdefault(sha, []).append(status)
    return 201, status


def combined_status(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str,
                    ref: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    latest: dict[str, dict] = {}
    for status in repo.statuses.get(ref, []):
        latest[status["context"]] = status
    states = {s["state"] for s in latest.values()}
    state = ("failure" if states & {"failure", "error"} else "pending" if "pending" in states or not states
             else "success")
    return 200, {"state": state, "statuses": list(latest.values()), "sha": ref, "total_count": len(latest),
                 "repository": hub.j_repo(repo.full_name),
                 "commit_url": f"{hub.base_url}/repos/{repo.full_name}/commits/{ref}",
                 "url": f"{hub.base_url}/repos/{repo.full_name}/commits/{ref}/status"}


def permission(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, user: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    if user not in hub.users:
        raise HttpError(404, "Not Found")
    role = repo.roles.get(user) or ("admin" if user == repo.owner else None)
    if role is None:  # not a collaborator: public repositories are readable by everyone
        legacy = role_name = "none" if repo.private else "read"
    else:
        legacy, role_name = LEGACY_PERMISSION[role], role
    return 200, {"permission": legacy, "role_name": role_name, "user": hub.j_user(user)}


def list_issue_events(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str,
                      n: str) -> tuple[int, Any]:
    _, pull = _pull(hub, o, r, n)
    return 200, paginate(pull.events, query)


def _run(hub: GitHubStandIn, o: str, r: str, run_id: str) -> dict:
    run = _repo(hub, o, r).runs.get(int(run_id))
    if run is None:
        raise HttpError(404, "Not Found")
    return run


def get_run(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, run_id: str) -> tuple[int, Any]:
    run = _run(hub, o, r, run_id)
    return 200, {**run, "url": f"{hub.base_url}/repos/{o}/{r}/actions/runs/{run_id}",
                 "html_url": f"{HTML}/{o}/{r}/actions/runs/{run_id}"}


def rerun(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, run_id: str) -> tuple[int, Any]:
    run = _run(hub, o, r, run_id)
    if run["status"] != "completed":
        raise HttpError(403, "This workflow is already running")
    run["status"], run["run_attempt"] = "queued", run["run_attempt"] + 1
    _repo(hub, o, r).reruns.append(int(run_id))
    return 201, {}


def access_token(hub: GitHubStandIn, jwt_token: str, query: dict, body: Any, installation: str) -> tuple[int, Any]:
    app = hub.apps.get(int(installation))
    if app is None:
        raise HttpError(404, "Not Found")
    try:
        claims = jwt.decode(jwt_token, app["public_key"], algorithms=["RS256"], options={"verify_iss": False})
    except jwt.PyJWTError as exc:
        raise HttpError(401, f"A JSON web token could not be decoded: {exc}") from None
    if str(claims.get("iss")) != app["app_id"]:
        raise HttpError(401, "'Issuer' claim ('iss') must be the app id")
    token = f"ghs_installation_{next(hub.ids)}"
    hub.add_token(token, app["login"])
    expires = datetime.fromtimestamp(time.time() + 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return 201, {"token": token, "expires_at": expires, "permissions": {"issues": "write", "statuses": "write"},
                 "repository_selection": "all"}


def _branch(repo: Repo, name: str) -> Branch:
    branch = repo.branches.get(name)
    if branch is None:
        raise HttpError(404, "Branch not found")
    return branch


def _j_content(hub: GitHubStandIn, repo: Repo, path: str, data: bytes | None, ref: str) -> dict:
    api = f"{hub.base_url}/repos/{repo.full_name}/contents/{urllib.parse.quote(path)}?ref={ref}"
    entry = {"name": path.rsplit("/", 1)[-1], "path": path, "url": api, "html_url": f"{HTML}/{repo.full_name}",
             "git_url": api, "download_url": None, "_links": {"self": api}}
    if data is None:
        return {**entry, "type": "dir", "size": 0, "sha": hashlib.sha1(path.encode()).hexdigest()}
    return {**entry, "type": "file", "size": len(data), "sha": blob_sha(data), "encoding": "base64",
            "content": base64.b64encode(data).decode()}


def get_branch(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, name: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    branch = _branch(repo, name)
    return 200, {"name": name, "protected": False,
                 "commit": {"sha": branch.head, "url": f"{hub.base_url}/repos/{repo.full_name}/commits/{branch.head}"}}


def create_ref(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    ref, sha = str(body["ref"]), str(body["sha"])
    if not ref.startswith("refs/heads/"):
        raise HttpError(422, "Reference name must start with refs/heads/ here")
    name = ref.removeprefix("refs/heads/")
    if name in repo.branches:
        raise HttpError(422, "Reference already exists")
    source = next((b for b in repo.branches.values() if b.head == sha), None)
    if source is None:
        raise HttpError(422, "Object does not exist")
    repo.branches[name] = Branch(sha, dict(source.files))
    return 201, {"ref": ref, "node_id": f"REF_{name}", "url": f"{hub.base_url}/repos/{repo.full_name}/git/{ref}",
                 "object": {"type": "commit", "sha": sha, "url": ""}}


def get_contents(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str,
                 path: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    ref = query.get("ref", [repo.default_branch])[-1]
    files = _branch(repo, ref).files
    path = path.strip("/")
    if path in files:
        return 200, _j_content(hub, repo, path, files[path], ref)
    children = sorted({p[len(path) + 1:].split("/", 1)[0] for p in files if p.startswith(path + "/")})
    if not children:
        raise HttpError(404, "Not Found")
    return 200, [_j_content(hub, repo, f"{path}/{c}", files.get(f"{path}/{c}"), ref) for c in children]


def put_contents(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str,
                 path: str) -> tuple[int, Any]:
    """Create or update one file with a commit; the sha of the file being replaced must be given and current."""
    repo = _repo(hub, o, r)
    name = body.get("branch") or repo.default_branch
    if name not in repo.branches:
        raise HttpError(404, f"Branch {name} not found")
    branch, path = repo.branches[name], path.strip("/")
    if not body.get("message"):
        raise HttpError(422, "Invalid request.\n\n\"message\" wasn't supplied.")
    data = base64.b64decode(body["content"], validate=True)
    existing = branch.files.get(path)
    if existing is not None and "sha" not in body:
        raise HttpError(422, "Invalid request.\n\n\"sha\" wasn't supplied.")
    if existing is not None and body["sha"] != blob_sha(existing):
        raise HttpError(409, f"{path} does not match {body['sha']}")
    if existing is None and body.get("sha"):
        raise HttpError(422, f"{path} does not exist, so no sha may be given")
    branch.files[path] = data
    branch.head = fake_sha(next(hub.ids))
    return (200 if existing is not None else 201), {
        "content": _j_content(hub, repo, path, data, name),
        "commit": {"sha": branch.head, "message": body["message"], "url": "", "html_url": ""}}


def get_tree(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, ref: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    branch = repo.branches.get(ref) or next((b for b in repo.branches.values() if b.head == ref), None)
    if branch is None:
        raise HttpError(404, "Not Found")
    if query.get("recursive", ["0"])[-1] in ("0", "false", ""):
        raise HttpError(422, "the stand-in serves recursive trees only")
    folders = sorted({"/".join(p.split("/")[:i]) for p in branch.files for i in range(1, p.count("/") + 1)})
    tree = [{"path": f, "mode": "040000", "type": "tree", "sha": hashlib.sha1(f.encode()).hexdigest()}
            for f in folders]
    tree += [{"path": p, "mode": "100644", "type": "blob", "sha": blob_sha(d), "size": len(d)}
             for p, d in sorted(branch.files.items())]
    return 200, {"sha": branch.head, "url": "", "tree": tree, "truncated": False}


def get_workflow(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str,
                 workflow: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    api = f"{hub.base_url}/repos/{repo.full_name}/actions/workflows/{workflow}"
    return 200, {"id": abs(hash(workflow)) % 10**6, "name": workflow.rsplit(".", 1)[0], "path":
                 f".github/workflows/{workflow}", "state": "active", "url": api, "html_url": api, "badge_url": api}


def dispatch(hub: GitHubStandIn, login: str, query: dict, body: Any, o: str, r: str, workflow: str) -> tuple[int, Any]:
    repo = _repo(hub, o, r)
    if not body or "ref" not in body:
        raise HttpError(422, "Invalid request.\n\n\"ref\" wasn't supplied.")
    repo.dispatches.append((workflow, str(body["ref"])))
    return 204, None


_R = r"/repos/([^/]+)/([^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], Any]] = [(m, re.compile(p), h) for m, p, h in [
    ("GET", r"/rate_limit", get_rate_limit),
    ("GET", _R, get_repo),
    ("GET", _R + r"/pulls", list_pulls),
    ("GET", _R + r"/pulls/(\d+)", get_pull),
    ("GET", _R + r"/pulls/(\d+)/files", list_files),
    ("GET", _R + r"/issues/(\d+)", get_issue),
    ("GET", _R + r"/issues/(\d+)/comments", list_comments),
    ("GET", _R + r"/issues/(\d+)/events", list_issue_events),
    ("POST", _R + r"/issues/(\d+)/comments", create_comment),
    ("GET", _R + r"/issues/comments/(\d+)", get_comment),
    ("PATCH", _R + r"/issues/comments/(\d+)", edit_comment),
    ("DELETE", _R + r"/issues/comments/(\d+)", delete_comment),
    ("POST", _R + r"/issues/comments/(\d+)/reactions", add_reaction),
    ("GET", _R + r"/issues/(\d+)/labels", list_labels),
    ("POST", _R + r"/issues/(\d+)/labels", add_labels),
    ("PUT", _R + r"/issues/(\d+)/labels", set_labels),
    ("DELETE", _R + r"/issues/(\d+)/labels/([^/]+)", remove_label),
    ("POST", _R + r"/statuses/([0-9a-fA-F]{4,40})", create_status),
    ("GET", _R + r"/commits/([^/]+)/status", combined_status),
    ("GET", _R + r"/collaborators/([^/]+)/permission", permission),
    ("GET", _R + r"/actions/runs/(\d+)", get_run),
    ("POST", _R + r"/actions/runs/(\d+)/rerun", rerun),
    ("POST", r"/app/installations/(\d+)/access_tokens", access_token),
    ("GET", _R + r"/branches/([^/]+)", get_branch),
    ("POST", _R + r"/git/refs", create_ref),
    ("GET", _R + r"/contents/(.+)", get_contents),
    ("PUT", _R + r"/contents/(.+)", put_contents),
    ("GET", _R + r"/git/trees/([^/]+)", get_tree),
    ("GET", _R + r"/actions/workflows/([^/]+)", get_workflow),
    ("POST", _R + r"/actions/workflows/([^/]+)/dispatches", dispatch),
]]


def _handler_for(hub: GitHubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes; no 40 ms delayed-ACK stalls

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, payload, extra = hub.handle(self.command, self.path, self.headers, body)
            if status == DROP:  # no answer: the client sees the connection close
                self.close_connection = True
                return
            data = b"" if payload is None else json.dumps(payload).encode()
            login = hub.tokens.get(self.headers.get("Authorization", " ").partition(" ")[2], ("", False))[0]
            self.send_response(status)
            for key, value in {**hub.rate_headers(login), "X-GitHub-Api-Version-Selected": "2022-11-28",
                               "X-GitHub-Request-Id": f"STANDIN:{len(hub.log)}", **extra}.items():
                self.send_header(key, value)
            if data:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
