"""Training jobs as the bot runs them: launch a confirmed `/arena train`, cancel one, and poll every active job to
its end, publishing the results on the PR and the state branch.

The job's life (launch once, compare-and-swap records, one backend call per poll) is launch.lifecycle's; what
comes back from a job is untrusted (it ran contributor code): its results are accepted through
scoring.results.accept_job_result, and nothing it printed reaches a comment except through bot.job_comments.
Nothing on the GPU machine holds a GitHub credential: results travel back in the job's log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from bot import github_api, job_comments, writes
from bot.handoff import LaunchRequest
from bot.markers import reply_marker
from bot.model import Config
from bot.state_branch import RESULTS, BranchStore
from launch import lifecycle, result_block
from launch.backends import Backend, BackendError, BackendJob
from launch.budget import Budget
from launch.spec import JobSpec
from launch.state import JobRecord, Stored
from scoring.ranking import Standing, standings
from scoring.results import ResultsError, accept_job_result, parse_record
from scoring.verify import check_record

Log = Callable[[str], None]


def job_spec(request: LaunchRequest, env: Mapping[str, str]) -> JobSpec:
    """The job a confirmed request asks for, with the recipe and scoring settings of this arena's configuration
    (ARENA_RECIPE, ARENA_SCORE_PROFILE, ARENA_SCORE_BACKEND) at the arena's own commit (GITHUB_SHA)."""
    return JobSpec(request.environment, request.commit, env.get("ARENA_RECIPE") or "qwen3-8b-grpo-lora",
                   env.get("ARENA_SCORE_PROFILE") or "full", env.get("ARENA_SCORE_BACKEND") or "vllm",
                   repository=request.repository, arena_commit=env.get("GITHUB_SHA") or None, pr=request.pr,
                   requested_by=request.requested_by, steps=int(env["ARENA_STEPS"]) if env.get("ARENA_STEPS") else None,
                   skip_calibration=env.get("ARENA_SKIP_CALIBRATION") == "1")


def launch(client: github_api.Client, request: LaunchRequest, backend: Backend, store: BranchStore, budget: Budget,
           env: Mapping[str, str], log: Log, environment: Path | None = None) -> lifecycle.Decision:
    """Start the confirmed request's job (once per environment and commit) and say so in the accepted reply."""
    spec = job_spec(request, env)
    decision = lifecycle.request(store, backend, spec, budget, environment, request.reply_comment)
    keep_key = decision.outcome != "refused"  # a refused request may be asked for again
    original = github_api.get_comment(client, request.reply_comment)
    head = (original.body.split("\n", 2)[:2] if original else [reply_marker(request.command_comment)])
    lines = head if keep_key else head[:1]
    github_api.edit_comment(client, request.reply_comment,
                            "\n".join([*lines, job_comments.launch_body(decision, spec.environment, spec.commit)]))
    log(f"{spec.name}: {decision.outcome}: {decision.message}")
    return decision


def cancel(client: github_api.Client, request: LaunchRequest, backend: Backend, store: BranchStore, log: Log) -> None:
    """Cancel the PR's job at the request's commit and say so in the reply."""
    record = lifecycle.cancel(store, backend, request.environment, request.commit,
                              reason=f"cancelled by {request.requested_by}")
    text = (f"Cancelled training job `{record.name}`." if record else
            f"No training job of `environments/{request.environment}` at {request.commit[:7]} was running.")
    github_api.edit_comment(client, request.reply_comment, f"{reply_marker(request.command_comment)}\n{text}")
    log(text)


@dataclass
class PollSummary:
    """What a poll did: records that moved, results published, and problems worth a log line."""

    moved: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def poll(client: github_api.Client, cfg: Config, backend: Backend, store: BranchStore, log: Log) -> PollSummary:
    """Stop jobs whose PR moved on, bring every active record up to date (one backend call), publish results."""
    summary = PollSummary()
    records = _stop_stale(client, cfg, backend, store, log)

    def on_finished(record: JobRecord, job: BackendJob) -> JobRecord:
        return _accept(client, cfg, backend, store, record, job, summary, log)

    for change in lifecycle.refresh(store, backend, on_finished=on_finished, records=records):
        after = change.after
        summary.moved.append(f"{after.name}: {change.before.state} -> {after.state}")
        log(summary.moved[-1])
        if after.state in ("failed", "cancelled", "stale") and after.pr:
            _tell_ended(client, cfg, backend, after, log)
    return summary


