"""The seam between an accepted `/arena train` and the launch job: the PR is told first, then the launch is handed on.

1. `accept` (in the commands workflow's bot job) writes the accepted reply, with a marker naming its (environment,
   commit, base) key, exactly once; re-lists the PR's comments, and only if its reply is the oldest accepted one for
   that key builds a LaunchRequest naming that reply and hands it to the launcher. A run that loses the race (two
   maintainers asking at once) turns its reply into a pointer at the winner and launches nothing.
2. `handoff_launcher` (ARENA_LAUNCH_HANDOFF=1) writes the request as the bot step's outputs: train=true, pr, sha and
   request (the JSON below). No output, no launch job.
3. The launch job runs `arena bot launch` with the request in ARENA_LAUNCH_REQUEST; it confirms first (as `arena bot
   confirm-launch` does alone): `confirm` reads the reply back from GitHub and refuses unless it is the bot's own
   accepted reply for exactly this request. Only then may anything start, so nothing is launched that the PR was not
   told about; the launch can report its progress by editing that reply (request.reply_comment).

Request JSON (version 1): {"request_version": 1, "repository", "pr", "environment", "commit", "base",
"requested_by", "command_comment", "reply_comment", "action", "package_digest", "author"}. (environment, commit) is
the request's idempotency key; action is "train" or "cancel" (an accepted `/arena cancel` is handed on the same way,
its reply carrying a cancel key line instead of the train key line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from bot import comment, github_api, writes
from bot.actions import AcceptCancel, AcceptTraining
from bot.facts import Config
from bot.markers import TrainKey, is_ours, reply_marker, reply_to, train_key

SHA = re.compile(r"^[0-9a-f]{40}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
NAME = re.compile(r"^[a-z0-9-]{1,64}$")
VERSION = 1
LaunchAction = Literal["train", "cancel"]  # an accepted `/arena train` or `/arena cancel`
ACTIONS: tuple[LaunchAction, ...] = ("train", "cancel")


class HandoffError(Exception):
    """The launch request is malformed, or GitHub does not show the PR was told about it."""


@dataclass(frozen=True)
class LaunchRequest:
    """What the launch job may start: one environment at one commit, as the accepted reply on the PR records it."""

    repository: str
    pr: int
    environment: str
    commit: str
    base: str
    requested_by: str
    command_comment: int
    reply_comment: int
    action: LaunchAction = "train"
    package_digest: str | None = None  # the verdict's digest of the package that passed
    author: str | None = None  # the pull request's author

    @property
    def key(self) -> TrainKey:
        return TrainKey(self.environment, self.commit, self.base)

    def to_json(self) -> str:
        return json.dumps({"request_version": VERSION, **asdict(self)}, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LaunchRequest:
        """A request from its JSON; HandoffError when anything is missing, extra or malformed."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.pop("request_version", None) != VERSION:
                raise HandoffError(f"not a version {VERSION} launch request")
            request = cls(**data)
        except (ValueError, TypeError) as exc:
            raise HandoffError(f"not a launch request: {exc}") from None
        ints = (request.pr, request.command_comment, request.reply_comment)
        if (not all(isinstance(n, int) and n > 0 for n in ints) or not SHA.match(str(request.commit))
                or not NAME.match(str(request.environment))
                or not all(isinstance(s, str) and s for s in (request.repository, request.base, request.requested_by))
                or request.action not in ACTIONS
                or not (request.package_digest is None or DIGEST.match(str(request.package_digest)))
                or not (request.author is None or (isinstance(request.author, str) and request.author))):
            raise HandoffError("the launch request has a malformed field")
        return request


Launcher = Callable[[LaunchRequest], None]


def accept(client: github_api.Client, action: AcceptTraining, cfg: Config, launcher: Launcher | None,
           log: Callable[[str], None]) -> LaunchRequest | None:
    """Tell the PR, then hand the request on (once per key); returns the request handed on, or None."""
    key, pr = action.key, action.pr
    body = "\n".join([reply_marker(action.command_comment), key.line(),
                      comment.accepted_body(action.requested_by, key.environment, key.head_sha, launcher is not None,
                                            cfg.run_url)])
    mine = writes.post_comment(client, pr, body, cfg.bot_login)
    try:
        return _hand_on(client, action, cfg, launcher, log, mine)
    except Exception:  # the PR was told "accepted": correct that before the failure is explained
        note = "The arena bot failed before handing this request to the launch job, so nothing was started."
        try:
            github_api.edit_comment(client, mine, f"{reply_marker(action.command_comment)}\n{note}")
        except github_api.ApiError as second:
            log(f"could not correct the accepted reply {mine}: {second}")
        raise


