"""GitHub events to actions: pure decisions, no network.

`decide(event, payload, facts, config)` returns actions. When it needs something from the API (or the artifact) it
returns Need actions instead; the caller fetches those facts and asks again, so each event costs only the requests its
decision actually depends on. The base branch is part of every decision: only a PR against the repository's default
branch is validated with trusted code, and a verdict is about one (base, head). Handled:

- workflow_run completed: the verdict for the PR whose head is the run's head_sha from its head_repository (looked
  up through the API; the artifact never names the PR). Trusted only when GitHub marked the run a success, the PR
  targets the default branch (as does every open PR from that branch), its base did not change after the run
  started, and it touches exactly one environments/<name>/.
- pull_request / pull_request_target opened, reopened, synchronize, edited: the PR as it is now (whatever the event
  said): base branch, scope, the per-author cap on open PRs, and a pending sticky comment for its head.
- issue_comment created on a PR: `/arena ...` commands (bot.commands).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from bot import comment
from bot.actions import Action, Ignore, Need, Publish
from bot.commands import on_issue_comment
from bot.comment import Context, inline
from bot.facts import Config, Fact, Facts, Pull
from bot.sticky import LABEL_CAP, StickyState, Verdict
from taskpkg.changes import classify_changes
from taskpkg.check_report import PackageReport
from taskpkg.diagnostics import Severity

PR_EVENTS = ("pull_request", "pull_request_target")
PR_ACTIONS = ("opened", "reopened", "synchronize", "edited")
SHA = re.compile(r"^[0-9a-f]{40}$")
MAX_FILES = 3000  # GitHub lists no more files than this for a pull request
BASE_SETTLE_S = 10  # a run created this soon after a base change may have been set up for the old base
VERDICT_CONCLUSIONS = ("success", "failure")  # `arena check` fails the job when a package has errors


# ----- dispatch --------------------------------------------------------------------------------------------------
def decide(event: str, payload: dict[str, Any], facts: Facts, cfg: Config) -> list[Action]:
    """What to do about one event, given what is known so far."""
    if event == "workflow_run":
        return on_workflow_run(payload, facts, cfg)
    if event in PR_EVENTS:
        return on_pull_request(payload, facts, cfg)
    if event == "issue_comment":
        return on_issue_comment(payload, facts, cfg)
    return [Ignore(f"the {event!r} event is not handled")]


def refresh_event(pull: Pull) -> tuple[str, dict[str, Any]]:
    """A pull_request event that makes the bot decide again for the PR as it is now (after it moved under a run)."""
    return "pull_request_target", {"action": "synchronize", "pull_request": {"number": pull.number,
                                                                             "head": {"sha": pull.head_sha}}}


def scope(files: list[str]) -> tuple[str | None, list[str]]:
    """The one environment a PR changes, and the paths outside it (all paths when there is no single one)."""
    changes = classify_changes(files)
    outside = list(changes.outside)
    if changes.single_package and len(files) < MAX_FILES:
        return changes.packages[0], []
    if len(files) >= MAX_FILES:
        outside.append(f"(GitHub lists only {MAX_FILES} files; this pull request has more)")
    single = changes.packages[0] if len(changes.packages) == 1 else None
    return single, outside or sorted(files) or ["(no files changed)"]


# ----- workflow_run ----------------------------------------------------------------------------------------------
def on_workflow_run(payload: dict[str, Any], facts: Facts, cfg: Config) -> list[Action]:
    """A validation run finished: publish its verdict on the PR it checked, if that PR is still at the same head."""
    run = payload.get("workflow_run") or {}
    if payload.get("action") != "completed":
        return [Ignore(f"workflow_run {payload.get('action')!r}: only completed runs report")]
    if run.get("event") not in PR_EVENTS:
        return [Ignore(f"the run was triggered by {run.get('event')!r}, not by a pull request")]
    if run.get("conclusion") == "skipped":
        return [Ignore("the validation run was skipped (its job did not apply to this pull request)")]
    head_sha, head_repo = run.get("head_sha") or "", (run.get("head_repository") or {}).get("full_name")
    if not SHA.match(head_sha) or not head_repo or not run.get("head_branch"):
        return [Ignore("the run has no head commit, repository or branch")]
    if Fact.PULLS_BY_HEAD not in facts.fetched:
        return [Need(Fact.PULLS_BY_HEAD, (head_repo, run["head_branch"]))]
    candidates = sorted(facts.pulls_by_head or [], key=lambda p: (p.head_sha != head_sha, not p.on_default_branch))
    pull = candidates[0] if candidates else None
    if pull is None:
        return [Ignore(f"no open pull request comes from {head_repo}:{run['head_branch']}")]
    if pull.head_sha != head_sha:
        return [Ignore(f"stale run: PR #{pull.number} moved to {pull.head_sha[:7]}, the run checked {head_sha[:7]}")]
    missing: list[Action] = [Need(w, (pull.number,) if w != Fact.REPORT else ())
                             for w in (Fact.FILES, Fact.BASE_CHANGES, Fact.REPORT) if w not in facts.fetched]
    if missing:
        return missing
    state = (int(run.get("id") or 0), int(run.get("run_attempt") or 1))
    return [_assess(pull, candidates, run, facts, cfg, state)]


def _assess(pull: Pull, candidates: list[Pull], run: dict[str, Any], facts: Facts, cfg: Config,
            state: tuple[int, int]) -> Publish:
    """The publication for a head whose validation finished: base, scope, cap, an untrusted run, or the verdict."""
    name, outside = scope(facts.files or [])
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, name, cfg.run_link(state[0]))
    others = [p for p in candidates if p.number != pull.number and not p.on_default_branch]
    if not pull.on_default_branch or others:
        return _base_notice(pull, ctx, state, others[0] if others else None)
    if outside:
        return _scope_notice(pull, ctx, state, name, outside)
    if LABEL_CAP in pull.labels:
        return _cap_notice(pull, ctx, state, cfg)
    untrusted = _untrusted_run(run, facts.base_changes or [])
    if untrusted:
        return _error_notice(pull, ctx, state, untrusted, "this validation run cannot give a verdict")
    package = _package(facts, name)
    if isinstance(package, str):
        return _error_notice(pull, ctx, state, package)
    passed = package.passed
    if passed and run.get("conclusion") != "success":
        return _error_notice(pull, ctx, state, f"the report says pass, but GitHub marked the validation run "
                             f"{inline(str(run.get('conclusion')), 40)}; only a successful run can pass",
                             "this validation run cannot give a verdict")
    verdict = StickyState(pull.head_sha, pull.base_ref, Verdict.PASS if passed else Verdict.FAIL, name, *state,
                          package.digest)
    errors, warnings = package.count(Severity.ERROR), package.count(Severity.WARNING)
    description = (f"Arena check passed ({warnings} warnings)" if passed
                   else f"Arena check failed: {errors} errors, {warnings} warnings")
    assert facts.report is not None  # _package found the package in it
    return Publish(pull.number, comment.verdict_body(verdict, ctx, facts.report, package), verdict, description,
                   ctx.run_url)


def _untrusted_run(run: dict[str, Any], base_changes: list[str]) -> str | None:
    """Why GitHub's own record of the run forbids a verdict from it, or None."""
    conclusion = str(run.get("conclusion"))
    if conclusion not in VERDICT_CONCLUSIONS:
        return f"GitHub marked the validation run {inline(conclusion, 40)}, which is no verdict"
    created = _time(run.get("created_at"))
    changed = _time(base_changes[-1]) if base_changes else None  # unreadable: no verdict, as if it were recent
    if base_changes and (created is None or changed is None or created < changed + timedelta(seconds=BASE_SETTLE_S)):
        return ("the pull request's base branch changed after this run was set up, so it may have checked the "
                "change against another branch; push a commit (or close and reopen the pull request) to validate "
                "it again")
    return None


