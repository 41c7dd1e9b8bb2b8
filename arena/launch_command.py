"""`arena launch PATH` (gate → train → score as one job, locally or on SkyPilot) and `arena jobs` (list, logs,
cancel, and `run`: the job itself, as the backends start it). Wiring only: the job and its life are in launch;
results are accepted through scoring."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import click

from arena.exit_codes import ExitCode
from launch import lifecycle, result_block
from launch.artifacts import ArtifactError, read_published
from launch.backends import Backend, BackendError
from launch.backends.local import LocalBackend, default_root
from launch.budget import Budget, BudgetConfigError
from launch.ceiling import Ceiling, CeilingConfigError
from launch.job_run import PHASES, run_from_env
from launch.package_source import ExtractError, extract
from launch.skypilot_task import SkyPilotConfig, SkyPilotConfigError, render_yaml
from launch.spec import PROFILES, JobSpec, SpecError
from launch.state import Conflict, FolderStore, JobRecord, JobState
from scoring.record import write_record
from scoring.results import ResultsError, record_path
from scoring.verify import accept_job_result
from taskpkg.digest import git_commit, package_digest
from taskpkg.loader import load_package

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_SUITE = ROOT / "suites" / "sample"
LAUNCH_EPILOG = ("Exit codes: 0 the job succeeded (or, with --no-wait, started); 1 it failed or was refused, or its "
                 "results were not valid; 2 bad usage; 3 the backend or a tool is missing or unreachable; 130 "
                 "interrupted (a started job goes on: `arena jobs list`).")


def _store() -> FolderStore:
    return FolderStore(default_root() / "records")


def _backend(name: str, suite: Path | None) -> Backend:
    if name == "local":
        return LocalBackend(suite or SAMPLE_SUITE)
    try:
        from launch.backends.skypilot import SkyPilotBackend

        return SkyPilotBackend(SkyPilotConfig.from_env(os.environ))
    except SkyPilotConfigError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)


@click.command(name="launch", epilog=LAUNCH_EPILOG)
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--backend", "backend_name", type=click.Choice(("local", "skypilot")), default="local",
              show_default=True, help="local: a subprocess here (CPU recipe, sample suite); skypilot: a managed GPU "
              "job (needs the launch extra and ARENA_SKYPILOT_* configuration).")
@click.option("--recipe", default=None, help="Training recipe (default: cpu-small locally, qwen3-8b-grpo-lora on "
              "SkyPilot).")
@click.option("--profile", type=click.Choice(PROFILES), default="quick", show_default=True,
              help="Scoring profile: smoke (one item a domain, a few tokens), quick (minutes on a CPU), full.")
@click.option("--steps", type=click.IntRange(min=1), help="Override the recipe's training steps.")
@click.option("--skip-preflight", "--skip-calibration", "skip_calibration", is_flag=True,
              help="Train even if the learnability pre-flight refuses (no signal for GRPO).")
@click.option("--suite", type=click.Path(exists=True, path_type=Path), envvar="ARENA_SUITE",
              help="The held-out suite (local default: suites/sample).")
@click.option("--commit", help="The environment's commit (default: the checkout's, which must be clean).")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"),
              show_default=True, help="Where the accepted results record is written.")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Follow the job until it ends.")
@click.option("--render", is_flag=True, help="SkyPilot: print the job's task YAML (for `sky jobs launch`) and exit.")
def launch_command(path: Path, backend_name: str, recipe: str | None, profile: str, steps: int | None,
                   skip_calibration: bool, suite: Path | None, commit: str | None, results_dir: Path, wait: bool,
                   render: bool) -> None:
    """Train and score the environment at PATH as one job: contamination gate, `arena train`, `arena score`.

    The same job runs on both backends; a repeated launch of the same environment and commit starts nothing new
    while the first is running, and a killed local job is restarted from its checkpoints.
    """
    package = load_package(path).package
    if package is None:
        click.echo(f"arena: {path} does not load; run `arena check --static {path}`", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    commit = commit or git_commit(path)
    if commit is None:
        raise click.UsageError(f"{path} is not a clean git checkout: commit the package, or pass --commit SHA")
    try:
        limit = Ceiling.from_env(os.environ)
        spec = JobSpec(package.name, commit, recipe or ("cpu-small" if backend_name == "local" else
                                                         "qwen3-8b-grpo-lora"), profile, steps=steps,
                       skip_calibration=skip_calibration, requested_by=os.environ.get("USER", "local") or "local",
                       repository=os.environ.get("ARENA_REPOSITORY"),
                       arena_commit=os.environ.get("ARENA_COMMIT") or git_commit(ROOT),
                       pr=int(os.environ["ARENA_PR"]) if os.environ.get("ARENA_PR") else None,
                       package_digest=package_digest(path), max_hours=limit.max_hours,
                       max_gpu_hours=limit.max_gpu_hours, suite_name=os.environ.get("ARENA_SUITE_NAME") or None,
                       suite_version=os.environ.get("ARENA_SUITE_VERSION") or None,
                       suite_digest=os.environ.get("ARENA_SUITE_DIGEST") or None)
        budget = Budget.from_env(os.environ)
    except (SpecError, BudgetConfigError, CeilingConfigError) as exc:
        raise click.UsageError(str(exc)) from None
    if render:
        try:
            click.echo(render_yaml(spec, SkyPilotConfig.from_env(os.environ)), nl=False)
        except SkyPilotConfigError as exc:
            click.echo(f"arena: {exc}", err=True)
            sys.exit(ExitCode.ENVIRONMENT)
        return
    backend, store = _backend(backend_name, suite), _store()
    try:
        decision = lifecycle.request(store, backend, spec, budget, environment=path.resolve())
    except BackendError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    click.echo(f"arena: {decision.message}", err=True)
    if decision.outcome == lifecycle.Asked.REFUSED:
        sys.exit(ExitCode.CHECK_FAILED)
    if decision.outcome == lifecycle.Asked.DONE:
        assert decision.record is not None
        sys.exit(_publish(store, backend, decision.record, results_dir))
    if not wait:
        return
    assert decision.record is not None
    sys.exit(_follow(store, backend, decision.record, results_dir))


def _follow(store: FolderStore, backend: Backend, record: JobRecord, results_dir: Path) -> int:
    """Show the job's log as it grows and keep its record current until it ends; then accept its results."""
    shown, started = 0, time.monotonic()
    try:
        while True:
            lifecycle.refresh(store, backend)
            current = store.get(record.environment, record.commit)
            log = backend.logs(current.record.backend_job or current.record.name) if current else ""
            for line in log[shown:].splitlines(keepends=True):
                if not line.startswith(result_block.PREFIX):
                    click.echo(line, nl=False, err=True)
            shown = len(log)
            if current is None or not current.record.active:
                break
            time.sleep(2)
    except KeyboardInterrupt:
        click.echo(f"\narena: stopped following; the job goes on (`arena jobs logs {record.name}`, "
                   f"`arena jobs cancel {record.name}`)", err=True)
        return ExitCode.INTERRUPTED
    except BackendError as exc:
        click.echo(f"arena: {exc}", err=True)
        return ExitCode.ENVIRONMENT
    final = current.record if current else record
    if final.state != JobState.SUCCEEDED:
        click.echo(f"arena: job {final.name} {final.state}: {final.reason}", err=True)
        return ExitCode.CHECK_FAILED
    return _publish(store, backend, final, results_dir, log, time.monotonic() - started)


