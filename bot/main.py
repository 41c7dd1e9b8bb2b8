"""The bot as GitHub Actions runs it: `python -m bot.main`, one event per process.

Environment (set by Actions unless noted):
  GITHUB_EVENT_NAME, GITHUB_EVENT_PATH   the event and its webhook payload
  GITHUB_REPOSITORY, GITHUB_API_URL      the repository and the API (default https://api.github.com)
  GITHUB_SERVER_URL, GITHUB_RUN_ID       for links (default https://github.com)
  GITHUB_TOKEN                           or a GitHub App: ARENA_APP_ID, ARENA_APP_PRIVATE_KEY, ARENA_APP_INSTALLATION_ID
  ARENA_REPORT_DIR                       workflow_run only: where the report artifact was downloaded
  ARENA_MAX_OPEN_PRS_PER_AUTHOR          optional, default 3; 0 turns the cap off
  ARENA_BOT_LOGIN                        optional: the login whose sticky comments count (default: any bot account)

Exit codes:
  0  the event was handled: acted on, ignored as not ours, or failed with an explanation posted on the PR
  1  the bot failed and could not post an explanation (GitHub refused or was unreachable); see the ::error lines
  2  bad invocation: a required variable is missing or the event file cannot be read
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from bot import github_api
from bot.actions import Need, Publish, Reply, SetLabels
from bot.comment import inline
from bot.events import SHA, decide, failure_notice
from bot.execute import Launcher, execute, gather, publish
from bot.handoff import handoff_launcher
from bot.model import Config, Facts, Pull
from validators.render_github import escape_data

MAX_ROUNDS = 6  # decide → fetch → decide; no handler needs more rounds than this


def log(message: str) -> None:
    """One log line; untrusted text cannot start a workflow command (newlines are escaped)."""
    print(f"arena-bot: {escape_data(message)}", flush=True)


def error(message: str) -> None:
    """An ::error annotation on the bot's run."""
    print(f"::error title=arena bot::{escape_data(message)}", flush=True)


def config(env: Mapping[str, str]) -> Config:
    """The bot's configuration from the environment."""
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo, run_id = env["GITHUB_REPOSITORY"], env.get("GITHUB_RUN_ID")
    return Config(repo=repo, server_url=server, run_url=f"{server}/{repo}/actions/runs/{run_id}" if run_id else None,
                  max_open_prs_per_author=int(env.get("ARENA_MAX_OPEN_PRS_PER_AUTHOR") or 3),
                  bot_login=env.get("ARENA_BOT_LOGIN") or None)


def run(env: Mapping[str, str], launcher: Launcher | None = None) -> int:
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
    facts = Facts()
    try:
        for _ in range(MAX_ROUNDS):
            actions = decide(event, payload, facts, cfg)
            needs = [a for a in actions if isinstance(a, Need)]
            if not needs:
                break
            for need in needs:
                gather(client, need, facts, env)
        else:
            raise RuntimeError("the decision kept asking for facts")
        execute(client, actions, facts, cfg, log, launcher)
        return 0
    except Exception as exc:  # a bot failure must still leave an explanation on the PR
        error(f"{type(exc).__name__}: {exc}")
        return 0 if explain(client, event, payload, facts, cfg, exc) else 1


def explain(client: github_api.Client, event: str, payload: dict, facts: Facts, cfg: Config,
            exc: Exception) -> bool:
    """Post what went wrong on the PR the event is about; False when that is impossible too."""
    reason = f"{type(exc).__name__}: {exc}"
    try:
        if event == "issue_comment":
            details = f" Details: [Actions run]({cfg.run_url})." if cfg.run_url else ""
            body = f"The arena bot failed while handling this command ({inline(reason)}); nothing was started.{details}"
            execute(client, [Reply(int(payload["issue"]["number"]), body)], facts, cfg, log)
            return True
        pull = facts.pull or _pull_from_payload(event, payload)
        if pull is None or not SHA.match(pull.head_sha):
            return False
        run = payload.get("workflow_run") or {}
        state = (int(run.get("id") or 0), int(run.get("run_attempt") or 1)) if run else (0, 0)
        notice = failure_notice(pull, cfg, state, reason)
        publish(client, Publish(notice.sticky, SetLabels(pull.number)), facts, cfg, log)  # the comment alone
        return True
    except Exception as second:  # GitHub itself is failing: the ::error line is all that is left
        error(f"could not post an explanation either: {type(second).__name__}: {second}")
        return False


def _pull_from_payload(event: str, payload: dict) -> Pull | None:
    pr = payload.get("pull_request") if event in ("pull_request", "pull_request_target") else None
    if not pr:
        return None
    head = pr.get("head") or {}
    return Pull(number=int(pr["number"]), state=pr.get("state", "open"), title=str(pr.get("title") or ""),
                author=str((pr.get("user") or {}).get("login") or ""), head_sha=str(head.get("sha") or ""),
                head_ref=str(head.get("ref") or ""), head_repo=(head.get("repo") or {}).get("full_name"))


def main() -> None:
    """Console entry point."""
    sys.exit(run(os.environ, handoff_launcher(os.environ)))


if __name__ == "__main__":
    main()
