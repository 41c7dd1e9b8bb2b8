"""GitHub events to actions: pure decisions, no network.

`decide(event, payload, facts, config)` returns actions. When it needs something from the API (or the artifact) it
returns Need actions instead; the caller fetches those facts and asks again, so each event costs only the requests its
decision actually depends on. Handled:

- workflow_run completed: the verdict for the PR whose head is the run's head_sha from its head_repository (looked
  up through the API; the artifact never names the PR), trusted only when the PR touches one environments/<name>/.
- pull_request / pull_request_target opened, reopened, synchronize: scope (one environment or a maintainer), the
  per-author cap on open PRs, and a pending sticky comment for the new head.
- issue_comment created on a PR: `/arena help|check|train|cancel`; authorization only through the collaborator
  permission API (write, maintain, admin). Comments by bots, edited comments and comments without a command are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot import comment
from bot.actions import (
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
from bot.comment import Context, inline
from bot.model import Config, Facts, Pull
from bot.sticky import StickyState, current_state
from taskpkg.changes import classify_changes

LABEL_PASS, LABEL_FAIL = "arena: checks passed", "arena: checks failed"
LABEL_SCOPE, LABEL_CAP = "arena: needs-maintainer", "arena: too-many-open-prs"
ARENA_LABELS = (LABEL_PASS, LABEL_FAIL, LABEL_SCOPE, LABEL_CAP)
WRITE_PERMISSIONS = ("admin", "maintain", "write")
PR_EVENTS = ("pull_request", "pull_request_target")
PR_ACTIONS = ("opened", "reopened", "synchronize")
PRIVILEGED = ("check", "train", "cancel")
SHA = re.compile(r"^[0-9a-f]{40}$")
MAX_FILES = 3000  # GitHub lists no more files than this for a pull request


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...]


# ----- dispatch --------------------------------------------------------------------------------------------------
def decide(event: str, payload: dict, facts: Facts, cfg: Config) -> list[Action]:
    """What to do about one event, given what is known so far."""
    if event == "workflow_run":
        return on_workflow_run(payload, facts, cfg)
    if event in PR_EVENTS:
        return on_pull_request(payload, facts, cfg)
    if event == "issue_comment":
        return on_issue_comment(payload, facts, cfg)
    return [Ignore(f"the {event!r} event is not handled")]


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
def on_workflow_run(payload: dict, facts: Facts, cfg: Config) -> list[Action]:
    """A validation run finished: publish its verdict on the PR it checked, if that PR's head is still the same."""
    run = payload.get("workflow_run") or {}
    if payload.get("action") != "completed":
        return [Ignore(f"workflow_run {payload.get('action')!r}: only completed runs report")]
    if run.get("event") not in PR_EVENTS:
        return [Ignore(f"the run was triggered by {run.get('event')!r}, not by a pull request")]
    head_sha, head_repo = run.get("head_sha") or "", (run.get("head_repository") or {}).get("full_name")
    if not SHA.match(head_sha) or not head_repo or not run.get("head_branch"):
        return [Ignore("the run has no head commit, repository or branch")]
    if "pull" not in facts.fetched:
        return [Need("pull_by_head", (head_repo, run["head_branch"], head_sha))]
    pull = facts.pull
    if pull is None:
        return [Ignore(f"no open pull request comes from {head_repo}:{run['head_branch']}")]
    if pull.head_sha != head_sha:
        return [Ignore(f"stale run: PR #{pull.number} moved to {pull.head_sha[:7]}, the run checked {head_sha[:7]}")]
    missing = [Need(w, (pull.number,) if w == "files" else ()) for w in ("files", "report") if w not in facts.fetched]
    if missing:
        return missing
    state = (int(run.get("id") or 0), int(run.get("run_attempt") or 1))
    return [_assess(pull, facts, cfg, state, cfg.run_link(state[0]))]


def _assess(pull: Pull, facts: Facts, cfg: Config, run: tuple[int, int], run_url: str | None) -> Publish:
    """The publication for a head whose validation finished: scope, cap, unreadable report, or the verdict."""
    name, outside = scope(facts.files or [])
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, name, run_url)
    if outside:
        return _scope_notice(pull, ctx, run, name, outside)
    if LABEL_CAP in pull.labels:
        return _cap_notice(pull, ctx, run, cfg)
    package = _package(facts, name)
    if isinstance(package, str):
        return _error_notice(pull, ctx, run, package)
    outcome = "pass" if package["verdict"] == "pass" else "fail"
    state = StickyState(pull.head_sha, outcome, *run)
    counts = package["counts"]
    description = (f"Arena check passed ({counts['warning']} warnings)" if outcome == "pass"
                   else f"Arena check failed: {counts['error']} errors, {counts['warning']} warnings")
    return _publish(pull, state, comment.verdict_body(state, ctx, facts.report or {}, package),
                    (LABEL_PASS if outcome == "pass" else LABEL_FAIL,),
                    SetStatus(pull.head_sha, "success" if outcome == "pass" else "failure", description, run_url))


