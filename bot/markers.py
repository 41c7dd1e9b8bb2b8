"""The hidden first lines that name the bot's own comments, and whose comments count as the bot's.

A comment is the bot's only when its author is the configured bot login (ARENA_BOT_LOGIN, checked in every workflow)
and a Bot account: a marker in anyone else's comment means nothing. Markers let a run find what an earlier attempt
already wrote (after an ambiguous failure, or a second delivery of the same event) instead of writing it again:

- the sticky comment: MARKER, then its state line (bot.sticky);
- a reply to a command: `<!-- posttrain-arena:reply to=<comment id> -->`, or `failure` for the note that the bot
  failed on it;
- an accepted training request, under its reply line: `<!-- posttrain-arena:train env=<name> head=<sha> base=<ref> -->`
  (`cancel` instead of `train` for an accepted `/arena cancel`); the line is removed once the job ended without
  results, so the same commit may be asked for again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from bot.facts import Comment

MARKER = "<!-- posttrain-arena:sticky -->"
_REPLY = re.compile(r"<!-- posttrain-arena:reply to=(\d{1,20}) -->")
_KEY = r"<!-- posttrain-arena:{kind} env=([a-z0-9-]{{1,64}}) head=([0-9a-f]{{40}}) base=(\S{{1,300}}) -->"
_TRAIN = re.compile(_KEY.format(kind="train"))
_CANCEL = re.compile(_KEY.format(kind="cancel"))


def is_ours(comment: Comment, bot_login: str) -> bool:
    """Written by the bot's own identity."""
    return comment.author_type == "Bot" and comment.author == bot_login


def encode_ref(ref: str) -> str:
    """A branch name safe inside a hidden HTML comment (no spaces, no `-->`)."""
    return quote(ref, safe="/._")


def decode_ref(text: str) -> str:
    return unquote(text)


def reply_marker(to: int, kind: str = "reply") -> str:
    """The first line of a reply to command comment `to` (kind: reply, or failure for the bot's failure note)."""
    return f"<!-- posttrain-arena:{kind} to={int(to)} -->"


def reply_to(comment: Comment) -> int | None:
    """The command comment a reply answers (from its first line), or None."""
    match = _REPLY.fullmatch(comment.body.split("\n", 1)[0])
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class TrainKey:
    """What one accepted training request is about: the environment, the commit and the base it was checked on."""

    environment: str
    head_sha: str
    base_ref: str

    def line(self, kind: str = "train") -> str:
        return (f"<!-- posttrain-arena:{kind} env={self.environment} head={self.head_sha} "
                f"base={encode_ref(self.base_ref)} -->")


def train_key(comment: Comment, kind: str = "train") -> TrainKey | None:
    """The request (training, or with kind="cancel" a cancellation) an accepted reply records on its second line,
    or None."""
    lines = comment.body.split("\n", 2)
    pattern = _TRAIN if kind == "train" else _CANCEL
    match = pattern.fullmatch(lines[1]) if len(lines) > 1 and reply_to(comment) is not None else None
    return TrainKey(match.group(1), match.group(2), decode_ref(match.group(3))) if match else None
