"""Training jobs as the bot runs them: launch a confirmed `/arena train`, cancel one, and poll every active job to
its end, publishing the results on the PR and the state branch.

The job's life (launch once, compare-and-swap records, one backend call per poll) is launch.lifecycle's; what
comes back from a job is untrusted (it ran contributor code): its results are accepted through
scoring.verify.accept_job_result, and nothing it printed reaches a comment except through bot.job_comments.
Nothing on the GPU machine holds a GitHub credential: results travel back in the job's log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from bot import github_api, job_comments, writes
from bot.facts import Config
from bot.handoff import LaunchRequest
from bot.markers import reply_marker
from bot.state_branch import RESULTS, BranchStore
from launch import ceiling, lifecycle, result_block
from launch.backends import Backend, BackendError, BackendJob
from launch.budget import Budget
from launch.ceiling import Ceiling
from launch.spec import JobSpec
from launch.state import JobRecord, JobState, Stored
from scoring.ranking import Standing, standings
from scoring.results import ResultsError, parse_record
from scoring.verify import accept_job_result, check_record
from taskpkg.frontmatter import read_frontmatter
from taskpkg.layouts import is_record_file, items_path
from taskpkg.rules.rule import RuleViolation

Log = Callable[[str], None]


def job_spec(request: LaunchRequest, env: Mapping[str, str]) -> JobSpec:
    """The job a confirmed request asks for, with the recipe and scoring settings of this arena's configuration
    (ARENA_RECIPE, ARENA_SCORE_PROFILE, ARENA_SCORE_BACKEND) at the arena's own commit (GITHUB_SHA): the package
    digest the verdict recorded, the PR's author to credit, the ceiling (ARENA_JOB_MAX_HOURS,
    ARENA_JOB_MAX_GPU_HOURS) and the suite it must score on (ARENA_SUITE_NAME, ARENA_SUITE_VERSION,
    ARENA_SUITE_DIGEST, as `arena suite digest` prints it)."""
    limit = Ceiling.from_env(env)
    return JobSpec(request.environment, request.commit, env.get("ARENA_RECIPE") or "qwen3-8b-grpo-lora",
                   env.get("ARENA_SCORE_PROFILE") or "full", env.get("ARENA_SCORE_BACKEND") or "vllm",
                   repository=request.repository, arena_commit=env.get("GITHUB_SHA") or None, pr=request.pr,
                   requested_by=request.requested_by, steps=int(env["ARENA_STEPS"]) if env.get("ARENA_STEPS") else None,
                   skip_calibration=env.get("ARENA_SKIP_CALIBRATION") == "1", package_digest=request.package_digest,
                   author=request.author, max_hours=limit.max_hours, max_gpu_hours=limit.max_gpu_hours,
                   suite_name=env.get("ARENA_SUITE_NAME") or None, suite_version=env.get("ARENA_SUITE_VERSION") or None,
                   suite_digest=env.get("ARENA_SUITE_DIGEST") or None)


def package_limits(client: github_api.Client, spec: JobSpec, environment: Path | None) -> dict[str, Any] | None:
    """The package's `limits` at the job's commit: from its folder when the launcher has one, else from GitHub."""
    if environment is not None:
        return ceiling.package_limits(environment)
    found = github_api.get_file(client, f"environments/{spec.environment}/task.md", spec.commit)
    if found is None:
        return None
    try:
        limits = read_frontmatter(found.data.decode("utf-8")).data.get("limits")
    except (ValueError, RuleViolation):
        return None
    return limits if isinstance(limits, dict) else None


def launch(client: github_api.Client, request: LaunchRequest, backend: Backend, store: BranchStore, budget: Budget,
           env: Mapping[str, str], log: Log, environment: Path | None = None) -> lifecycle.Decision:
    """Start the confirmed request's job (once per environment and commit) and say so in the accepted reply."""
    spec = job_spec(request, env)
    decision = lifecycle.request(store, backend, spec, budget, environment, request.reply_comment,
                                 package_limits(client, spec, environment))
    keep_key = decision.outcome != lifecycle.Asked.REFUSED  # a refused request may be asked for again
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
    active = [s for s in store.all() if s.record.active and s.record.backend == backend.name]
    found = backend.states([s.record.name for s in active]) if active else {}  # the poll's one backend call
    records = _stop_stale(client, cfg, backend, store, log, active, found)

    def on_finished(record: JobRecord, job: BackendJob) -> JobRecord:
        return _accept(client, cfg, backend, store, record, job, summary, log)

    for change in lifecycle.refresh(store, backend, on_finished=on_finished, records=records, jobs=found):
        after = change.after
        summary.moved.append(f"{after.name}: {change.before.state} -> {after.state}")
        log(summary.moved[-1])
        if after.state in (JobState.FAILED, JobState.CANCELLED, JobState.STALE) and after.pr:
            _tell_ended(client, cfg, after, log)
    return summary


