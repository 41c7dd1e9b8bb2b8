"""The bot as GitHub Actions runs it: `python -m bot.main`, one event per process.

Environment (set by Actions unless noted):
  GITHUB_EVENT_NAME, GITHUB_EVENT_PATH   the event and its webhook payload
  GITHUB_REPOSITORY, GITHUB_API_URL      the repository and the API (default https://api.github.com)
  GITHUB_SERVER_URL, GITHUB_RUN_ID       for links (default https://github.com)
  GITHUB_TOKEN                           or a GitHub App: ARENA_APP_ID, ARENA_APP_PRIVATE_KEY, ARENA_APP_INSTALLATION_ID
  ARENA_REPORT_DIR                       workflow_run only: where the report artifact was downloaded
  ARENA_MAX_OPEN_PRS_PER_AUTHOR          optional, default 3; 0 turns the cap off
  ARENA_BOT_LOGIN                        required: the bot's own login (github-actions[bot] with GITHUB_TOKEN); only
                                         comments by this login count as the bot's (its verdicts, replies, requests)
  ARENA_LAUNCH_HANDOFF, GITHUB_OUTPUT    commands workflow: hand an accepted /arena train to the launch job
  ARENA_LAUNCH_REQUEST                   `arena bot confirm-launch` / `launch` (the launch job): the request
  ARENA_LAUNCH_BACKEND                   `launch`, `poll-jobs`: skypilot (default; launch/skypilot_task.py lists
                                         its ARENA_SKYPILOT_* settings) or local (ARENA_SUITE, ARENA_LAUNCH_DIR,
                                         ARENA_LOCAL_CHECKOUT: the checkout holding the PR's environments/)
  ARENA_STATE_BRANCH                     the branch of job records and results (default arena-state)
  ARENA_RECIPE, ARENA_SCORE_PROFILE, ARENA_SCORE_BACKEND, ARENA_MAX_CONCURRENT_JOBS, ARENA_GPU_HOURS_PER_PERIOD,
  ARENA_BUDGET_PERIOD_DAYS, ARENA_JOB_GPU_HOURS   what a launched job runs, and the budget (launch/budget.py)

Exit codes:
  0  the event was handled: acted on, ignored as not ours, or failed with an explanation posted on the PR
     (confirm-launch: the request is confirmed by the bot's accepted reply on the PR; launch: the job started, was
     found running or done, or the refusal was written on the PR; poll-jobs: every job was brought up to date)
  1  the bot failed and could not post an explanation (GitHub refused or was unreachable); see the ::error lines
     (confirm-launch, launch: the PR was not told about this request, so nothing was launched; poll-jobs:
     some job could not be brought up to date)
  2  bad invocation: a required variable is missing or the event file cannot be read
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bot import github_api, handoff, jobs
from bot.actions import Action, Need, Reply
from bot.comment import inline, neutralise
from bot.events import SHA, decide, failure_notice, refresh_event
from bot.execute import Run, execute, gather, publish
from bot.facts import Config, Fact, Facts, Pull
from bot.markers import reply_marker
from bot.state_branch import BranchStore, branch_name
from validators.render_github import escape_data

if TYPE_CHECKING:
    from launch.backends import Backend

MAX_ROUNDS = 6  # decide → fetch → decide; no handler needs more rounds than this
MAX_REFRESHES = 2  # the PR moved under a publication: decide again for it as it is now, at most this often


def log(message: str, warning: str | None = None) -> None:
    """One log line (an annotation when `warning` gives its title); untrusted text cannot start a workflow command
    or hide behind invisible characters."""
    text = escape_data(neutralise(message))
    print(f"::warning title={escape_data(warning)}::{text}" if warning else f"arena-bot: {text}", flush=True)


def error(message: str) -> None:
    """An ::error annotation on the bot's run."""
    print(f"::error title=arena bot::{escape_data(neutralise(message))}", flush=True)


def config(env: Mapping[str, str]) -> Config:
    """The bot's configuration from the environment."""
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo, run_id = env["GITHUB_REPOSITORY"], env.get("GITHUB_RUN_ID")
    login = env.get("ARENA_BOT_LOGIN") or ""
    if not login:
        raise github_api.ConfigError("set ARENA_BOT_LOGIN to the bot's own login (github-actions[bot] with "
                                     "GITHUB_TOKEN): only its comments are trusted")
    return Config(repo=repo, bot_login=login, server_url=server,
                  run_url=f"{server}/{repo}/actions/runs/{run_id}" if run_id else None,
                  max_open_prs_per_author=int(env.get("ARENA_MAX_OPEN_PRS_PER_AUTHOR") or 3))