def _time(text: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _package(facts: Facts, name: str | None) -> PackageReport | str:
    """The report's entry for environments/<name>, or why there is none."""
    if facts.report_error or facts.report is None:
        return inline(facts.report_error or "no report was found")
    wanted = f"environments/{name}"
    packages = facts.report.packages
    found = [p for p in packages if PurePosixPath(p.path).as_posix() == wanted]
    if len(packages) != 1 or not found:
        paths = ", ".join(inline(p.path, 80) for p in packages[:5]) or "nothing"
        return f"the report describes {paths}, not `{wanted}` alone"
    return found[0]


def _notice(pull: Pull, ctx: Context, state: StickyState, heading: str, paragraphs: list[str], description: str,
            note: str | None = None) -> Publish:
    return Publish(pull.number, comment.notice_body(state, ctx, heading, paragraphs), state, description[:140],
                   ctx.run_url, note)


def _base_notice(pull: Pull, ctx: Context, run: tuple[int, int], other: Pull | None) -> Publish:
    state = StickyState(pull.head_sha, pull.base_ref, Verdict.SCOPE, ctx.package, *run)
    default = f"`{inline(pull.default_branch, 100)}`"
    if other is None:
        why = (f"This pull request targets `{inline(pull.base_ref, 100)}`, not the default branch {default}. The "
               "arena validates and trains only pull requests against the default branch, whose checks are the "
               f"trusted ones. Change the base branch to {default}, then push a commit to validate it.")
    else:
        why = (f"Pull request #{other.number} comes from the same branch but targets `{inline(other.base_ref, 100)}`, "
               "so a validation run from this branch cannot be told apart from one checked against another branch. "
               "Close that pull request (or push this change from a branch of its own), then push a commit.")
    return _notice(pull, ctx, state, "🛑 Needs a maintainer: not against the default branch", [why],
                   "Needs a maintainer: not against the default branch", note=why if run[0] else None)


def _scope_notice(pull: Pull, ctx: Context, run: tuple[int, int], name: str | None, outside: list[str]) -> Publish:
    state = StickyState(pull.head_sha, pull.base_ref, Verdict.SCOPE, name, *run)
    listed = "\n".join(f"- {inline(path, 200)}" for path in outside[:20])
    if len(outside) > 20:
        listed += f"\n- … and {len(outside) - 20} more"
    what = f"`environments/{name}/` and also" if name else "no single `environments/<name>/` folder but"
    return _notice(pull, ctx, state, "🛑 Needs a maintainer: this PR is not one environment", [
        f"An arena pull request adds or changes exactly one folder, `environments/<name>/`. This one changes {what}:",
        listed,
        "The arena cannot give such a change a trusted verdict, so a maintainer will review it by hand. If the other "
        "changes were not meant to be here, remove them from the branch and push: the check runs again."],
        "Needs a maintainer: changes outside one environment",
        note=f"no verdict: the pull request changes {len(outside)} paths outside one environment" if run[0] else None)


def _cap_notice(pull: Pull, ctx: Context, run: tuple[int, int], cfg: Config) -> Publish:
    state = StickyState(pull.head_sha, pull.base_ref, Verdict.CAP, ctx.package, *run)
    return _notice(pull, ctx, state, "⏸ Waiting: too many open pull requests", [
        f"The arena checks at most {cfg.max_open_prs_per_author} open pull requests per contributor at a time, and "
        f"{inline(pull.author, 40)} has more. Finish or close another one, then push to this branch (or close and "
        "reopen this pull request) and it will be checked."], "Too many open pull requests by this author",
        note="no verdict: the author is over the cap on open pull requests" if run[0] else None)


def _error_notice(pull: Pull, ctx: Context, run: tuple[int, int], reason: str,
                  heading: str = "the validation report could not be read") -> Publish:
    state = StickyState(pull.head_sha, pull.base_ref, Verdict.ERROR, ctx.package, *run)
    where = f"The [Actions run]({ctx.run_url}) has the details" if ctx.run_url else "The Actions run has the details"
    return _notice(pull, ctx, state, f"⚠️ No verdict: {heading}", [
        f"Reason: {reason}.", f"This is not a verdict on your environment. {where}; a maintainer can re-run the "
        "validation with `/arena check`.", ctx.reproduce()], f"No verdict: {heading}", note=f"{heading}: {reason}")


def failure_notice(pull: Pull, cfg: Config, run: tuple[int, int], reason: str) -> Publish:
    """What to publish when the bot itself failed on a PR event: an explanation, never silence, never green."""
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, None, cfg.run_url)
    return _error_notice(pull, ctx, run, inline(reason), "the arena bot failed")


