"""Carry out what bot.events decided, through bot.github_api; fetch the facts it asks for.

A Publish costs one listing of the PR's comments (none when the decision already listed them); when the sticky comment
is current, or newer than what would replace it, nothing is written at all: no label, no status, no edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bot import comment, github_api, sticky
from bot.actions import (
    STATUS_CONTEXT,
    Action,
    Ignore,
    LaunchTraining,
    Need,
    Publish,
    React,
    Refuse,
    Reply,
    RerunChecks,
    SetLabels,
    SetStatus,
    UpsertStickyComment,
)
from bot.model import Config, Facts
from bot.report_input import ReportError, load_report

Launcher = Callable[[LaunchTraining], str]
Log = Callable[[str], None]


def gather(client: github_api.Client, need: Need, facts: Facts, env: Mapping[str, str]) -> None:
    """Fetch one fact into facts."""
    what, args = need.what, need.args
    if what == "pull":
        facts.pull = github_api.get_pull(client, *args)
    elif what == "pull_by_head":
        facts.pull, what = github_api.find_pull_by_head(client, *args), "pull"
    elif what == "files":
        facts.files = github_api.list_changed_files(client, *args)
    elif what == "comments":
        facts.comments = github_api.list_issue_comments(client, *args)
    elif what == "permission":
        facts.permission = github_api.get_permission(client, *args)
    elif what == "author_open_prs":
        facts.author_open_prs = github_api.count_open_pulls_by(client, *args)
    elif what == "report":
        try:
            facts.report = load_report(env.get("ARENA_REPORT_DIR"))
        except ReportError as exc:
            facts.report_error = str(exc)
    else:
        raise ValueError(f"unknown fact {what!r}")
    facts.fetched.add(what)


def execute(client: github_api.Client, actions: list[Action], facts: Facts, cfg: Config, log: Log,
            launcher: Launcher | None = None) -> None:
    """Apply every action in order."""
    for action in actions:
        if isinstance(action, Publish):
            publish(client, action, facts, cfg, log)
        elif isinstance(action, UpsertStickyComment):
            publish(client, Publish(action, SetLabels(action.pr)), facts, cfg, log)
        elif isinstance(action, SetLabels):
            set_labels(client, action)
        elif isinstance(action, SetStatus):
            github_api.create_status(client, action.sha, action.state, STATUS_CONTEXT, action.description,
                                     action.target_url)
        elif isinstance(action, Reply):
            github_api.create_comment(client, action.pr, action.body)
        elif isinstance(action, React):
            github_api.add_reaction(client, action.comment_id, action.content)
        elif isinstance(action, Refuse):
            github_api.create_comment(client, action.pr, comment.refusal_body(action.login, action.command,
                                                                              action.reason))
        elif isinstance(action, LaunchTraining):
            github_api.create_comment(client, action.pr, launch(action, launcher))
        elif isinstance(action, RerunChecks):
            github_api.rerun_workflow(client, action.run_id)
        elif isinstance(action, Ignore):
            log(f"nothing to do: {action.reason}")
        else:
            raise TypeError(f"cannot execute {action!r}")
        if not isinstance(action, Ignore):
            log(f"done: {type(action).__name__}")


def publish(client: github_api.Client, action: Publish, facts: Facts, cfg: Config, log: Log) -> str:
    """Labels, status, then the sticky comment (last, so an unchanged comment proves the rest was done); duplicate
    sticky comments are deleted."""
    if "comments" not in facts.fetched:
        gather(client, Need("comments", (action.sticky.pr,)), facts, {})
    chosen = sticky.plan(facts.comments or [], action.sticky.body, action.sticky.state, cfg.bot_login)
    if chosen.writes:
        set_labels(client, action.labels)
        if action.status is not None:
            github_api.create_status(client, action.status.sha, action.status.state, STATUS_CONTEXT,
                                     action.status.description, action.status.target_url)
    for duplicate in chosen.duplicates:
        github_api.delete_comment(client, duplicate)
    if chosen.kind == "create":
        github_api.create_comment(client, action.sticky.pr, action.sticky.body)
    elif chosen.kind == "edit" and chosen.comment_id is not None:
        github_api.edit_comment(client, chosen.comment_id, action.sticky.body)
    log(f"sticky comment: {chosen.kind}" + (f", {len(chosen.duplicates)} duplicates removed" if chosen.duplicates
                                             else ""))
    return chosen.kind


def set_labels(client: github_api.Client, action: SetLabels) -> None:
    """One request for all additions, one per removal."""
    if action.add:
        github_api.add_labels(client, action.pr, list(action.add))
    for label in action.remove:
        github_api.remove_label(client, action.pr, label)


def launch(action: LaunchTraining, launcher: Launcher | None) -> str:
    """Start training at the pinned SHA, or say plainly that launch is not configured; returns the reply."""
    who, sha = comment.inline(action.requested_by, 40), action.pinned_sha
    if launcher is None:
        return (f"Training authorized by {who} for commit {sha} (pinned: later pushes do not change it).\n\n"
                "**Launch is not configured** for this arena yet, so nothing was started.")
    return f"Training authorized by {who} for commit {sha}: {comment.inline(launcher(action), 500)}"
