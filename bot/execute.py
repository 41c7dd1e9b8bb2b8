"""Carry out what bot.events and bot.commands decided, through bot.github_api; fetch the facts they ask for.

Publishing the sticky comment converges even when runs race or GitHub loses answers:

1. list the PR's comments and plan (create, edit, unchanged, stale) against the oldest of the bot's stickies;
2. lower trust first: remove arena labels the outcome does not carry and, unless the outcome is a pass, write its
   status; then write the sticky and delete duplicate stickies;
3. check the world: re-read the PR (and, after a create, its comments). If its head or base moved, report it so the
   caller decides again for the PR as it is now; if another run's sticky appeared, go back to 1 (the oldest is kept,
   the newest state wins);
4. raise trust last: a success status and the outcome's labels, from the PR's fresh labels.

So a verdict that cannot be published never leaves anything green, and the labels (written last) prove the rest was
done: an unchanged sticky with matching labels costs no write at all. After an ambiguous failure the plan is made
again from a fresh listing, never by writing blindly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from bot import github_api, handoff, sticky, writes
from bot.actions import (
    STATUS_CONTEXT,
    AcceptCancel,
    AcceptTraining,
    Action,
    Ignore,
    Need,
    Publish,
    React,
    Reply,
    RerunChecks,
)
from bot.facts import Config, Fact, Facts, Pull
from bot.markers import reply_marker
from bot.report_input import ReportError, read_report
from bot.sticky import ARENA_LABELS, LABEL_PASS, StatusState, StickyState

MAX_ROUNDS = 4  # plan → write → check; two racing runs settle within two rounds
SETTLED: dict[StatusState, str] = {
    "success": "Arena check passed", "failure": "Arena check failed: see the pull request's comment",
    "pending": "Arena check pending", "error": "Arena check could not give a verdict"}
Log = Callable[..., None]  # log(message, warning=None): warning is an annotation title for the Actions log


@dataclass
class Run:
    """One bot process: its client, configuration, log, launcher, and what it has done so far."""

    client: github_api.Client
    cfg: Config
    log: Log
    launcher: handoff.Launcher | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    handed_on: list[handoff.LaunchRequest] = field(default_factory=list)


def gather(run: Run, need: Need, facts: Facts) -> None:
    """Fetch one fact into facts."""
    fetch = FETCHERS.get(need.what)
    if fetch is None:
        raise ValueError(f"unknown fact {need.what!r}")
    fetch(run, facts, need.args)
    facts.fetched.add(need.what)


def _pull(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.pull = github_api.get_pull(run.client, *args)


def _pulls_by_head(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.pulls_by_head = github_api.list_pulls_by_head(run.client, *args)


def _files(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.files = github_api.list_changed_files(run.client, *args)


def _comments(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.comments = github_api.list_issue_comments(run.client, *args)


def _permission(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.permission = github_api.get_permission(run.client, *args)


def _author_open_prs(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.author_open_prs = github_api.count_open_pulls_by(run.client, *args)


def _base_changes(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    facts.base_changes = github_api.list_base_changes(run.client, *args)


def _job(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    from bot.state_branch import BranchStore, branch_name

    stored = BranchStore(run.client, branch_name(run.env)).get(*args)
    facts.job = stored.record if stored else None


def _report(run: Run, facts: Facts, args: tuple[Any, ...]) -> None:
    try:
        facts.report = read_report(run.env.get("ARENA_REPORT_DIR"))
    except ReportError as exc:
        facts.report_error = str(exc)


# How each fact a Need asks for is fetched into Facts: one entry per Fact (tests/test_bot_facts.py holds it).
FETCHERS: dict[Fact, Callable[[Run, Facts, tuple[Any, ...]], None]] = {
    Fact.PULL: _pull, Fact.PULLS_BY_HEAD: _pulls_by_head, Fact.FILES: _files, Fact.COMMENTS: _comments,
    Fact.PERMISSION: _permission, Fact.AUTHOR_OPEN_PRS: _author_open_prs, Fact.BASE_CHANGES: _base_changes,
    Fact.JOB: _job, Fact.REPORT: _report,
}


def execute(run: Run, actions: list[Action], facts: Facts) -> Pull | None:
    """Apply every action in order; returns the PR as it is now when it moved under a publication, else None."""
    for action in actions:
        if isinstance(action, Publish):
            outcome, pull = publish(run, action, facts)
            if outcome == "moved":
                return pull
        elif isinstance(action, Reply):
            body = action.body if action.to is None else f"{reply_marker(action.to)}\n{action.body}"
            writes.post_comment(run.client, action.pr, body, run.cfg.bot_login)
        elif isinstance(action, React):
            writes.repeat(partial(github_api.add_reaction, run.client, action.comment_id, action.content))
        elif isinstance(action, AcceptTraining):
            request = handoff.accept(run.client, action, run.cfg, run.launcher, run.log)
            if request is not None:
                run.handed_on.append(request)
        elif isinstance(action, AcceptCancel):
            request = handoff.accept_cancel(run.client, action, run.cfg, run.launcher, run.log)
            if request is not None:
                run.handed_on.append(request)
        elif isinstance(action, RerunChecks):
            writes.rerun(run.client, action.run_id)
        elif isinstance(action, Ignore):
            run.log(f"nothing to do: {action.reason}")
        else:
            raise TypeError(f"cannot execute {action!r}")
        if not isinstance(action, Ignore):
            run.log(f"done: {type(action).__name__}")
    return None


Published = Literal["written", "unchanged", "stale", "moved"]


def publish(run: Run, action: Publish, facts: Facts, strict: bool = True) -> tuple[Published, Pull]:
    """Upsert the sticky with its labels and status (see the module docstring). Returns (outcome, the PR as last
    read): outcome is written, unchanged, stale or moved. strict=False (explaining a failure) writes the sticky even
    when lowering the labels or the status fails."""
    if action.note:
        run.log(action.note, warning="arena: no verdict from this report")
    known = [p for p in [facts.pull, *(facts.pulls_by_head or [])] if p is not None and p.number == action.pr]
    pull = known[0] if known else github_api.get_pull(run.client, action.pr)
    state = action.state
    for _ in range(MAX_ROUNDS):
        if Fact.COMMENTS not in facts.fetched:
            gather(run, Need(Fact.COMMENTS, (action.pr,)), facts)
        chosen = sticky.plan(facts.comments or [], action.body, state, run.cfg.bot_login)
        if chosen.kind == "stale":
            if _fold(run, chosen, facts):
                _settle(run, action, pull, sticky.parse_state(chosen.fold or ""))
            run.log("sticky comment: stale (a later run already reported on this head)")
            return "stale", pull
        if chosen.kind == "unchanged" and not chosen.duplicates:
            if not _labels_settled(pull, state):  # a run that stopped after the sticky: finish its work
                _raise_trust(run, action, pull, status=LABEL_PASS not in pull.labels)
            run.log("sticky comment: unchanged")
            return "unchanged", pull
        try:
            _lower_trust(run, action, pull, chosen.kind != "unchanged")
        except github_api.ApiError as exc:
            if strict:
                raise
            run.log(f"could not lower the labels or status first: {exc}")
        try:
            for duplicate in chosen.duplicates:
                github_api.delete_comment(run.client, duplicate)
            if chosen.kind == "create":
                github_api.create_comment(run.client, action.pr, action.body)
            elif chosen.kind == "edit" and chosen.comment_id is not None:
                github_api.edit_comment(run.client, chosen.comment_id, action.body)
        except github_api.ApiError as exc:
            if not exc.ambiguous:
                raise
            run.log(f"sticky comment: {exc}; reading it back before writing again")
            facts.fetched.discard(Fact.COMMENTS)
            continue
        facts.pull = pull = github_api.get_pull(run.client, action.pr)
        if pull.state != "open" or not state.about(pull.head_sha, pull.base_ref):
            run.log(f"sticky comment: written, but the PR moved to {pull.head_sha[:7]} on {pull.base_ref}")
            return "moved", pull
        facts.fetched.discard(Fact.COMMENTS)
        if chosen.kind == "create" or chosen.duplicates:
            gather(run, Need(Fact.COMMENTS, (action.pr,)), facts)
            if len(sticky.stickies(facts.comments or [], run.cfg.bot_login)) > 1:
                run.log("sticky comment: another run created one too; folding into the oldest")
                continue
        _raise_trust(run, action, pull, status=True)
        run.log(f"sticky comment: {chosen.kind}" + (f", {len(chosen.duplicates)} duplicates removed"
                                                    if chosen.duplicates else ""))
        return "written", pull
    raise RuntimeError(f"the sticky comment did not settle in {MAX_ROUNDS} rounds")


def _fold(run: Run, chosen: sticky.Plan, facts: Facts) -> bool:
    """A stale run that finds duplicates (two runs created one each) leaves one sticky: the oldest, holding the
    newest body. Returns whether it folded."""
    if not chosen.duplicates or chosen.comment_id is None or chosen.fold is None:
        return False
    kept = next((c for c in facts.comments or [] if c.id == chosen.comment_id), None)
    if kept is not None and kept.body != chosen.fold:
        github_api.edit_comment(run.client, chosen.comment_id, chosen.fold)
    for duplicate in chosen.duplicates:
        github_api.delete_comment(run.client, duplicate)
    facts.fetched.discard(Fact.COMMENTS)
    run.log(f"sticky comment: folded {len(chosen.duplicates)} duplicate(s) into the oldest")
    return True


def _settle(run: Run, action: Publish, pull: Pull, state: StickyState | None) -> None:
    """After a fold: the labels and status of the sticky that was kept (this run may have lowered them first)."""
    if state is None or not state.about(pull.head_sha, pull.base_ref):
        return
    fresh = github_api.get_pull(run.client, action.pr)
    for label in ARENA_LABELS:
        if label in fresh.labels and label not in state.labels:
            github_api.remove_label(run.client, action.pr, label)
    writes.repeat(lambda: github_api.create_status(run.client, state.head_sha, state.status, STATUS_CONTEXT,
                                                   SETTLED.get(state.status, "Arena check"), action.target_url))
    missing = [label for label in state.labels if label not in fresh.labels]
    if missing:
        writes.repeat(lambda: github_api.add_labels(run.client, action.pr, missing))


def _labels_settled(pull: Pull, state: StickyState) -> bool:
    return {label for label in pull.labels if label in ARENA_LABELS} == set(state.labels)


def _lower_trust(run: Run, action: Publish, pull: Pull, status: bool) -> None:
    """Before the sticky: arena labels the outcome does not carry go, and a status that is not a success is set."""
    for label in ARENA_LABELS:
        if label in pull.labels and label not in action.state.labels:
            github_api.remove_label(run.client, action.pr, label)
    if status and action.state.status != "success":
        _status(run, action)


def _raise_trust(run: Run, action: Publish, pull: Pull, status: bool) -> None:
    """After the sticky, from the PR's fresh labels: stray arena labels go, a success status, then the labels."""
    for label in ARENA_LABELS:
        if label in pull.labels and label not in action.state.labels:
            github_api.remove_label(run.client, action.pr, label)
    missing = [label for label in action.state.labels if label not in pull.labels]
    if status and action.state.status == "success":
        _status(run, action)
    if missing:
        writes.repeat(lambda: github_api.add_labels(run.client, action.pr, missing))


def _status(run: Run, action: Publish) -> None:
    state = action.state
    writes.repeat(lambda: github_api.create_status(run.client, state.head_sha, state.status, STATUS_CONTEXT,
                                                   action.description, action.target_url))
