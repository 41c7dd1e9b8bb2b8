"""Fixtures for the bot's tests (load with `pytest_plugins = ("tests.conftest_github",)`).

`world` is a GitHub stand-in with one repository plus helpers that turn the real webhook payloads vendored in
tests/fixtures/github/payloads into events about the stand-in's pull requests (repository, numbers, SHAs, branches
adapted; nothing copied), run the bot exactly as Actions would (`bot.main.run(env)` in this process, or
`python -m bot.main` as a separate process for races), and make real reports with `arena check --format json` on
packages built by tests/support/packages.py.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.main import run
from bot.markers import MARKER
from tests.support.github_standin import GitHubStandIn, fake_sha
from tests.support.packages import edit, make_valid_package

ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = ROOT / "tests" / "fixtures" / "github" / "payloads"
REPO = "arena-org/arena"
ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"


def payload(name: str) -> dict:
    """A real webhook payload from tests/fixtures/github/payloads."""
    return json.loads((PAYLOADS / name).read_text())


def arena_report(root: Path, name: str = "sample-task", mutate: Callable[[Path], None] | None = None) -> Path:
    """A folder holding report.json, made by running `arena check --static --format json` on a real package."""
    workdir = root / f"work-{name}-{len(list(root.glob('work-*')))}"
    package = make_valid_package(workdir / "environments", name)
    if mutate is not None:
        mutate(package)
    done = subprocess.run([ARENA, "check", "--static", "--format", "json", f"environments/{name}"], cwd=workdir,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    artifact = workdir / "artifact"
    artifact.mkdir()
    (artifact / "report.json").write_text(done.stdout)
    return artifact


class World:
    """The stand-in, its repository, and the bot run against it."""

    sha = staticmethod(fake_sha)
    payload = staticmethod(payload)

    def __init__(self, hub: GitHubStandIn, tmp: Path) -> None:
        self.hub, self.tmp, self.repo = hub, tmp, REPO
        self.events = 0
        self.output: list[str] = []

    def env(self, event: str, data: dict, report: Path | None = None, **extra: str) -> dict[str, str]:
        self.events += 1
        path = self.tmp / f"event-{self.events}.json"
        path.write_text(json.dumps(data))
        env = {"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(path), "GITHUB_REPOSITORY": self.repo,
               "GITHUB_API_URL": self.hub.base_url, "GITHUB_TOKEN": self.hub.token,
               "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "777",
               "ARENA_GITHUB_THROTTLE": "off", "ARENA_GITHUB_BACKOFF": "0.01", "ARENA_BOT_LOGIN": self.hub.bot_login}
        if report is not None:
            env["ARENA_REPORT_DIR"] = str(report)
        return env | extra

    def run(self, event: str, data: dict, report: Path | None = None, launcher: Callable | None = None,
            **extra: str) -> int:
        return run(self.env(event, data, report, **extra), launcher)

    def spawn(self, event: str, data: dict, report: Path | None = None,
              **extra: str) -> tuple[subprocess.Popen, Path]:
        """The bot as a separate process (`python -m bot.main`, as `arena bot` runs it) with the launch handoff on;
        returns the process and the file its GITHUB_OUTPUT names (what it hands the launch job)."""
        output = self.tmp / f"output-{self.events + 1}"
        output.touch()
        env = os.environ | self.env(event, data, report, **({"ARENA_LAUNCH_HANDOFF": "1", "GITHUB_OUTPUT": str(output)}
                                                             | extra))
        return subprocess.Popen([sys.executable, "-m", "bot.main"], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True), output

    def together(self, *events: tuple[str, dict, Path | None]) -> list[tuple[int, str, str]]:
        """The bot on several events at once, one process each: (exit code, log, launch outputs) per process."""
        spawned = [self.spawn(event, data, report) for event, data, report in events]
        results = []
        for proc, output in spawned:
            log, _ = proc.communicate(timeout=120)
            results.append((proc.returncode, log, output.read_text()))
        return results

    # ----- the stand-in's pull requests, made from the payloads' own values ------------------------------------
    def open_fork_pr(self, files: list[str], head: str, author: str | None = None,
                     base: str = "main") -> tuple[int, dict]:
        """The hostile fork PR of pull_request.opened.fork.DERIVED.json, opened in the stand-in."""
        data = payload("pull_request.opened.fork.DERIVED.json")
        pr = data["pull_request"]
        author = author or pr["user"]["login"]
        number = self.hub.add_pull(self.repo, author=author, head_sha=head, files=files, title=pr["title"],
                                   head_ref=pr["head"]["ref"], head_repo=f"{author}/{pr['head']['repo']['name']}",
                                   base_ref=base)
        return number, self.pr_event("opened", number, data)

    def open_pr(self, files: list[str], head: str, author: str = "Codertocat") -> tuple[int, dict]:
        """A same-repository PR, from pull_request.opened.json."""
        data = payload("pull_request.opened.json")
        pr = data["pull_request"]
        number = self.hub.add_pull(self.repo, author=author, head_sha=head, files=files, title=pr["title"],
                                   head_ref=f"{pr['head']['ref']}-{head[-6:]}")
        return number, self.pr_event("opened", number, data)

    def pr_event(self, action: str, number: int, template: dict | None = None) -> dict:
        """A pull_request event about the stand-in's PR as it is now."""
        data = copy.deepcopy(template or payload("pull_request.synchronize.json"))
        pull = self.hub.repos[self.repo].pulls[number]
        data["action"], data["number"] = action, number
        data["repository"]["full_name"] = self.repo
        pr = data["pull_request"]
        pr["number"], pr["title"], pr["user"]["login"] = number, pull.title, pull.author
        pr["head"].update({"sha": pull.head_sha, "ref": pull.head_ref})
        pr["head"]["repo"]["full_name"] = pull.head_repo
        pr["base"]["repo"]["full_name"] = self.repo
        pr["base"]["ref"] = pull.base_ref
        data["repository"]["default_branch"] = self.hub.repos[self.repo].default_branch
        return data

    def run_event(self, number: int, run_id: int, attempt: int = 1, head: str | None = None,
                  conclusion: str = "failure", created_at: str | None = None) -> dict:
        """workflow_run.completed for the validation of the PR's head (or of an older head), created now."""
        data = payload("workflow_run.completed.json")
        pull = self.hub.repos[self.repo].pulls[number]
        record = self.hub.add_run(self.repo, run_id, head or pull.head_sha, created_at)
        run = data["workflow_run"]
        run.update({"id": run_id, "run_attempt": attempt, "event": "pull_request", "head_sha": head or pull.head_sha,
                    "head_branch": pull.head_ref, "conclusion": conclusion, "pull_requests": [],
                    "created_at": record["created_at"]})
        run["head_repository"]["full_name"] = pull.head_repo
        run["head_repository"]["owner"]["login"] = pull.head_repo.split("/")[0]
        run["repository"]["full_name"] = data["repository"]["full_name"] = self.repo
        return data

    def comment_event(self, number: int, login: str, body: str, action: str = "created",
                      user_type: str = "User") -> dict:
        """issue_comment on the PR by login, from issue_comment.created.on_pr.DERIVED.json (comment stored too)."""
        data = payload("issue_comment.created.on_pr.DERIVED.json")
        self.hub.user(login, kind=user_type)
        comment_id = self.hub.post_comment(self.repo, number, login, body)
        data["action"] = action
        data["issue"]["number"] = number
        data["comment"].update({"id": comment_id, "body": body})
        data["comment"]["user"].update({"login": login, "type": user_type})
        data["repository"]["full_name"] = self.repo
        return data

    # ----- what the bot left --------------------------------------------------------------------------------------
    def stickies(self, number: int) -> list[dict]:
        """The bot's sticky comments (anyone else's copies of the marker are not)."""
        return [c for c in self.hub.comments(self.repo, number)
                if c["body"].startswith(MARKER) and c["user"] == self.hub.bot_login]

    def sticky(self, number: int) -> dict:
        (only,) = self.stickies(number)
        return only

    def replies(self, number: int) -> list[str]:
        """The bot's replies (not the sticky), as people read them: without their hidden marker lines."""
        return ["\n".join(line for line in c["body"].split("\n") if not line.startswith("<!-- posttrain-arena:"))
                for c in self.hub.comments(self.repo, number)
                if c["user"] == self.hub.bot_login and not c["body"].startswith(MARKER)]

    def status(self, head: str) -> dict | None:
        found = [s for s in self.hub.statuses(self.repo, head) if s["context"] == "arena/check"]
        return found[-1] if found else None