def _stop_stale(client: github_api.Client, cfg: Config, backend: Backend, store: BranchStore, log: Log,
                active: list[Stored], found: dict[str, BackendJob]) -> list[Stored]:
    """A job whose PR closed or moved to a new head is stopped and recorded stale (its results would be
    superseded), with what it spent. Returns the records still active."""
    heads: dict[int, tuple[str, str]] = {}
    still: list[Stored] = []
    for stored in active:
        record = stored.record
        if record.pr is None:
            still.append(stored)
            continue
        if record.pr not in heads:
            pull = github_api.get_pull(client, record.pr)
            heads[record.pr] = (pull.head_sha, pull.state)
        head, state = heads[record.pr]
        if state != "open" or head != record.commit:
            why = "the pull request was closed" if state != "open" else f"the pull request moved to {head[:12]}"
            job = found.get(record.name)
            stopped = lifecycle.cancel(store, backend, record.environment, record.commit, JobState.STALE, why,
                                       job.gpu_hours if job else record.gpu_hours)
            log(f"{record.name}: stale ({why})")
            if stopped is not None:
                _tell_ended(client, cfg, stopped, log)
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
        _check_as_asked(data, record.job_spec, f"job {record.name}")
    except (BackendError, result_block.ResultBlockError, ResultsError) as exc:
        summary.problems.append(f"{record.name}: results not accepted: {exc}")
        log(summary.problems[-1])
        return record.moved_to(JobState.FAILED, reason=f"its results were not accepted: {exc}")
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


def _check_as_asked(data: dict[str, Any], spec: JobSpec | None, source: str) -> None:
    """ResultsError unless the record was scored on the suite the job was given (name, version, content digest:
    each one the job's spec names) and credits whom the job credits."""
    if spec is None:
        return
    suite = data.get("suite")
    if not isinstance(suite, dict):
        suite = {}
    for part, wanted in (("name", spec.suite_name), ("version", spec.suite_version), ("digest", spec.suite_digest)):
        found = suite.get(part)
        if wanted is not None and found != wanted:
            raise ResultsError(f"{source}: the record was scored on suite {part} {str(found)[:80]!r}, not the "
                               f"job's {wanted!r}")
    if spec.author is not None and data.get("contributor") != spec.author:
        raise ResultsError(f"{source}: the record credits {str(data.get('contributor'))[:40]!r}, not the pull "
                           f"request's author {spec.author!r}")


def _standing(client: github_api.Client, store: BranchStore, run_id: str) -> Standing | None:
    """Where the run stands among every record on the state branch (each read with its items file and its numbers
    recomputed; a file that cannot be used is left out)."""
    records, items = [], {}
    for path in github_api.list_files(client, store.branch, RESULTS):
        if not is_record_file(path):
            continue
        found = github_api.get_file(client, path, store.branch)
        beside = github_api.get_file(client, str(items_path(PurePosixPath(path))), store.branch)
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


def _tell_ended(client: github_api.Client, cfg: Config, record: JobRecord, log: Log) -> None:
    """Comment once on how the job ended (its reason, never its log: the package's output is for maintainers, through
    `arena jobs logs`), and reopen the request: the accepted reply loses its key line, so `/arena train` may ask
    again."""
    marker = f"<!-- posttrain-arena:ended job={record.name} state={record.state} -->"
    assert record.pr is not None
    writes.post_unique(client, record.pr, f"{marker}\n{job_comments.ended_body(record)}", cfg.bot_login)
    if record.reply_comment:
        reply = github_api.get_comment(client, record.reply_comment)
        if reply is not None:
            first, _, rest = reply.body.partition("\n")
            _, _, text = rest.partition("\n") if rest.startswith("<!-- posttrain-arena:train ") else ("", "", rest)
            github_api.edit_comment(client, record.reply_comment, f"{first}\n{text}")
    log(f"{record.name}: told PR #{record.pr} it {record.state}")