def _hand_on(client: github_api.Client, action: AcceptTraining, cfg: Config, launcher: Launcher | None,
             log: Callable[[str], None], mine: int) -> LaunchRequest | None:
    key, pr = action.key, action.pr
    accepted = sorted(c.id for c in github_api.list_issue_comments(client, pr)
                      if is_ours(c, cfg.bot_login) and train_key(c) == key)
    if accepted and accepted[0] != mine:  # another run accepted the same request first
        github_api.edit_comment(client, mine, "\n".join([
            reply_marker(action.command_comment),
            comment.duplicate_body(key.environment, key.head_sha, cfg.comment_link(pr, accepted[0]))]))
        log(f"training of {key.environment} at {key.head_sha[:7]} already accepted in comment {accepted[0]}")
        return None
    request = LaunchRequest(cfg.repo, pr, key.environment, key.head_sha, key.base_ref, action.requested_by,
                            action.command_comment, mine, package_digest=action.package_digest, author=action.author)
    if launcher is None:
        log("launch is not configured: nothing was started")
        return None
    launcher(request)
    log(f"launch request handed on: {request.to_json()}")
    return request


def handoff_launcher(env: Mapping[str, str]) -> Launcher | None:
    """With ARENA_LAUNCH_HANDOFF=1 and GITHUB_OUTPUT set: a launcher that writes the request as the bot step's
    outputs (train=true, pr, sha, request) for the protected launch job; otherwise None (not configured)."""
    output = env.get("GITHUB_OUTPUT")
    if env.get("ARENA_LAUNCH_HANDOFF") != "1" or not output:
        return None

    def launch(request: LaunchRequest) -> None:
        LaunchRequest.from_json(request.to_json())  # never hand on what the launch job would refuse
        with open(output, "a", encoding="utf-8") as handle:
            handle.write(f"train=true\npr={request.pr}\nsha={request.commit}\nrequest={request.to_json()}\n")

    return launch


def confirm(client: github_api.Client, request: LaunchRequest, bot_login: str, repo: str) -> None:
    """Raise HandoffError unless GitHub shows the bot's own accepted reply for exactly this request."""
    if request.repository != repo:
        raise HandoffError(f"the request is for {request.repository}, not {repo}")
    reply = github_api.get_comment(client, request.reply_comment)
    if reply is None:
        raise HandoffError(f"the accepted reply (comment {request.reply_comment}) is gone")
    if not is_ours(reply, bot_login):
        raise HandoffError(f"comment {request.reply_comment} was not written by the bot ({bot_login})")
    if reply_to(reply) != request.command_comment or train_key(reply, request.action) != request.key:
        raise HandoffError(f"comment {request.reply_comment} does not accept this request (it was superseded or "
                           "edited)")


def accept_cancel(client: github_api.Client, action: AcceptCancel, cfg: Config, launcher: Launcher | None,
                  log: Callable[[str], None]) -> LaunchRequest | None:
    """Tell the PR the cancellation is on its way, then hand it to the launch job (which alone can reach the
    backend); without a launcher, say that there is nothing to cancel."""
    key = action.key
    if launcher is None:
        body = "\n".join([reply_marker(action.command_comment), "Nothing to cancel: training launch is not "
                           "configured for this arena, so no training job exists for this pull request."])
        writes.post_comment(client, action.pr, body, cfg.bot_login)
        return None
    body = "\n".join([reply_marker(action.command_comment), key.line("cancel"),
                      f"Cancelling the training job of `environments/{key.environment}` at {key.head_sha}, asked by "
                      f"{comment.inline(action.requested_by, 40)}; this reply says when it is done."])
    mine = writes.post_comment(client, action.pr, body, cfg.bot_login)
    request = LaunchRequest(cfg.repo, action.pr, key.environment, key.head_sha, key.base_ref, action.requested_by,
                            action.command_comment, mine, "cancel")
    launcher(request)
    log(f"cancellation handed on: {request.to_json()}")
    return request
