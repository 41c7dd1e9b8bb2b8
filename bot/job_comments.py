"""What the bot says on a PR about its training job: launched, refused, its results, how it ended, its status.

Job records and results are read as untrusted data (they came back from a machine running contributor code), so
every string from them goes through `inline`. No log reaches a comment: what a job's package printed is for
maintainers only (`arena jobs logs NAME --phase P`).
"""

from __future__ import annotations

from bot.comment import inline
from launch.lifecycle import Asked, Decision
from launch.state import JobRecord, JobState
from scoring.ranking import Standing
from scoring.results import ResultRecord


def _job(record: JobRecord) -> str:
    where = f" ({inline(record.backend, 20)} job {inline(record.backend_job, 40)})" if record.backend_job else ""
    return f"`{inline(record.name, 63)}`{where}"


def launch_body(decision: Decision, environment: str, commit: str, status_hint: bool = True) -> str:
    """The accepted reply, edited once the launch job acted on it."""
    record = decision.record
    subject = f"`environments/{inline(environment, 64)}` at commit {commit}"
    hint = " Comment `/arena status` for its state or `/arena cancel` to stop it." if status_hint else ""
    if decision.outcome == Asked.STARTED and record is not None:
        return (f"**Training started** for {subject}: job {_job(record)}, attempt {record.attempt}. It runs the "
                f"contamination gate, trains, then scores on the held-out suite; the results come here.{hint}")
    if decision.outcome == Asked.RUNNING and record is not None:
        return (f"Training of {subject} is already {inline(record.state, 20)}: job {_job(record)}; nothing new was "
                "started.")
    if decision.outcome == Asked.DONE and record is not None:
        return (f"{subject} was already trained and scored (run `{inline(record.run_id or '?', 80)}`); nothing new "
                "was started.")
    return (f"**Training was not started** for {subject}: {inline(decision.message, 600)}. Fix that and comment "
            "`/arena train` again.")


def results_body(record: ResultRecord, standing: Standing | None, job: JobRecord, links: dict[str, str]) -> str:
    """The results of a finished job: macro Δ with its interval, the per-domain table, verdict, rank, gate."""
    low, high = record.macro_interval or (record.macro_delta, record.macro_delta)
    rank = "unranked"
    if standing is not None and standing.rank is not None:
        interval = standing.rank_interval
        rank = f"{standing.rank}" + (f" (95% interval {interval[0]}–{interval[1]})" if interval else "")
    verdict = (standing.verdict if standing else record.verdict) or "untested"
    rows = [f"| {inline(d.domain, 40)} | {d.items} | {d.base * 100:.1f} | {d.trained * 100:.1f} | "
            f"{d.delta * 100:+.1f} | " + (f"[{d.interval[0] * 100:+.1f}, {d.interval[1] * 100:+.1f}]"
                                          if d.interval else "–") + " |" for d in record.domains]
    gain = "–" if record.normalized_gain is None else f"{record.normalized_gain:+.3f}"
    p = "–" if record.p_value is None else f"{record.p_value:.3g}"
    link_text = " · ".join(f"[{inline(name, 40)}]({url})" for name, url in links.items())
    return "\n".join([
        f"## Training results: `environments/{inline(record.environment, 64)}` at {record.commit}",
        "",
        f"**Macro Δ {record.macro_delta * 100:+.1f} points** (95% interval [{low * 100:+.1f}, {high * 100:+.1f}], "
        f"p = {p}), normalised gain {gain} · verdict **{inline(verdict, 40)}** · rank {rank}",
        "",
        *_training_lines(record),
        f"Base model `{inline(record.base_model, 80)}` on suite `{inline(record.suite or '?', 80)}` "
        f"{inline(record.suite_version or '', 20)} · contamination gate: {inline(record.contamination or '?', 20)} · "
        f"{record.gpu_hours or 0:.2f} GPU-hours · {record.steps or 0} training steps "
        f"({inline(record.recipe or '?', 40)}) · job {_job(job)}",
        "",
        "| domain | items | base % | trained % | Δ points | 95% interval |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        link_text,
    ]).rstrip() + "\n"


def _training_lines(record: ResultRecord) -> list[str]:
    """The in-domain lift beside the transfer score above it, and the pre-flight's verdict (each when recorded)."""
    lines = []
    lift = record.in_domain
    if lift:
        if isinstance(lift.get("lift"), int | float) and len(lift.get("interval") or []) == 2:
            low, high = (float(x) for x in lift["interval"])
            lines.append(f"In-domain lift **{lift['lift'] * 100:+.1f} points** (95% interval [{low * 100:+.1f}, "
                         f"{high * 100:+.1f}]) on {int(lift.get('instances', 0))} held-out instance(s) of the "
                         f"environment × {int(lift.get('samples', 0))} sample(s), base and trained on the same ones")
        else:
            lines.append("In-domain lift: not measured (the base model's episodes errored)")
    if record.preflight:
        lines.append(f"Pre-flight: {inline(record.preflight, 400)}")
    return [" · ".join(lines), ""] if lines else []


def ended_body(record: JobRecord) -> str:
    """A job that ended without results: why, where maintainers read its output, and how to try again."""
    what: dict[str, str] = {JobState.FAILED: "failed", JobState.CANCELLED: "was cancelled",
                            JobState.STALE: "was stopped: the pull request moved on"}
    reason = inline(record.reason or "no reason given", 600)
    lines = [f"**Training job {_job(record)} {what.get(record.state, inline(record.state, 20))}** for "
             f"`environments/{inline(record.environment, 64)}` at {record.commit}: {reason}."]
    lines += ["", f"Its output stays private (it holds the package's own output); a maintainer can read it with "
              f"`arena jobs logs {inline(record.name, 63)} --phase train` (or `gate`, `score`)."]
    again = ("comment `/arena train` to start it again" if record.state == JobState.CANCELLED else
             "push the fix, wait for the verdict on the new head, then comment `/arena train`")
    if (record.reason or "").startswith("stopped at its ceiling"):
        again = ("make the package cheaper to train (its limits, its verifier's time) and push, or ask a maintainer "
                 "to raise the ceiling; then comment `/arena train`")
    lines += ["", f"To try again, {again}."]
    return "\n".join(lines) + "\n"


def status_body(record: JobRecord | None, environment: str | None, commit: str) -> str:
    """The answer to `/arena status`."""
    if record is None:
        return (f"No training job has been started for this pull request's head commit {commit[:7]}"
                + (f" (`environments/{inline(environment, 64)}`)" if environment else "") + ".")
    detail = f": {inline(record.reason, 300)}" if record.reason else ""
    return (f"Training job {_job(record)} for `environments/{inline(record.environment, 64)}` at {record.commit[:7]} "
            f"is **{inline(record.state, 20)}**{detail} (last updated {inline(record.updated_at, 40)}; the jobs "
            "workflow polls every 15 minutes).")
