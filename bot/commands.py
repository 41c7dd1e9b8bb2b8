"""`/arena ...` comments on a pull request: which comments are commands, and what each one asks for. Pure decisions.

A comment is a command exactly when the commands workflow's trigger filter lets it through (tests/test_workflows.py
evaluates that filter on the same bodies): a new comment on a pull request, by an account that is not a bot, whose
body is `/arena` or starts with `/arena ` (ASCII case-insensitive, as GitHub compares). The words after `/arena` on
that first line are the command and its arguments.

Privileged commands (check, train, cancel) are authorized only through the collaborator permission API (write,
maintain, admin), and rely only on the sticky comment written by the bot's own login about the PR's current (base,
head). Every reply carries its command's id, so a second delivery of the same comment is answered once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot import comment, job_comments
from bot.actions import AcceptCancel, AcceptTraining, Action, Ignore, Need, React, Reply, RerunChecks
from bot.comment import inline
from bot.facts import Config, Fact, Facts, Pull
from bot.markers import TrainKey, is_ours, reply_to, train_key
from bot.sticky import Verdict, current

WRITE_PERMISSIONS = ("admin", "maintain", "write")
PRIVILEGED = ("check", "train", "cancel")
PREFIX = "/arena"


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...]


def parse_command(body: str) -> Command | None:
    """The command a comment body starts with, or None: `/arena` alone, or `/arena ` and words on the first line."""
    if body.lower() != PREFIX and body[: len(PREFIX) + 1].lower() != PREFIX + " ":
        return None
    words = body.split("\n", 1)[0].split()[1:]
    return Command(words[0].lower() if words else "help", tuple(words[1:]))


def read_command(payload: dict[str, Any]) -> tuple[Command | None, str]:
    """The command an issue_comment event carries, or None and why it carries none."""
    note, issue = payload.get("comment") or {}, payload.get("issue") or {}
    user = note.get("user") or {}
    if payload.get("action") != "created":
        return None, f"comment {payload.get('action')!r}: only new comments carry commands"
    if issue.get("pull_request") in (None, False, 0, ""):  # falsy as a GitHub expression sees it
        return None, "comment on an issue, not a pull request"
    if str(user.get("type") or "").lower() == "bot" or str(user.get("login") or "").lower().endswith("[bot]"):
        return None, "comment by a bot"
    command = parse_command(str(note.get("body") or ""))
    return command, "" if command else "no /arena command at the start of the comment"


def on_issue_comment(payload: dict[str, Any], facts: Facts, cfg: Config) -> list[Action]:
    """A slash command on a PR."""
    command, why = read_command(payload)
    if command is None:
        return [Ignore(why)]
    note = payload["comment"]
    login, number, comment_id = str(note["user"]["login"]), int(payload["issue"]["number"]), int(note["id"])
    if command.name == "help":
        return [Reply(number, comment.help_body(), comment_id)]
    if command.name == "status":
        return _status(number, comment_id, facts, cfg)
    if command.name not in PRIVILEGED:
        return [Reply(number, comment.unknown_body(command.name), comment_id)]
    if Fact.PERMISSION not in facts.fetched:
        return [Need(Fact.PERMISSION, (login,))]
    if facts.permission not in WRITE_PERMISSIONS:
        return [_refuse(number, comment_id, login, command.name, "only maintainers (write, maintain or admin access "
                        "to this repository) can do that. A maintainer will look at this pull request; thank you!")]
    missing: list[Action] = [Need(w, (number,)) for w in (Fact.PULL, Fact.COMMENTS) if w not in facts.fetched]
    if missing:
        return missing
    if any(is_ours(c, cfg.bot_login) and reply_to(c) == comment_id for c in facts.comments or []):
        return [Ignore(f"comment {comment_id} was already answered (a second delivery)")]
    return _privileged(command, number, comment_id, login, facts, cfg)


def _status(number: int, comment_id: int, facts: Facts, cfg: Config) -> list[Action]:
    """`/arena status` (anyone): the training job of the PR's environment at its head, as the job record says."""
    missing: list[Action] = [Need(w, (number,)) for w in (Fact.PULL, Fact.COMMENTS) if w not in facts.fetched]
    if missing:
        return missing
    if any(is_ours(c, cfg.bot_login) and reply_to(c) == comment_id for c in facts.comments or []):
        return [Ignore(f"comment {comment_id} was already answered (a second delivery)")]
    assert facts.pull is not None
    _, verdict = current(facts.comments or [], cfg.bot_login)
    environment = verdict.environment if verdict is not None else None
    if environment is not None and Fact.JOB not in facts.fetched:
        return [Need(Fact.JOB, (environment, facts.pull.head_sha))]
    return [Reply(number, job_comments.status_body(facts.job, environment, facts.pull.head_sha), comment_id)]


