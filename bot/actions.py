"""What the bot can do, as plain records: bot.events decides them, bot.execute carries them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.sticky import StickyState

STATUS_CONTEXT = "arena/check"


@dataclass(frozen=True)
class Need:
    """Fetch a fact, then decide again. what: pull, pull_by_head, files, comments, permission, author_open_prs,
    report."""

    what: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class UpsertStickyComment:
    pr: int
    body: str
    state: StickyState


@dataclass(frozen=True)
class SetLabels:
    pr: int
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetStatus:
    sha: str
    state: str
    description: str
    target_url: str | None = None


@dataclass(frozen=True)
class Publish:
    """The sticky comment with its labels and status: all applied, or none when the comment is current or newer."""

    sticky: UpsertStickyComment
    labels: SetLabels
    status: SetStatus | None = None


@dataclass(frozen=True)
class Reply:
    pr: int
    body: str


@dataclass(frozen=True)
class React:
    comment_id: int
    content: str


@dataclass(frozen=True)
class Refuse:
    pr: int
    login: str
    command: str
    reason: str


@dataclass(frozen=True)
class LaunchTraining:
    pr: int
    pinned_sha: str
    requested_by: str


@dataclass(frozen=True)
class RerunChecks:
    run_id: int


@dataclass(frozen=True)
class Ignore:
    reason: str


Action = (Need | UpsertStickyComment | SetLabels | SetStatus | Publish | Reply | React | Refuse | LaunchTraining
          | RerunChecks | Ignore)
