"""`arena suite add|check|digest|index` (build, check, identify and index a held-out suite) and `arena score`.

Wiring only: the suite, its checks (the items' episodes included) and the contamination gate live in scoring.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from docker.errors import DockerException
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from arena.exit_codes import EPILOG, ExitCode
from sandbox.engine import EngineUnavailable, engine_available
from scoring.evaluation import PROFILES, EvaluationFailed
from scoring.gate_run import DEFAULT_SAMPLES, GateError, make_suite_instances, run_gate
from scoring.results import record_path
from scoring.score_run import ScoreOptions, ScoringError, score
from scoring.suite import (
    ENV_VARIABLE,
    Suite,
    SuiteError,
    SuiteItem,
    balance_problems,
    load_suite,
    suite_digest,
    suite_location,
)
from scoring.suite_build import add_package
from scoring.suite_check import Finding, check_episodes, check_layout
from scoring.suite_instances import CACHE_FOLDER, Progress
from taskpkg.discover import display_path
from taskpkg.domains import DOMAINS
from taskpkg.layouts import RESULTS_DIR
from taskpkg.loader import load_package
from validators.checking import check_packages
from validators.dynamic import pick_instances

SUITE_OPTION = click.option("--suite", "suite_path", envvar=ENV_VARIABLE, show_envvar=True,
                            help="The suite: a suite.yaml or its folder (the public sample: suites/sample).")


def _suite(given: str | None, check_balance: bool = True) -> Suite:
    """The suite named by --suite / ARENA_SUITE; exits 2 when none is named, 1 when it cannot be used."""
    try:
        manifest = suite_location(given)
    except SuiteError as exc:
        raise click.UsageError(f"{exc.message}: {exc.fix}") from None
    try:
        return load_suite(manifest, check_balance)
    except SuiteError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.CHECK_FAILED)


@click.group(name="suite")
def suite_group() -> None:
    """Build, check and index a held-out suite (its location: --suite PATH or ARENA_SUITE)."""


@suite_group.command(name="add", epilog=EPILOG)
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@SUITE_OPTION
@click.option("--instances", help="Instance numbers, comma-separated (default: --count spread over the range).")
@click.option("--count", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="How many instances to add, spread over the package's range.")
@click.option("--cluster", help="Cluster id (default: the package's name: its instances are one task family).")
@click.option("--domain", "-d", type=click.Choice(DOMAINS), help="Domain of an imported BenchFlow/Harbor task.")
@click.option("--keep-version", is_flag=True, help="Do not raise the suite's minor version.")
def suite_add(source: Path, suite_path: str | None, instances: str | None, count: int, cluster: str | None,
              domain: str | None, keep_version: bool) -> None:
    """Add a package's instances to a suite: a native package, or a BenchFlow/Harbor task imported first.

    The package is copied to the suite's packages/ folder; a missing suite.yaml is created with a new canary.
    """
    try:
        manifest = suite_location(suite_path)
    except SuiteError as exc:
        raise click.UsageError(f"{exc.message}: {exc.fix}") from None
    with _native(source, domain) as package_root:
        package = load_package(package_root).package
        picked = _instances(instances, package.instance_count if package else 0, count)
        try:
            suite = add_package(manifest, package_root, picked, cluster, bump_version=not keep_version)
        except SuiteError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.CHECK_FAILED)
    counts = ", ".join(f"{d} {n}" for d, n in suite.counts().items())
    click.echo(f"{display_path(suite.manifest)}: suite {suite.name} {suite.version}, {len(suite.items)} items "
               f"({counts})")
    for problem in balance_problems(suite.counts()):
        click.echo(f"warning: {problem}; `arena suite check` fails until the domains are balanced", err=True)


def _instances(spec: str | None, available: int, count: int) -> list[int]:
    if spec is None:
        return pick_instances(available, count)
    try:
        return sorted({int(part) for part in spec.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter("give instance numbers separated by commas, e.g. 0,5,17", param_hint="--instances")\
            from None


@contextmanager
def _native(source: Path, domain: str | None) -> Iterator[Path]:
    """The source itself when it is a native package, else the package imported from it in a scratch folder."""
    if (source / "task.md").is_file() and load_package(source).package is not None:
        yield source
        return
    from interop import InteropError, import_task  # the interop formats load only when a task is imported

    scratch = Path(tempfile.mkdtemp(prefix="arena-suite-import-"))
    try:
        try:
            result = import_task(source, scratch, None, domain)
        except InteropError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.USAGE)
        click.echo(f"Imported the {result.source_format} task {source}")
        yield result.package_path
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@suite_group.command(name="check", epilog=EPILOG)
@SUITE_OPTION
@click.option("--static", "static_only", is_flag=True, help="Skip the episodes (no Docker engine needed).")
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True, help="Items run at a time.")
def suite_check(suite_path: str | None, static_only: bool, workers: int) -> None:
    """Check a suite: balance (no domain over 20%), no duplicates, every package's static checks, and on every item
    the oracle scores 1 while doing nothing scores 0."""
    suite = _suite(suite_path, check_balance=False)
    findings = check_layout(suite)
    paths = sorted({item.path for item in suite.items})
    report = check_packages(paths, "static", show_progress=False)
    for package in report.packages:
        findings += [Finding(f"{package.path}/{d.location()}", f"{d.check_id} {d.message}", d.fix)
                     for d in package.diagnostics if d.severity.value == "error"]
    if not static_only:
        if not engine_available():
            click.echo("arena: no Docker engine answers; start one (`scripts/ensure-engine`) or pass --static",
                       err=True)
            sys.exit(ExitCode.ENVIRONMENT)
        total = len(suite.items)
        done = [0]

        def progress(item: SuiteItem, finding: Finding | None) -> None:
            done[0] += 1
            verdict = "ok" if finding is None else "FAILED"
            click.echo(f"arena: item {item.id} ({item.domain}): {verdict} ({done[0]}/{total})", err=True)

        try:
            findings += check_episodes(suite, workers, progress)
        except (EngineUnavailable, DockerException) as exc:
            click.echo(f"arena: the Docker engine failed: {exc}", err=True)
            sys.exit(ExitCode.ENVIRONMENT)
    for finding in findings:
        click.echo(f"error: {finding}")
    counts = ", ".join(f"{d} {n}" for d, n in suite.counts().items())
    click.echo(f"suite {suite.name} {suite.version}: {len(suite.items)} items ({counts}): "
               + (f"{len(findings)} problem(s)" if findings else "passed"))
    sys.exit(ExitCode.CHECK_FAILED if findings else ExitCode.OK)


@suite_group.command(name="digest", epilog=EPILOG)
@SUITE_OPTION
def suite_digest_command(suite_path: str | None) -> None:
    """Print the suite's content digest (sha256 over its items, instances and packages), as results records carry it
    in suite.digest: runs are compared only on the same digest."""
    click.echo(suite_digest(_suite(suite_path, check_balance=False)))


@suite_group.command(name="index", epilog=EPILOG)
@SUITE_OPTION
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True, help="Instances made at a time.")
def suite_index(suite_path: str | None, workers: int) -> None:
    """Make every listed instance in the sandbox and keep its text beside the suite (gate-cache/), for the
    contamination gate; instances already there are kept. Ship the folder with the suite: as private as the suite."""
    suite = _suite(suite_path, check_balance=False)
    if not engine_available():
        click.echo("arena: no Docker engine answers; start one (`scripts/ensure-engine`)", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    try:
        with instance_progress("suite instances") as progress:
            found = make_suite_instances(suite, workers, progress)
    except (EngineUnavailable, DockerException) as exc:
        click.echo(f"arena: the Docker engine failed: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    for (name, number), why in sorted(found.missing.items()):
        click.echo(f"error: {name} instance {number} could not be made: {why}")
    if found.cache_note:
        click.echo(f"error: {found.cache_note}")
    folder = display_path(suite.manifest.parent / CACHE_FOLDER)
    click.echo(f"suite {suite.name} {suite.version}: {len(found.texts)} of {len(suite.items)} instances in {folder} "
               f"({found.made} made now)")
    sys.exit(ExitCode.CHECK_FAILED if found.missing or found.cache_note else ExitCode.OK)


@contextmanager
def instance_progress(what: str) -> Iterator[Progress]:
    """A progress callback (done, total): a rich bar on a terminal, a line per tenth elsewhere (CI and job logs)."""
    console = Console(stderr=True)
    if not console.is_terminal:
        def line(done: int, total: int) -> None:
            if done == total or done * 10 // total > (done - 1) * 10 // total:
                click.echo(f"arena: {what}: {done}/{total} made", err=True)
        yield line
        return
    with RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
        task: list = []

        def advance(done: int, total: int) -> None:
            if not task:
                task.append(bar.add_task(what, total=total))
            bar.update(task[0], completed=done)
        yield advance


def _evaluate(path: Path, suite: Suite, options: ScoreOptions) -> None:
    loaded = load_package(path)
    if loaded.package is None:
        click.echo(f"arena: {path} does not load; run `arena check --static {path}`", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    try:
        record = score(loaded.package, suite, options)
    except ScoringError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT if exc.environment else ExitCode.CHECK_FAILED)
    except EvaluationFailed as exc:
        click.echo(f"arena: {exc}; finished episodes are kept in {options.out / 'episodes.jsonl'}: run the same "
                   "command again to resume", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    interval = record.macro_interval or (0.0, 0.0)
    click.echo(f"{record.environment}: macro delta {record.macro_delta * 100:+.1f} points "
               f"[{interval[0] * 100:+.1f}, {interval[1] * 100:+.1f}], verdict {record.verdict}")
    if not record.complete:
        excluded = sum(d.excluded for d in record.domains)
        click.echo(f"incomplete: {excluded} item(s) excluded because the base model's verifier still erred after "
                   f"{record.retries} retries; this run is never ranked", err=True)
    unresolved = record.errors["trained"].unresolved if record.errors else 0
    if unresolved:
        click.echo(f"note: {unresolved} trained-arm episode(s) still erred after every retry and scored 0", err=True)
    click.echo(str(record_path(options.out / RESULTS_DIR, record.environment, record.run_id)))


@click.command(name="score", epilog=("Exit codes: 0 the gate passed; 1 the package is flagged, cannot be read or its "
                                     "sampled instances cannot be made; 2 bad usage; 3 a required tool is missing; "
                                     "130 interrupted."))
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@SUITE_OPTION
@click.option("--contamination-only", is_flag=True, help="Run only the contamination gate (before any training).")
@click.option("--samples", type=click.IntRange(0, 50), default=DEFAULT_SAMPLES, show_default=True,
              help="Instances of the package to make in the sandbox (drawn at random) and compare too.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the maintainers' report (with the matched suite text) here; never publish it.")
@click.option("--format", "output_format", type=click.Choice(("human", "json")), default="human", show_default=True)
@click.option("--adapter", type=click.Path(file_okay=False, path_type=Path), help="The trained LoRA adapter (the "
              "adapter/ folder `arena train` wrote).")
@click.option("--training-manifest", type=click.Path(dir_okay=False, path_type=Path), help="That run's manifest.json.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Folder for the record "
              "(results/<environment>/<run_id>.json and its items file) and the episodes log.")
@click.option("--profile", type=click.Choice(tuple(PROFILES)), default="quick", show_default=True,
              help="smoke: one item a domain, a few tokens (the whole loop in CI); quick: a few items per domain and "
                   "short replies (minutes on a CPU); full: every item, K=4.")
@click.option("--backend", type=click.Choice(("local", "vllm")), default="local", show_default=True,
              help="local: transformers (CPU or GPU); vllm: one in-process engine for both arms (GPU).")
@click.option("--base-model", help="Override the base model recorded in the training manifest.")
@click.option("--gate", type=click.Path(dir_okay=False, path_type=Path), help="Reuse the gate's verdict from the "
              "JSON that `arena score --contamination-only --format json` printed.")
@click.option("--commit", help="The environment's commit (default: the training manifest's).")
@click.option("--pr", type=click.IntRange(min=1), help="The pull request, recorded in the results.")
@click.option("--contributor", help="The PR author's login, recorded in the results.")
def score_command(path: Path, suite_path: str | None, contamination_only: bool, samples: int,
                  report_path: Path | None, output_format: str, adapter: Path | None,
                  training_manifest: Path | None, out: Path | None, profile: str, backend: str,
                  base_model: str | None, gate: Path | None, commit: str | None, pr: int | None,
                  contributor: str | None) -> None:
    """Score an environment: the trained model against the base on the held-out suite, or only the contamination
    gate (--contamination-only).

    The gate prints the public verdict, pass or flagged and nothing more; counts and the matched suite text go to
    --report alone.
    Evaluation writes a version-2 results record; an interrupted run resumes from its episodes log in --out.
    """
    if not contamination_only:
        missing = [name for name, value in (("--adapter", adapter), ("--training-manifest", training_manifest),
                                            ("--out", out)) if value is None]
        if missing:
            raise click.UsageError(f"evaluation needs {', '.join(missing)} (or run --contamination-only)")
        assert adapter is not None and training_manifest is not None and out is not None
        _evaluate(path, _suite(suite_path), ScoreOptions(adapter, training_manifest, out, PROFILES[profile], backend,
                                                       base_model, gate, commit, pr, contributor))
        return
    suite = _suite(suite_path)
    say = lambda text: click.echo(text, err=True)  # noqa: E731
    with instance_progress("suite instances") as progress:
        try:
            result = run_gate(suite, path, load_package(path).package, samples, progress=progress, say=say)
        except GateError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.CHECK_FAILED)
    if report_path is not None:
        report_path.write_text(json.dumps(result.maintainer_report(), indent=2) + "\n", encoding="utf-8")
    if output_format == "json":
        click.echo(json.dumps(result.public(), indent=2))
    else:
        click.echo(f"contamination gate: {result.verdict} against suite {suite.name} {suite.version}"
                   + (" (the matches are in the maintainers' report)" if report_path and result.matches else ""))
    sys.exit(ExitCode.OK if result.verdict == "pass" else ExitCode.CHECK_FAILED)