def _package(facts: Facts, name: str | None) -> dict | str:
    """The report's entry for environments/<name>, or why there is none."""
    if facts.report_error or facts.report is None:
        return inline(facts.report_error or "no report was found")
    wanted = f"environments/{name}"
    packages = facts.report["packages"]
    found = [p for p in packages if PurePosixPath(p["path"]).as_posix() == wanted]
    if len(packages) != 1 or not found:
        paths = ", ".join(inline(p["path"], 80) for p in packages[:5]) or "nothing"
        return f"the report describes {paths}, not `{wanted}` alone"
    return found[0]


def _publish(pull: Pull, state: StickyState, body: str, labels: tuple[str, ...], status: SetStatus) -> Publish:
    add = tuple(label for label in labels if label not in pull.labels)
    remove = tuple(label for label in ARENA_LABELS if label in pull.labels and label not in labels)
    return Publish(UpsertStickyComment(pull.number, body, state), SetLabels(pull.number, add, remove), status)


def _scope_notice(pull: Pull, ctx: Context, run: tuple[int, int], name: str | None, outside: list[str]) -> Publish:
    state = StickyState(pull.head_sha, "notice", *run)
    listed = "\n".join(f"- {inline(path, 200)}" for path in outside[:20])
    if len(outside) > 20:
        listed += f"\n- … and {len(outside) - 20} more"
    what = f"`environments/{name}/` and also" if name else "no single `environments/<name>/` folder but"
    body = comment.notice_body(state, ctx, "🛑 Needs a maintainer: this PR is not one environment", [
        f"An arena pull request adds or changes exactly one folder, `environments/<name>/`. This one changes {what}:",
        listed,
        "The arena cannot give such a change a trusted verdict, so a maintainer will review it by hand. If the other "
        "changes were not meant to be here, remove them from the branch and push: the check runs again."])
    return _publish(pull, state, body, (LABEL_SCOPE,),
                    SetStatus(pull.head_sha, "failure", "Needs a maintainer: changes outside one environment",
                              ctx.run_url))


def _cap_notice(pull: Pull, ctx: Context, run: tuple[int, int], cfg: Config) -> Publish:
    state = StickyState(pull.head_sha, "notice", *run)
    body = comment.notice_body(state, ctx, "⏸ Waiting: too many open pull requests", [
        f"The arena checks at most {cfg.max_open_prs_per_author} open pull requests per contributor at a time, and "
        f"{inline(pull.author, 40)} has more. Finish or close another one, then push to this branch (or close and "
        "reopen this pull request) and it will be checked."])
    return _publish(pull, state, body, (LABEL_CAP,),
                    SetStatus(pull.head_sha, "failure", "Too many open pull requests by this author", ctx.run_url))


def _error_notice(pull: Pull, ctx: Context, run: tuple[int, int], reason: str,
                  heading: str = "the validation report could not be read") -> Publish:
    state = StickyState(pull.head_sha, "error", *run)
    where = f"The [Actions run]({ctx.run_url}) has the details" if ctx.run_url else "The Actions run has the details"
    body = comment.notice_body(state, ctx, f"⚠️ No verdict: {heading}", [
        f"Reason: {reason}.", f"This is not a verdict on your environment. {where}; a maintainer can re-run the "
        "validation with `/arena check`.", ctx.reproduce()])
    return _publish(pull, state, body, (), SetStatus(pull.head_sha, "error", f"No verdict: {heading}"[:140],
                                                     ctx.run_url))


def failure_notice(pull: Pull, cfg: Config, run: tuple[int, int], reason: str) -> Publish:
    """What to publish when the bot itself failed on a PR event: an explanation, never silence."""
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, None, cfg.run_url)
    return _error_notice(pull, ctx, run, inline(reason), "the arena bot failed")