def run(env: Mapping[str, str], launcher: handoff.Launcher | None = None) -> int:
    """Handle the event described by env; returns the exit code."""
    try:
        event = env["GITHUB_EVENT_NAME"]
        with open(env["GITHUB_EVENT_PATH"], encoding="utf-8") as handle:
            payload = json.load(handle)
        cfg = config(env)
        client = github_api.connect(env)
    except (KeyError, OSError, ValueError, github_api.ConfigError) as exc:
        error(f"bad invocation: {type(exc).__name__}: {exc}")
        return 2
    bot = Run(client, cfg, log, launcher, env)
    facts = Facts()
    try:
        for _ in range(MAX_REFRESHES + 1):
            moved = execute(bot, settle(bot, event, payload, facts), facts)
            if moved is None:
                return 0
            event, payload = refresh_event(moved)
            facts = Facts(pull=moved, fetched={Fact.PULL})
        raise RuntimeError(f"the pull request kept moving while the bot wrote ({MAX_REFRESHES} refreshes)")
    except Exception as exc:  # a bot failure must still leave an explanation on the PR
        error(f"{type(exc).__name__}: {exc}")
        return 0 if explain(bot, event, payload, facts, exc) else 1


def settle(bot: Run, event: str, payload: dict[str, Any], facts: Facts) -> list[Action]:
    """Decide, fetching the facts the decision asks for, until it asks for none."""
    for _ in range(MAX_ROUNDS):
        actions = decide(event, payload, facts, bot.cfg)
        needs = [a for a in actions if isinstance(a, Need)]
        if not needs:
            return actions
        for need in needs:
            gather(bot, need, facts)
    raise RuntimeError("the decision kept asking for facts")


def explain(bot: Run, event: str, payload: dict[str, Any], facts: Facts, exc: Exception) -> bool:
    """Post what went wrong on the PR the event is about (never leaving it green); False when that is impossible."""
    reason, cfg = f"{type(exc).__name__}: {exc}", bot.cfg
    try:
        if event == "issue_comment":
            details = f" Details: [Actions run]({cfg.run_url})." if cfg.run_url else ""
            started = ("the launch job was handed the request it accepted" if bot.handed_on
                       else "nothing was started")
            note = f"The arena bot failed while handling this command ({inline(reason)}); {started}.{details}"
            body = f"{reply_marker(int(payload['comment']['id']), 'failure')}\n{note}"
            execute(bot, [Reply(int(payload["issue"]["number"]), body)], facts)
            return True
        pull = _pull_of(event, payload, facts)
        if pull is None or not SHA.match(pull.head_sha):
            error("could not post an explanation either: the pull request could not be read")
            return False
        run = payload.get("workflow_run") or {}
        state = (int(run.get("id") or 0), int(run.get("run_attempt") or 1)) if run else (0, 0)
        facts.fetched.discard(Fact.COMMENTS)
        publish(bot, failure_notice(pull, cfg, state, reason), facts, strict=False)
        return True
    except Exception as second:  # GitHub itself is failing: the ::error line is all that is left
        error(f"could not post an explanation either: {type(second).__name__}: {second}")
        return False


def _pull_of(event: str, payload: dict[str, Any], facts: Facts) -> Pull | None:
    """The PR an event is about, as best known: fetched, found by the run's head, or as the payload says."""
    if facts.pull is not None:
        return facts.pull
    head_sha = (payload.get("workflow_run") or {}).get("head_sha")
    found = [p for p in facts.pulls_by_head or [] if p.head_sha == head_sha]
    if found:
        return found[0]
    pr = payload.get("pull_request") if event in ("pull_request", "pull_request_target") else None
    if not pr:
        return None
    head, base = pr.get("head") or {}, pr.get("base") or {}
    return Pull(number=int(pr["number"]), state=pr.get("state", "open"), title=str(pr.get("title") or ""),
                author=str((pr.get("user") or {}).get("login") or ""), head_sha=str(head.get("sha") or ""),
                head_ref=str(head.get("ref") or ""), head_repo=(head.get("repo") or {}).get("full_name"),
                base_ref=str(base.get("ref") or ""),
                default_branch=str((payload.get("repository") or {}).get("default_branch") or ""))


def confirm_launch(env: Mapping[str, str]) -> int:
    """The launch job's gate: 0 when ARENA_LAUNCH_REQUEST is confirmed by the bot's accepted reply on the PR."""
    try:
        request = handoff.LaunchRequest.from_json(env["ARENA_LAUNCH_REQUEST"])
        cfg = config(env)
        client = github_api.connect(env)
    except (KeyError, ValueError, handoff.HandoffError, github_api.ConfigError) as exc:
        error(f"bad invocation: {type(exc).__name__}: {exc}")
        return 2
    try:
        handoff.confirm(client, request, cfg.bot_login, cfg.repo)
    except (handoff.HandoffError, github_api.ApiError) as exc:
        error(f"launch refused: {exc}")
        return 1
    log(f"launch confirmed by comment {request.reply_comment} on PR #{request.pr}: {request.to_json()}")
    return 0


