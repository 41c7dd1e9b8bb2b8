"""What the bot can do, as plain records: bot.events and bot.commands decide them, bot.execute carries them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.facts import Fact
from bot.markers import TrainKey
from bot.sticky import StickyState

STATUS_CONTEXT = "arena/check"


@dataclass(frozen=True)
class Need:
    """Fetch a fact, then decide again; `args` are what the fact is fetched for (a pull request's number, say)."""

    what: Fact
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Publish:
    """The sticky comment for `state`, with the labels and the commit status its outcome implies (written only
    together with it). `note` says in the Actions log why a report gave no verdict."""

    pr: int
    body: str
    state: StickyState
    description: str
    target_url: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Reply:
    """A reply on the PR; `to` is the command comment it answers (its marker makes the reply findable again)."""

    pr: int
    body: str
    to: int | None = None


@dataclass(frozen=True)
class React:
    comment_id: int
    content: str


@dataclass(frozen=True)
class AcceptTraining:
    """An authorized `/arena train`: tell the PR first, then hand the request to the launch job, once per key."""

    pr: int
    key: TrainKey
    requested_by: str
    command_comment: int
    package_digest: str | None = None  # the verdict's: the job refuses any other package
    author: str | None = None  # the pull request's author, whom the results credit


@dataclass(frozen=True)
class AcceptCancel:
    """An authorized `/arena cancel`: tell the PR, then hand the cancellation to the launch job."""

    pr: int
    key: TrainKey
    requested_by: str
    command_comment: int


@dataclass(frozen=True)
class RerunChecks:
    pr: int
    run_id: int
    to: int


@dataclass(frozen=True)
class Ignore:
    reason: str


Action = Need | Publish | Reply | React | AcceptTraining | AcceptCancel | RerunChecks | Ignore