# ----- pull_request ----------------------------------------------------------------------------------------------
def on_pull_request(payload: dict, facts: Facts, cfg: Config) -> list[Action]:
    """A PR opened or moved: check its scope and its author's cap, and mark the new head as being checked."""
    action, pr = payload.get("action"), payload.get("pull_request") or {}
    if action not in PR_ACTIONS:
        return [Ignore(f"pull_request {action!r} needs nothing")]
    if "pull" not in facts.fetched:
        return [Need("pull", (int(pr["number"]),))]
    pull = facts.pull
    if pull is None or pull.state != "open":
        return [Ignore("the pull request is not open")]
    if pull.head_sha != (pr.get("head") or {}).get("sha"):
        return [Ignore(f"stale event: PR #{pull.number} has moved on to {pull.head_sha[:7]}")]
    if "files" not in facts.fetched:
        return [Need("files", (pull.number,))]
    name, outside = scope(facts.files or [])
    ctx = Context(cfg.server_url, cfg.repo, pull.head_sha, pull.head_label, name, cfg.run_url)
    if outside:
        return [_scope_notice(pull, ctx, (0, 0), name, outside)]
    if cfg.max_open_prs_per_author > 0:
        if "author_open_prs" not in facts.fetched:
            return [Need("author_open_prs", (pull.author,))]
        if (facts.author_open_prs or 0) > cfg.max_open_prs_per_author:
            return [_cap_notice(pull, ctx, (0, 0), cfg)]
    state = StickyState(pull.head_sha, "pending")
    return [_publish(pull, state, comment.pending_body(state, ctx), (),
                     SetStatus(pull.head_sha, "pending", "Arena check running", cfg.run_url))]


# ----- issue_comment ---------------------------------------------------------------------------------------------
def parse_command(body: str) -> Command | None:
    """The first `/arena ...` line outside code fences and quotes, or None."""
    fenced = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (stripped == "/arena" or stripped.startswith("/arena ")):
            words = stripped.split()[1:]
            return Command(words[0].lower() if words else "help", tuple(words[1:]))
    return None


def on_issue_comment(payload: dict, facts: Facts, cfg: Config) -> list[Action]:
    """A slash command on a PR."""
    note = payload.get("comment") or {}
    user, issue = note.get("user") or {}, payload.get("issue") or {}
    login = str(user.get("login") or "")
    if payload.get("action") != "created":
        return [Ignore(f"comment {payload.get('action')!r}: only new comments carry commands")]
    if user.get("type") == "Bot" or login.endswith("[bot]"):
        return [Ignore("comment by a bot")]
    if "pull_request" not in issue:
        return [Ignore("comment on an issue, not a pull request")]
    command = parse_command(str(note.get("body") or ""))
    if command is None:
        return [Ignore("no /arena command")]
    number = int(issue["number"])
    if command.name == "help":
        return [Reply(number, comment.help_body())]
    if command.name not in PRIVILEGED:
        return [Reply(number, comment.unknown_body(command.name))]
    if "permission" not in facts.fetched:
        return [Need("permission", (login,))]
    if facts.permission not in WRITE_PERMISSIONS:
        return [Refuse(number, login, command.name, "only maintainers (write, maintain or admin access to this "
                       "repository) can do that. A maintainer will look at this pull request; thank you!")]
    if command.name == "cancel":
        return [React(note["id"], "+1"), Reply(number, "Nothing to cancel: training launch is not configured for "
                                               "this arena yet, so no training run exists for this pull request.")]
    missing = [Need(w, (number,)) for w in ("pull", "comments") if w not in facts.fetched]
    if missing:
        return missing
    return _privileged(command, number, int(note["id"]), login, facts, cfg)


def _privileged(command: Command, number: int, comment_id: int, login: str, facts: Facts,
                cfg: Config) -> list[Action]:
    pull = facts.pull
    if pull is None or pull.state != "open":
        return [Refuse(number, login, command.name, "the pull request is not open.")]
    verdict = current_state(facts.comments or [], cfg.bot_login)
    head = pull.head_sha
    if command.name == "check":
        if verdict is None or verdict.head_sha != head or not verdict.run_id:
            return [Refuse(number, login, "check", f"no validation run has reported on the head commit {head[:7]} "
                           "yet. It runs on every push; the arena's comment on this pull request will show its "
                           "verdict.")]
        return [React(comment_id, "+1"), RerunChecks(verdict.run_id)]
    wanted = command.args[0].lower() if command.args else None
    if wanted is not None and not re.fullmatch(r"[0-9a-f]{7,40}", wanted):
        return [Refuse(number, login, "train", f"“{inline(wanted, 40)}” is not a commit SHA.")]
    if wanted is not None and not head.startswith(wanted):
        return [Refuse(number, login, "train", f"the head moved: you asked for {wanted[:12]}, the head is now "
                       f"{head[:7]}. Check the verdict on {head[:7]} and ask again.")]
    if verdict is None or verdict.outcome not in ("pass", "fail"):
        return [Refuse(number, login, "train", f"there is no verdict on the head commit {head[:7]} yet.")]
    if verdict.head_sha != head:
        return [Refuse(number, login, "train", f"the head moved since the verdict: the verdict is for "
                       f"{verdict.head_sha[:7]}, the head is now {head[:7]}. Wait for the verdict on {head[:7]} and "
                       "ask again.")]
    if verdict.outcome != "pass":
        return [Refuse(number, login, "train", f"the verdict on {head[:7]} is a fail; training needs a pass.")]
    return [React(comment_id, "+1"), LaunchTraining(number, head, login)]
