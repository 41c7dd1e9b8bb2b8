"""Plain records the bot decides on: what GitHub said (pull requests, comments) and how the bot is configured."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launch.state import JobRecord
    from taskpkg.check_report import Report


@dataclass(frozen=True)
class Pull:
    """A pull request as the API reports it now (never as an artifact claims it)."""

    number: int
    state: str
    title: str
    author: str
    head_sha: str
    head_ref: str
    head_repo: str | None
    base_ref: str
    default_branch: str
    labels: tuple[str, ...] = ()

    @property
    def head_label(self) -> str:
        """`owner:branch`, as GitHub shows the head of a pull request."""
        return f"{(self.head_repo or '?').split('/')[0]}:{self.head_ref}"

    @property
    def on_default_branch(self) -> bool:
        """Whether the pull request targets the repository's default branch (the only one the arena trusts)."""
        return self.base_ref == self.default_branch


@dataclass(frozen=True)
class Comment:
    """An issue comment."""

    id: int
    author: str
    author_type: str
    body: str


@dataclass(frozen=True)
class Config:
    """Where the bot runs and its knobs."""

    repo: str
    bot_login: str
    server_url: str = "https://github.com"
    run_url: str | None = None
    max_open_prs_per_author: int = 3

    def run_link(self, run_id: int | None) -> str | None:
        """The Actions page of a workflow run of this repository."""
        return f"{self.server_url}/{self.repo}/actions/runs/{run_id}" if run_id else self.run_url

    def comment_link(self, pr: int, comment_id: int) -> str:
        """The web address of an issue comment on a pull request."""
        return f"{self.server_url}/{self.repo}/pull/{pr}#issuecomment-{comment_id}"


class Fact(StrEnum):
    """A fact the bot can fetch (a Need's `what`); each value names the field of Facts it fills."""

    PULL = "pull"  # the pull request, by number
    PULLS_BY_HEAD = "pulls_by_head"  # the open pull requests of (head repository, branch)
    FILES = "files"  # the pull request's changed files
    COMMENTS = "comments"  # the pull request's comments
    PERMISSION = "permission"  # a user's permission on the repository
    AUTHOR_OPEN_PRS = "author_open_prs"  # how many pull requests a user has open
    BASE_CHANGES = "base_changes"  # the files the base branch changed since the pull request forked
    REPORT = "report"  # the check report in the workflow run's artifact
    JOB = "job"  # the training job record of (environment, commit)


@dataclass
class Facts:
    """What the bot learned from the API (and the artifact) before deciding; None where not asked for."""

    pull: Pull | None = None
    files: list[str] | None = None
    comments: list[Comment] | None = None
    permission: str | None = None
    author_open_prs: int | None = None
    report: Report | None = None
    report_error: str | None = None
    pulls_by_head: list[Pull] | None = None
    base_changes: list[str] | None = None
    job: JobRecord | None = None  # the job record of the PR's environment at its head, when asked for
    fetched: set[Fact] = field(default_factory=set)