def _stop_stale(client: github_api.Client, cfg: Config, backend: Backend, store: BranchStore,
                log: Log) -> list[Stored]:
    """A job whose PR closed or moved to a new head is stopped and recorded stale (its results would be
    superseded). Returns the records still active (read once for the whole poll)."""
    heads: dict[int, tuple[str, str]] = {}
    still: list[Stored] = []
    for stored in store.all():
        record = stored.record
        if not record.active or record.backend != backend.name:
            continue
        if record.pr is None:
            still.append(stored)
            continue
        if record.pr not in heads:
            pull = github_api.get_pull(client, record.pr)
            heads[record.pr] = (pull.head_sha, pull.state)
        head, state = heads[record.pr]
        if state != "open" or head != record.commit:
            why = "the pull request was closed" if state != "open" else f"the pull request moved to {head[:12]}"
            stopped = lifecycle.cancel(store, backend, record.environment, record.commit, "stale", why)
            log(f"{record.name}: stale ({why})")
            if stopped is not None:
                _tell_ended(client, cfg, backend, stopped, log)
        else:
            still.append(stored)
    return still


def _accept(client: github_api.Client, cfg: Config, backend: Backend, store: BranchStore, record: JobRecord,
            job: BackendJob, summary: PollSummary, log: Log) -> JobRecord:
    """A job that succeeded: read its result block as untrusted data, commit the record, comment the results.
    Anything wrong with the result fails the job with the reason instead."""
    try:
        log_text = backend.logs(job.id)
        data, items, parsed = accept_job_result(result_block.decode(log_text), record.environment, record.commit,
                                                f"job {record.name}")
    except (BackendError, result_block.ResultBlockError, ResultsError) as exc:
        summary.problems.append(f"{record.name}: results not accepted: {exc}")
        log(summary.problems[-1])
        return record.moved_to("failed", reason=f"its results were not accepted: {exc}")
    if store.put_result(parsed.environment, parsed.run_id, data, items):
        summary.published.append(parsed.run_id)
    comment_id = record.results_comment
    if record.pr:
        standing = _standing(client, store, parsed.run_id)
        links = {"results record": f"{cfg.server_url}/{cfg.repo}/blob/{store.branch}/{RESULTS}/"
                                   f"{parsed.environment}/{parsed.run_id}.json"}
        body = "\n".join([f"<!-- posttrain-arena:results job={record.name} -->",
                          job_comments.results_body(parsed, standing, record, links)])
        comment_id = writes.post_unique(client, record.pr, body, cfg.bot_login)
    return replace(record, run_id=parsed.run_id, results_comment=comment_id)


def _standing(client: github_api.Client, store: BranchStore, run_id: str) -> Standing | None:
    """Where the run stands among every record on the state branch (each read with its items file and its numbers
    recomputed; a file that cannot be used is left out)."""
    records, items = [], {}
    for path in github_api.list_files(client, store.branch, RESULTS):
        if path.endswith(".items.json"):
            continue
        found = github_api.get_file(client, path, store.branch)
        beside = github_api.get_file(client, path.removesuffix(".json") + ".items.json", store.branch)
        try:
            record = parse_record(json.loads(found.data), path) if found else None
            scores = check_record(record, json.loads(beside.data) if beside else None, path) if record else None
        except (ValueError, ResultsError):
            continue
        if record is not None:
            records.append(record)
            if scores is not None:
                items[record.run_id] = scores
    return standings(records, items).get(run_id)


def _tell_ended(client: github_api.Client, cfg: Config, backend: Backend, record: JobRecord, log: Log) -> None:
    """Comment once on how the job ended (with the end of its log), and reopen the request: the accepted reply
    loses its key line, so `/arena train` may ask again."""
    try:
        log_text = backend.logs(record.backend_job or record.name) if record.backend_job else None
    except BackendError as exc:
        log_text = f"(the log could not be read: {exc})"
    marker = f"<!-- posttrain-arena:ended job={record.name} state={record.state} -->"
    assert record.pr is not None
    writes.post_unique(client, record.pr, f"{marker}\n{job_comments.ended_body(record, log_text)}", cfg.bot_login)
    if record.reply_comment:
        reply = github_api.get_comment(client, record.reply_comment)
        if reply is not None:
            first, _, rest = reply.body.partition("\n")
            _, _, text = rest.partition("\n") if rest.startswith("<!-- posttrain-arena:train ") else ("", "", rest)
            github_api.edit_comment(client, record.reply_comment, f"{first}\n{text}")
    log(f"{record.name}: told PR #{record.pr} it {record.state}")