def backend_from_env(env: Mapping[str, str]) -> tuple[Backend, Path | None]:
    """The launch backend the configuration names, and (local backend) where the PR's environments are."""
    from launch.backends.local import LocalBackend
    from launch.skypilot_task import SkyPilotConfig

    name = (env.get("ARENA_LAUNCH_BACKEND") or "skypilot").strip()
    if name == "local":
        checkout = Path(env.get("ARENA_LOCAL_CHECKOUT") or ".")
        root = Path(env["ARENA_LAUNCH_DIR"]) if env.get("ARENA_LAUNCH_DIR") else None
        return LocalBackend(Path(env.get("ARENA_SUITE") or "suites/sample"), root), checkout
    if name != "skypilot":
        raise github_api.ConfigError(f"ARENA_LAUNCH_BACKEND={name!r}: skypilot or local")
    from launch.backends.skypilot import SkyPilotBackend

    return SkyPilotBackend(SkyPilotConfig.from_env(env), dict(env)), None


def launch_job(env: Mapping[str, str]) -> int:
    """The launch job: confirm the request against the PR, then start (or cancel) its job and say so there."""
    from launch.backends import BackendError
    from launch.budget import Budget, BudgetConfigError
    from launch.skypilot_task import SkyPilotConfigError
    from launch.spec import SpecError

    code = confirm_launch(env)
    if code != 0:
        return code
    request = handoff.LaunchRequest.from_json(env["ARENA_LAUNCH_REQUEST"])
    try:
        client = github_api.connect(env)
        backend, checkout = backend_from_env(env)
        store = BranchStore(client, branch_name(env))
        if request.action == "cancel":
            jobs.cancel(client, request, backend, store, log)
            return 0
        environment = checkout / "environments" / request.environment if checkout else None
        jobs.launch(client, request, backend, store, Budget.from_env(env), env, log,
                    environment)
    except (github_api.ConfigError, SkyPilotConfigError, BudgetConfigError, SpecError) as exc:
        error(f"launch not configured: {exc}")
        _tell(env, request, f"The launch job is not configured ({inline(str(exc), 300)}); nothing was started.")
        return 1
    except (BackendError, github_api.ApiError) as exc:
        error(f"launch failed: {type(exc).__name__}: {exc}")
        _tell(env, request, f"The launch failed ({inline(str(exc), 300)}); nothing was started.")
        return 1
    return 0


def _tell(env: Mapping[str, str], request: handoff.LaunchRequest, text: str) -> None:
    """Edit the accepted reply to say what went wrong (best effort: the ::error line stands either way)."""
    try:
        github_api.edit_comment(github_api.connect(env), request.reply_comment,
                                f"{reply_marker(request.command_comment)}\n{text}")
    except (github_api.ApiError, github_api.ConfigError) as exc:
        error(f"could not tell the PR either: {exc}")


def poll_jobs(env: Mapping[str, str]) -> int:
    """The jobs workflow: bring every active job up to date, publish finished results, and start the pages
    workflow when results were committed (`published=true` in GITHUB_OUTPUT too)."""
    from launch.backends import BackendError
    from launch.skypilot_task import SkyPilotConfigError

    try:
        cfg = config(env)
        client = github_api.connect(env)
        backend, _ = backend_from_env(env)
    except (KeyError, github_api.ConfigError, SkyPilotConfigError) as exc:
        error(f"bad invocation: {type(exc).__name__}: {exc}")
        return 2
    try:
        summary = jobs.poll(client, cfg, backend, BranchStore(client, branch_name(env)), log)
    except (BackendError, github_api.ApiError) as exc:
        error(f"polling failed: {type(exc).__name__}: {exc}")
        return 1
    for problem in summary.problems:
        log(problem, warning="arena jobs")
    if summary.published:
        try:
            github_api.dispatch_workflow(client, "pages.yml")  # the site shows the new results
        except github_api.ApiError as exc:
            error(f"results were committed but the pages workflow could not be started: {exc}; run it by hand")
            return 1
    if env.get("GITHUB_OUTPUT"):
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as handle:
            handle.write(f"published={'true' if summary.published else 'false'}\n")
    log(f"polled: {len(summary.moved)} job(s) moved, {len(summary.published)} result(s) published")
    return 0


Command = Literal["confirm-launch", "launch", "poll-jobs"]
COMMANDS: dict[Command, Callable[[Mapping[str, str]], int]] = {
    "confirm-launch": confirm_launch, "launch": launch_job, "poll-jobs": poll_jobs}


def main(command: Command | None = None) -> None:
    """Console entry point: `arena bot` (this run's event), `arena bot confirm-launch` / `launch` (the launch job),
    `arena bot poll-jobs` (the jobs workflow)."""
    if command is None:
        sys.exit(run(os.environ, handoff.handoff_launcher(os.environ)))
    sys.exit(COMMANDS[command](os.environ))


if __name__ == "__main__":
    main()