# ----- pull_request ----------------------------------------------------------------------------------------------
def on_pull_request(payload: dict[str, Any], facts: Facts, cfg: Config) -> list[Action]:
    """A PR opened, moved or was edited: decide for the PR as it is now (base, scope, cap), marking its head pending."""
    action, pr = payload.get("action"), payload.get("pull_request") or {}
    if action not in PR_ACTIONS:
        return [Ignore(f"pull_request {action!r} needs nothing")]
    if Fact.PULL not in facts.fetched:
        return [Need(Fact.PULL, (int(pr["number"]),))]
    pull = facts.pull
    if pull is None or pull.state != "open":
        return [Ignore("the pull request is not open")]
    if Fact.FILES not in facts.fetched:
        return [Need(Fact.FILES, (pull.number,))]
    name, outside = scope(facts.files or [])
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, name, cfg.run_url)
    if not pull.on_default_branch:
        return [_base_notice(pull, ctx, (0, 0), None)]
    if outside:
        return [_scope_notice(pull, ctx, (0, 0), name, outside)]
    if cfg.max_open_prs_per_author > 0:
        if Fact.AUTHOR_OPEN_PRS not in facts.fetched:
            return [Need(Fact.AUTHOR_OPEN_PRS, (pull.author,))]
        if (facts.author_open_prs or 0) > cfg.max_open_prs_per_author:
            return [_cap_notice(pull, ctx, (0, 0), cfg)]
    state = StickyState(pull.head_sha, pull.base_ref, Verdict.PENDING, name)
    retargeted = action == "edited" and "base" in (payload.get("changes") or {})
    return [Publish(pull.number, comment.pending_body(state, ctx, retargeted), state, "Arena check running"
                    if not retargeted else "Waiting for a push to validate against the new base", cfg.run_url)]
