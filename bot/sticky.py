"""The one sticky comment: its state line, which comment it is, whether a new body may replace it, and the labels and
commit status that go with each outcome.

The first line of the body is MARKER; the second is a hidden state line with the head SHA, the base branch, the
environment and the workflow run the body describes. A body for the same (base, head) never replaces one from a later
run (out-of-order deliveries), a body equal to the current one is never written again (duplicate deliveries), and
duplicate sticky comments (two runs racing to create one) fold into the oldest. Labels and status are a function of the
outcome, so they can only ever be written together with the verdict they describe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from bot.facts import Comment
from bot.markers import MARKER, decode_ref, encode_ref, is_ours

LABEL_PASS, LABEL_FAIL = "arena: checks passed", "arena: checks failed"
LABEL_SCOPE, LABEL_CAP = "arena: needs-maintainer", "arena: too-many-open-prs"
ARENA_LABELS = (LABEL_PASS, LABEL_FAIL, LABEL_SCOPE, LABEL_CAP)
StatusState = Literal["pending", "success", "failure", "error"]  # a GitHub commit status's state


class Verdict(StrEnum):
    """What the sticky says about the PR's head (its state line's `outcome`)."""

    PENDING = "pending"  # validation has not reported yet
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # no verdict could be given (an untrusted or broken run, a bot failure)
    SCOPE = "scope"  # the PR changes more than one environment, or files outside environments/: a maintainer's call
    CAP = "cap"  # the author has too many open pull requests


# verdict -> (the arena labels the PR carries, the arena/check status state on the head)
OUTCOMES: dict[Verdict, tuple[tuple[str, ...], StatusState]] = {
    Verdict.PENDING: ((), "pending"), Verdict.PASS: ((LABEL_PASS,), "success"),
    Verdict.FAIL: ((LABEL_FAIL,), "failure"), Verdict.ERROR: ((), "error"), Verdict.SCOPE: ((LABEL_SCOPE,), "failure"),
    Verdict.CAP: ((LABEL_CAP,), "failure")}
_STATE = re.compile(r"<!-- posttrain-arena:state head=([0-9a-f]{40}) base=(\S{1,300}) env=([a-z0-9-]{1,64}|-) "
                    rf"run=(\d{{1,20}})\.(\d{{1,6}}) outcome=({'|'.join(OUTCOMES)})(?: digest=([0-9a-f]{{64}}))? -->")


@dataclass(frozen=True)
class StickyState:
    """What a sticky body is about: (base, head), the environment (None when not one), the run (0.0 when none) and
    its outcome."""

    head_sha: str
    base_ref: str
    outcome: Verdict
    environment: str | None = None
    run_id: int = 0
    run_attempt: int = 0
    package_digest: str | None = None  # "sha256:…" of the package the verdict is about (a pass or a fail)

    def line(self) -> str:
        """The hidden state line."""
        digest = f" digest={self.package_digest.removeprefix('sha256:')}" if self.package_digest else ""
        return (f"<!-- posttrain-arena:state head={self.head_sha} base={encode_ref(self.base_ref)} "
                f"env={self.environment or '-'} run={self.run_id}.{self.run_attempt} outcome={self.outcome}{digest} "
                "-->")

    @property
    def labels(self) -> tuple[str, ...]:
        return OUTCOMES[self.outcome][0]

    @property
    def status(self) -> StatusState:
        return OUTCOMES[self.outcome][1]

    def about(self, head_sha: str, base_ref: str) -> bool:
        return (self.head_sha, self.base_ref) == (head_sha, base_ref)


@dataclass(frozen=True)
class Plan:
    """What to do with the sticky comment: create, edit, unchanged or stale; and duplicates to delete. A stale plan
    with duplicates carries `fold`: the newest body among the stickies, which the kept (oldest) one must hold."""

    kind: Literal["create", "edit", "unchanged", "stale"]
    comment_id: int | None = None
    duplicates: tuple[int, ...] = ()
    fold: str | None = None


def parse_state(body: str) -> StickyState | None:
    """The state of a sticky body (read from its second line only), or None."""
    lines = body.split("\n", 2)
    if len(lines) < 2 or lines[0] != MARKER:
        return None
    match = _STATE.fullmatch(lines[1])
    if match is None:
        return None
    head, base, env, run, attempt, outcome, digest = match.groups()
    return StickyState(head, decode_ref(base), Verdict(outcome), None if env == "-" else env, int(run), int(attempt),
                       f"sha256:{digest}" if digest else None)


def stickies(comments: list[Comment], bot_login: str) -> list[Comment]:
    """The bot's sticky comments, oldest first: written by the bot's login, marker on the first line."""
    return sorted((c for c in comments if is_ours(c, bot_login) and c.body.split("\n", 1)[0] == MARKER),
                  key=lambda c: c.id)


def current(comments: list[Comment], bot_login: str) -> tuple[Comment | None, StickyState | None]:
    """The sticky comment (the oldest of the bot's) and its state."""
    found = stickies(comments, bot_login)
    return (found[0], parse_state(found[0].body)) if found else (None, None)


def supersedes(new: StickyState, old: StickyState | None) -> bool:
    """Whether a body for `new` may replace one for `old` (the caller has checked that new's base and head are the
    PR's): a different (base, head) always yields, the same one only to the same or a later run."""
    if old is None or not old.about(new.head_sha, new.base_ref):
        return True
    return (new.run_id, new.run_attempt) >= (old.run_id, old.run_attempt)


def plan(comments: list[Comment], body: str, state: StickyState, bot_login: str) -> Plan:
    """Decide, from one listing of the PR's comments, how to upsert body."""
    found = stickies(comments, bot_login)
    if not found:
        return Plan("create")
    keep, duplicates = found[0], tuple(c.id for c in found[1:])
    newest = _newest(found, state)
    if not supersedes(state, parse_state(newest.body)):
        # Another run's body wins; when runs raced to create, it may sit in a duplicate: the kept one takes it.
        return Plan("stale", keep.id, duplicates, newest.body if duplicates else None)
    return Plan("unchanged" if keep.body == body else "edit", keep.id, duplicates)


def _newest(found: list[Comment], state: StickyState) -> Comment:
    """The sticky whose state is the latest run about `state`'s (base, head); the oldest sticky when none is."""
    about = [(parsed.run_id, parsed.run_attempt, c.id, c) for c in found
             if (parsed := parse_state(c.body)) is not None and parsed.about(state.head_sha, state.base_ref)]
    return max(about, key=lambda entry: entry[:3])[3] if about else found[0]