def _publish(store: FolderStore, backend: Backend, record: JobRecord, results_dir: Path, log: str | None = None,
             wall: float | None = None) -> int:
    """Accept a succeeded job's results from its log (read as untrusted, every number checked again), write the
    record and its items under `results_dir`, note the run on the job's record, and say where everything is. The
    same for a job just followed and for one scored before (a repeated launch)."""
    try:
        log = backend.logs(record.backend_job or record.name) if log is None else log
        data, items, parsed = accept_job_result(result_block.decode(log), record.environment, record.commit,
                                                f"job {record.name}")
        write_record(results_dir, data, items)
    except BackendError as exc:
        click.echo(f"arena: {exc}", err=True)
        return ExitCode.ENVIRONMENT
    except (result_block.ResultBlockError, ResultsError) as exc:
        click.echo(f"arena: the job's results were not accepted: {exc}", err=True)
        return ExitCode.CHECK_FAILED
    _note_run(store, record, parsed.run_id)
    path = record_path(results_dir, parsed.environment, parsed.run_id)
    spec = record.job_spec
    artifacts = backend.artifact_location(spec) if spec else "(the record holds no job description)"
    click.echo(f"arena: run {parsed.run_id} of job {record.name}: the record and its items are in {path.parent}/; "
               f"the job's artifacts (job.json, logs/, train/, score/) are in {artifacts}; its log: "
               f"`arena jobs logs {record.name}`", err=True)
    low, high = parsed.macro_interval or (0.0, 0.0)
    followed = f"; followed for {wall:.0f} s" if wall is not None else "; scored before"
    click.echo(f"{parsed.environment}: macro delta {parsed.macro_delta * 100:+.1f} points [{low * 100:+.1f}, "
               f"{high * 100:+.1f}], verdict {parsed.verdict}{followed}")
    click.echo(str(path))
    return ExitCode.OK