@pytest.fixture
def hub() -> Iterator[GitHubStandIn]:
    with GitHubStandIn() as standin:
        standin.add_repo(REPO)
        standin.set_role(REPO, "maintainer", "maintain")
        yield standin


@pytest.fixture
def world(hub: GitHubStandIn, tmp_path: Path) -> World:
    return World(hub, tmp_path)


@pytest.fixture(scope="session")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real reports on sample-task: broken (three errors with lines, a warning, a hostile title) and fixed."""
    root = tmp_path_factory.mktemp("reports")

    def broken(package: Path) -> None:
        edit(package / "environment/Dockerfile", "FROM debian:bookworm-slim", "FROM debian")
        edit(package / "environment/Dockerfile", "WORKDIR /workspace", "RUN pip install requests\nWORKDIR /workspace")
        edit(package / "task.md", "title: Total the figures in a generated file", "title: \""
             '<img src=x onerror=alert(1)> @octocat | [x](http://evil.example) <!-- posttrain-arena:sticky -->"')
        edit(package / "task.md", "integer, to `/workspace/answer.txt`.",
             "integer, to `/workspace/answer.txt`. TODO(arena): finish")
        (package / "environment" / "logo.bin").write_bytes(b"\x00\x01binary\xff")

    return {"broken": arena_report(root, mutate=broken), "fixed": arena_report(root)}


SAMPLE_FILES = ["environments/sample-task/task.md", "environments/sample-task/verifier.py"]


@pytest.fixture
def passing(world: World, reports: dict[str, Path]) -> int:
    """A fork PR adding sample-task whose head fake_sha(1) has a passing verdict from run 300."""
    number, opened = world.open_fork_pr(SAMPLE_FILES, fake_sha(1))
    assert world.run("pull_request_target", opened) == 0
    assert world.run("workflow_run", world.run_event(number, run_id=300, conclusion="success"), reports["fixed"]) == 0
    sticky = world.sticky(number)["body"]
    assert f"head={fake_sha(1)}" in sticky and "outcome=pass" in sticky, sticky[:300]
    return number
