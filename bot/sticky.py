"""The one sticky comment: its hidden markers, which comment it is, and whether a new body may replace it.

The first line of the body is MARKER; the second is a hidden state line with the head SHA and the workflow run the
body describes. A body for the same head SHA never replaces one from a later run (out-of-order deliveries), a body
that equals the current one is never written again (duplicate deliveries), and duplicate sticky comments (two bot runs
racing to create one) are folded into the oldest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.model import Comment

MARKER = "<!-- posttrain-arena:sticky -->"
OUTCOMES = ("pending", "pass", "fail", "error", "notice")
_STATE = re.compile(r"<!-- posttrain-arena:state head=([0-9a-f]{40}) run=(\d{1,20})\.(\d{1,6}) "
                    r"outcome=(pending|pass|fail|error|notice) -->")


@dataclass(frozen=True)
class StickyState:
    """What a sticky body is about: the head SHA, the run (0.0 when no run) and its outcome."""

    head_sha: str
    outcome: str
    run_id: int = 0
    run_attempt: int = 0

    def line(self) -> str:
        """The hidden state line."""
        return (f"<!-- posttrain-arena:state head={self.head_sha} run={self.run_id}.{self.run_attempt} "
                f"outcome={self.outcome} -->")


@dataclass(frozen=True)
class Plan:
    """What to do with the sticky comment: create, edit, unchanged or stale; and duplicates to delete."""

    kind: str
    comment_id: int | None = None
    duplicates: tuple[int, ...] = ()

    @property
    def writes(self) -> bool:
        return self.kind in ("create", "edit")


def parse_state(body: str) -> StickyState | None:
    """The state of a sticky body (read from its second line only), or None."""
    lines = body.split("\n", 2)
    if len(lines) < 2 or lines[0] != MARKER:
        return None
    match = _STATE.fullmatch(lines[1])
    if match is None:
        return None
    head, run, attempt, outcome = match.groups()
    return StickyState(head, outcome, int(run), int(attempt))


def stickies(comments: list[Comment], bot_login: str | None) -> list[Comment]:
    """The bot's sticky comments, oldest first: bot-authored, marker on the first line."""
    return sorted((c for c in comments if c.author_type == "Bot" and (bot_login in (None, c.author))
                   and c.body.split("\n", 1)[0] == MARKER), key=lambda c: c.id)


def current_state(comments: list[Comment], bot_login: str | None) -> StickyState | None:
    """The state of the sticky comment, if there is one."""
    found = stickies(comments, bot_login)
    return parse_state(found[0].body) if found else None


def supersedes(new: StickyState, old: StickyState | None) -> bool:
    """Whether a body for `new` may replace one for `old` (the caller has checked new.head_sha is the PR's head)."""
    if old is None or old.head_sha != new.head_sha:
        return True
    return (new.run_id, new.run_attempt) >= (old.run_id, old.run_attempt)


def plan(comments: list[Comment], body: str, state: StickyState, bot_login: str | None) -> Plan:
    """Decide, from one listing of the PR's comments, how to upsert body."""
    found = stickies(comments, bot_login)
    if not found:
        return Plan("create")
    keep, duplicates = found[0], tuple(c.id for c in found[1:])
    if not supersedes(state, parse_state(keep.body)):
        return Plan("stale", keep.id, duplicates)
    return Plan("unchanged" if keep.body == body else "edit", keep.id, duplicates)
