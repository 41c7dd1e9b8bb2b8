"""Writes that happen once even when GitHub's answer is lost.

A POST that failed ambiguously (no answer, or a server error: `ApiError.ambiguous`) may have been performed. github_api
never repeats such a POST by itself; here the caller first re-reads what the write would have created (a comment by
its marker, a re-run by its run's state) and writes again only when it is not there. Writes that are idempotent by
nature (adding labels, a commit status, a reaction) are simply repeated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from bot import github_api
from bot.github_api import ApiError
from bot.markers import is_ours

T = TypeVar("T")
ATTEMPTS = 3


def once(write: Callable[[], T], done: Callable[[], T | None]) -> T:
    """write(); after an ambiguous failure, done() re-reads whether it happened (its result, or None) before trying
    again. Non-ambiguous failures, and the last ambiguous one, are raised."""
    for attempt in range(ATTEMPTS):
        try:
            return write()
        except ApiError as exc:
            if not exc.ambiguous or attempt == ATTEMPTS - 1:
                raise
            found = done()
            if found is not None:
                return found
    raise AssertionError("unreachable")


def repeat(write: Callable[[], T]) -> T:
    """An idempotent write, tried again after an ambiguous failure."""
    return once(write, lambda: None)


def post_comment(client: github_api.Client, pr: int, body: str, bot_login: str) -> int:
    """Create a comment whose first line is a marker, exactly once; returns its id."""
    marker = body.split("\n", 1)[0]

    def find() -> int | None:
        mine = [c for c in github_api.list_issue_comments(client, pr)
                if is_ours(c, bot_login) and c.body.split("\n", 1)[0] == marker]
        return mine[0].id if mine else None

    return once(lambda: github_api.create_comment(client, pr, body), find)


def post_unique(client: github_api.Client, pr: int, body: str, bot_login: str) -> int:
    """A comment that must exist exactly once on the PR, however many runs post it at the same moment: found by its
    marker first; after creating it, the PR is listed again and every copy but the oldest is deleted. Returns the
    id of the one that stays."""
    marker = body.split("\n", 1)[0]

    def mine() -> list[int]:
        return sorted(c.id for c in github_api.list_issue_comments(client, pr)
                      if is_ours(c, bot_login) and c.body.split("\n", 1)[0] == marker)

    found = mine()
    if found:
        return found[0]
    post_comment(client, pr, body, bot_login)
    oldest, *copies = mine()
    for duplicate in copies:
        github_api.delete_comment(client, duplicate)
    return oldest


def rerun(client: github_api.Client, run_id: int) -> None:
    """Re-run a workflow run once: after an ambiguous failure, or a refusal because it is already running again,
    the run's own state says whether the re-run happened."""
    def started() -> bool | None:
        status, _ = github_api.get_run(client, run_id)
        return True if status != "completed" else None

    try:
        once(lambda: github_api.rerun_workflow(client, run_id), started)
    except ApiError as exc:
        if exc.status != 403 or not started():
            raise