def _refuse(number: int, comment_id: int, login: str, command: str, reason: str) -> Reply:
    return Reply(number, comment.refusal_body(login, command, reason), comment_id)


def _privileged(command: Command, number: int, comment_id: int, login: str, facts: Facts,
                cfg: Config) -> list[Action]:
    pull = facts.pull
    if pull is None or pull.state != "open":
        return [_refuse(number, comment_id, login, command.name, "the pull request is not open.")]
    if not pull.on_default_branch:
        return [_refuse(number, comment_id, login, command.name, f"this pull request targets "
                        f"`{inline(pull.base_ref, 100)}`, not the default branch `{inline(pull.default_branch, 100)}`; "
                        "the arena validates and trains only pull requests against the default branch.")]
    _, verdict = current(facts.comments or [], cfg.bot_login)
    head = pull.head_sha
    if command.name == "check":
        if verdict is None or not verdict.about(head, pull.base_ref) or not verdict.run_id:
            return [_refuse(number, comment_id, login, "check", f"no validation run has reported on the head commit "
                            f"{head[:7]} yet. It runs on every push; the arena's comment on this pull request will "
                            "show its verdict.")]
        return [React(comment_id, "+1"), RerunChecks(number, verdict.run_id, comment_id)]
    if command.name == "cancel":
        if verdict is None or verdict.environment is None:
            return [_refuse(number, comment_id, login, "cancel", "no environment of this pull request has passed "
                            "validation, so no training job can exist for it.")]
        return [React(comment_id, "+1"), AcceptCancel(number, TrainKey(verdict.environment, head, pull.base_ref),
                                                      login, comment_id)]
    return _train(command, pull, comment_id, login, facts, cfg)


def _train(command: Command, pull: Pull, comment_id: int, login: str, facts: Facts, cfg: Config) -> list[Action]:
    number, head = pull.number, pull.head_sha
    _, verdict = current(facts.comments or [], cfg.bot_login)
    wanted = command.args[0].lower() if command.args else None
    if wanted is not None and not re.fullmatch(r"[0-9a-f]{7,40}", wanted):
        return [_refuse(number, comment_id, login, "train", f"“{inline(wanted, 40)}” is not a commit SHA.")]
    if wanted is not None and not head.startswith(wanted):
        return [_refuse(number, comment_id, login, "train", f"the head moved: you asked for {wanted[:12]}, the head "
                        f"is now {head[:7]}. Check the verdict on {head[:7]} and ask again.")]
    if verdict is None or verdict.outcome not in (Verdict.PASS, Verdict.FAIL):
        return [_refuse(number, comment_id, login, "train", f"there is no verdict on the head commit {head[:7]} yet.")]
    if verdict.head_sha != head:
        return [_refuse(number, comment_id, login, "train", f"the head moved since the verdict: the verdict is for "
                        f"{verdict.head_sha[:7]}, the head is now {head[:7]}. Wait for the verdict on {head[:7]} and "
                        "ask again.")]
    if verdict.base_ref != pull.base_ref:
        return [_refuse(number, comment_id, login, "train", f"the base branch changed since the verdict on "
                        f"{head[:7]}; push a commit to validate it against `{inline(pull.base_ref, 100)}` first.")]
    if verdict.outcome != Verdict.PASS or verdict.environment is None:
        return [_refuse(number, comment_id, login, "train", f"the verdict on {head[:7]} is a fail; training needs a "
                        "pass.")]
    key = TrainKey(verdict.environment, head, pull.base_ref)
    accepted = sorted((c for c in facts.comments or [] if is_ours(c, cfg.bot_login) and train_key(c) == key),
                      key=lambda c: c.id)
    if accepted:
        link = cfg.comment_link(number, accepted[0].id)
        return [Reply(number, comment.duplicate_body(key.environment, head, link), comment_id)]
    if verdict.package_digest is None:
        return [_refuse(number, comment_id, login, "train", f"the verdict on {head[:7]} does not record which "
                        "package passed (it came from an older arena); push a commit or ask a maintainer to "
                        "`/arena check` again.")]
    return [React(comment_id, "+1"), AcceptTraining(number, key, login, comment_id, verdict.package_digest,
                                                    pull.author)]