def _note_run(store: FolderStore, record: JobRecord, run_id: str) -> None:
    """Write the run's id on the job's record once (what a repeated launch then names); a record that moved on
    meanwhile is left as it is."""
    stored = store.get(record.environment, record.commit)
    if stored is None or stored.record.run_id == run_id or stored.record.state != JobState.SUCCEEDED:
        return
    with contextlib.suppress(Conflict):
        store.update(stored, replace(stored.record, run_id=run_id))


@click.group(name="jobs")
def jobs_group() -> None:
    """Jobs started by `arena launch` on this machine (records under ARENA_LAUNCH_DIR)."""


@jobs_group.command(name="list")
def jobs_list() -> None:
    """Every job record, newest first."""
    records = sorted((s.record for s in _store().all()), key=lambda r: r.updated_at, reverse=True)
    for r in records:
        click.echo(f"{r.name}  {r.state:<9}  {r.backend:<8}  {r.updated_at}  {r.reason or ''}".rstrip())
    if not records:
        click.echo("no jobs", err=True)


def _named(name: str) -> JobRecord:
    found = [s.record for s in _store().all() if s.record.name == name]
    if not found:
        raise click.UsageError(f"no job named {name}: see `arena jobs list`")
    return found[0]


@jobs_group.command(name="logs")
@click.argument("name")
@click.option("--phase", type=click.Choice(PHASES), help="One phase's output instead of the job's log: the "
              "package's output is there, for maintainers only (never post it).")
@click.option("--artifacts", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --phase: the job's artifact folder as copied from its bucket (manifest-*.json, objects/).")
def jobs_logs(name: str, phase: str | None, artifacts: Path | None) -> None:
    """A job's log so far: `arena-job:` lines and the result block; with --phase, that phase's output."""
    record = _named(name)
    try:
        if phase and artifacts:
            click.echo(read_published(artifacts, f"logs/{phase}.log").decode(errors="replace"), nl=False)
        elif phase:
            spec = record.job_spec
            if spec is None:
                raise BackendError(f"the record of {name} holds no job description")
            click.echo(_backend(record.backend, None).phase_log(spec, phase), nl=False)
        else:
            click.echo(_backend(record.backend, None).logs(record.backend_job or record.name), nl=False)
    except (BackendError, ArtifactError) as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)


@jobs_group.command(name="cancel")
@click.argument("name")
def jobs_cancel(name: str) -> None:
    """Stop a queued or running job."""
    record = _named(name)
    try:
        done = lifecycle.cancel(_store(), _backend(record.backend, None), record.environment, record.commit)
    except BackendError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    click.echo(f"arena: {name} cancelled" if done else f"arena: {name} is not running ({record.state})", err=True)


@jobs_group.command(name="extract", epilog="Exit codes: 0 written; 1 git refused or the tree holds something that "
                    "is not a package file.")
@click.option("--repository", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A git repository holding the commit.")
@click.option("--commit", required=True, help="The commit the package was checked at.")
@click.option("--environment", required=True, help="The package's name (environments/<name>/).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where to write it (as OUT/environments/<name>/; OUT must be empty or new).")
def jobs_extract(repository: Path, commit: str, environment: str, out: Path) -> None:
    """Take a package out of git byte for byte: no git attributes (export-subst, export-ignore, eol, filter) apply.
    The job then compares its digest with the verdict's."""
    try:
        if out.exists() and any(out.iterdir()):
            raise ExtractError(f"{out} is not empty")
        folder = extract(repository, commit, environment, out)
    except ExtractError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    click.echo(str(folder))


@jobs_group.command(name="run", epilog="Exit codes: 0 scored; 1 the environment's fault (flagged, training stopped, "
                    "scoring failed); 2 a bad job description; 3 the machine lacks something the job needs.")
def jobs_run() -> None:
    """Run the job described by ARENA_JOB_SPEC, ARENA_JOB_ENVIRONMENT, ARENA_JOB_OUT and ARENA_SUITE (what both
    backends start; see launch/job_run.py)."""
    sys.exit(run_from_env(os.environ))
