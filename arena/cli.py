"""The `arena` CLI: new, check, list, schema and bot here; the other commands are wired in from their modules."""

from __future__ import annotations

import importlib
import json
import os
import shlex
import signal
import sys
from pathlib import Path

import click
from docker.errors import DockerException
from rich.console import Console

from arena.episode_command import gc_command, run_command
from arena.exit_codes import EPILOG, ExitCode
from arena.explain_command import explain_command
from arena.interop_commands import export_command, import_command
from arena.repo_commands import changed_command, site_group
from arena.show_command import show_command
from sandbox.engine import EngineUnavailable
from taskpkg.check_report import Report, report_schema
from taskpkg.discover import display_path, find_packages
from taskpkg.domains import DOMAINS
from taskpkg.scaffold import ScaffoldError, scaffold
from taskpkg.schema import schema_text
from validators.checking import check_packages
from validators.dynamic import DEFAULT_INSTANCES
from validators.render_github import render_github
from validators.render_human import render_human
from validators.static import run_static_checks
from validators.static.lint import LintUnavailable, fix_package

FORMATS = ("human", "json", "github")


# Commands whose modules import heavy libraries (scoring's numpy and scipy, training's, docker's), loaded only when
# run, so that `arena check`, `arena --help` and the other contributor commands start quickly. Each carries its
# one-line summary for `arena --help` (tests/test_cli.py checks it is the command's own).
LAZY_COMMANDS = {
    "score": ("arena.suite_commands", "score_command",
              "Score an environment: the trained model against the base on the held-out suite, or only the "
              "contamination gate (--contamination-only)."),
    "suite": ("arena.suite_commands", "suite_group",
              "Build, check and index a held-out suite (its location: --suite PATH or ARENA_SUITE)."),
    "train": ("arena.train_command", "train_command",
              "Post-train the recipe's base model on the environment at PATH, then check held-out instances."),
    "launch": ("arena.launch_command", "launch_command",
               "Train and score the environment at PATH as one job: contamination gate, `arena train`, "
               "`arena score`."),
    "jobs": ("arena.launch_command", "jobs_group",
             "Jobs started by `arena launch` on this machine (records under ARENA_LAUNCH_DIR)."),
}


class _LazyGroup(click.Group):
    """A group that imports a command's module only when the command is looked up (not to list it in --help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, name, _ = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None and name in LAZY_COMMANDS:
                rows.append((name, click.utils.make_default_short_help(LAZY_COMMANDS[name][2], limit)))
            elif command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="posttrain-arena", prog_name="arena")
def cli() -> None:
    """PostTrain Arena: write, check and submit RL environments.

    Start with `arena new NAME --domain D`, fill in every TODO(arena) the check points at, run `arena check`, then
    open a pull request adding environments/NAME/.
    """


@cli.command(epilog=EPILOG)
@click.argument("name")
@click.option("--domain", "-d", required=True, type=click.Choice(DOMAINS), help="One of the arena's eight domains.")
@click.option("--into", type=click.Path(file_okay=False, path_type=Path), default=Path("environments"),
              show_default=True, help="Folder to create the package in.")
def new(name: str, domain: str, into: Path) -> None:
    """Create environments/NAME/ from a working example with TODO(arena) placeholders."""
    try:
        target = scaffold(name, domain, into)
    except ScaffoldError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Created {target}/. Next: replace every TODO(arena), then run:\n  arena check {target}")


@cli.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--static", "static_only", is_flag=True, help="Only the checks that need no Docker engine.")
@click.option("--dynamic", "dynamic_required", is_flag=True,
              help="Fail with exit code 3 if no Docker engine answers, instead of skipping the dynamic checks.")
@click.option("--instances", type=click.IntRange(1, 50), default=DEFAULT_INSTANCES, show_default=True,
              help="Distinct instances made and compared (ARENA715); the oracle runs on six of them, spread among "
                   "them (the do-nothing agent on its first three), and the answer probes submit its answers there.")
@click.option("--no-cache", is_flag=True, envvar="ARENA_NO_CACHE",
              help="Run the dynamic checks even when nothing changed since the last run (env: ARENA_NO_CACHE=1).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="human", show_default=True,
              help="human: for a terminal; json: the versioned report; github: annotations and a job summary.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the JSON report to this file.")
@click.option("--verbose", "-v", is_flag=True, help="Show notes (info-level findings) too.")
def check(paths: tuple[Path, ...], static_only: bool, dynamic_required: bool, instances: int, no_cache: bool,
          output_format: str, output: Path | None, verbose: bool) -> None:
    """Check packages (default: every package under environments/).

    PATHS are package folders or folders of packages. Each finding has a stable id (ARENAxxx; `arena explain ARENAxxx`
    tells more), a severity, the file and line, and how to fix it. Without --static, the dynamic checks (build,
    oracle on several instances, the do-nothing floor, determinism, network isolation, answer leaks, the tamper
    suite, fit) run on a Docker engine.
    """
    packages = find_packages(list(paths))
    if not packages:
        raise click.UsageError("no packages found; pass a package folder such as environments/NAME")
    mode = "static" if static_only else "dynamic" if dynamic_required else "auto"
    try:
        report = check_packages(packages, mode, instances, show_progress=output_format == "human" or mode != "static",
                                use_cache=not no_cache)
    except EngineUnavailable as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    except DockerException as exc:
        click.echo(f"arena: the Docker engine failed: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    if output is not None:
        output.write_text(report.to_json() + "\n", encoding="utf-8")
    if output_format == "json":
        click.echo(report.to_json())
    elif output_format == "github":
        _emit_github(report, packages, static_only)
    else:
        render_human(report, Console(), verbose)
    sys.exit(ExitCode.OK if report.passed else ExitCode.ENVIRONMENT if report.arena_fault else ExitCode.CHECK_FAILED)


def _emit_github(report: Report, packages: list[Path], static_only: bool) -> None:
    command = ["arena", "check", *(["--static"] if static_only else []), *map(display_path, packages)]
    annotations, summary = render_github(report, shlex.join(command))
    for line in annotations:
        click.echo(line)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as handle:
            handle.write(summary + "\n")
    else:
        click.echo(summary)


@cli.command(epilog=("Exit codes: 0 nothing wrong is left (style findings may be, as warnings); 1 an error is left "
                      "to fix by hand (ARENA008); 2 no package at PATH; 3 ruff could not run."))
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def fix(paths: tuple[Path, ...]) -> None:
    """Apply the repository's lint fixes and formatter (ruff, pyproject.toml's settings) to packages' Python.

    PATHS are package folders or folders of packages (default: environments/). Every Python file outside
    environment/ gets ruff's safe fixes, then its formatter; what is left is listed with its line: errors
    (ARENA008) to fix by hand, style (ARENA010) to judge.
    """
    packages = [p for p in find_packages(list(paths)) if p.is_dir()]
    if not packages:
        raise click.UsageError("no packages found; pass a package folder such as environments/NAME")
    errors = 0
    for package in packages:
        try:
            outcome = fix_package(package, display_path(package))
        except LintUnavailable as exc:
            click.echo(f"arena: {exc}", err=True)
            sys.exit(ExitCode.ENVIRONMENT)
        changed = ", ".join(outcome.changed) if outcome.changed else "none"
        click.echo(f"{display_path(package)}: {len(outcome.changed)} file(s) fixed or reformatted ({changed}); "
                   + (f"{len(outcome.left)} finding(s) left:" if outcome.left else "nothing left"))
        for finding in outcome.left:
            click.echo(f"  {finding.severity.value:7} {finding.check_id}  {finding.location()}  {finding.message}")
        errors += sum(f.severity.value == "error" for f in outcome.left)
    sys.exit(ExitCode.CHECK_FAILED if errors else ExitCode.OK)


@cli.command(name="list", epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "output_format", type=click.Choice(("human", "json")), default="human", show_default=True)
def list_packages(paths: tuple[Path, ...], output_format: str) -> None:
    """List packages with their domain, instance count and status (static check)."""
    rows = []
    for path in find_packages(list(paths)):
        report = run_static_checks(path, display_path(path))
        rows.append({"name": report.name or path.name, "domain": report.domain, "instances": report.instances,
                     "status": "ok" if report.passed else "errors", "title": report.title or "",
                     "path": report.path})
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table("name", "domain", "instances", "status", "title")
    for row in rows:
        status = "[green]ok[/]" if row["status"] == "ok" else "[red]errors[/] (arena check)"
        table.add_row(row["name"], row["domain"] or "-", str(row["instances"] or "-"), status, row["title"])
    Console().print(table)


@cli.command(epilog=EPILOG)
@click.option("--report", "which", flag_value="report", help="Print the JSON report's schema instead.")
@click.option("--task", "which", flag_value="task", default=True, help="Print the task.md frontmatter schema.")
def schema(which: str) -> None:
    """Print a JSON Schema (default: task.md frontmatter, for editor completion)."""
    click.echo(schema_text() if which == "task" else json.dumps(report_schema(), indent=2))


@cli.group(name="bot", invoke_without_command=True,
           epilog=("Exit codes: 0 handled (failures are explained on the PR); 1 the bot could not post an explanation; "
                   "2 a required variable (GITHUB_*, ARENA_BOT_LOGIN) or the event file is missing. bot/main.py lists "
                   "every variable."))
@click.pass_context
def bot_group(ctx: click.Context) -> None:
    """Handle this GitHub Actions run's event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_TOKEN, ...).

    workflow_run: publish the validation verdict on the PR; pull_request_target: base, scope and a pending check for
    the PR's head; issue_comment: /arena help|check|train|status|cancel. The launch job and the jobs workflow run the
    subcommands.
    """
    if ctx.invoked_subcommand is None:
        from bot.main import main as run_bot

        run_bot()


@bot_group.command(name="confirm-launch", epilog=("Exit codes: 0 confirmed; 1 not confirmed (nothing may launch); 2 a "
                                                  "required variable (ARENA_LAUNCH_REQUEST, GITHUB_*) is missing."))
def bot_confirm_launch() -> None:
    """In the launch job: confirm ARENA_LAUNCH_REQUEST against the bot's accepted reply on the PR."""
    from bot.main import main as run_bot

    run_bot("confirm-launch")


@bot_group.command(name="launch", epilog=("Exit codes: 0 the job started, was found running or done, or the refusal "
                                          "was written on the PR; 1 the request is not confirmed or the launch "
                                          "failed; 2 a required variable is missing."))
def bot_launch() -> None:
    """In the launch job: confirm ARENA_LAUNCH_REQUEST, then start (or cancel) its job."""
    from bot.main import main as run_bot

    run_bot("launch")


@bot_group.command(name="poll-jobs", epilog=("Exit codes: 0 every job was brought up to date; 1 polling failed for "
                                             "some job; 2 a required variable is missing."))
def bot_poll_jobs() -> None:
    """In the jobs workflow: bring every active job up to date and publish finished results."""
    from bot.main import main as run_bot

    run_bot("poll-jobs")


for command in (run_command, show_command, gc_command, explain_command, import_command, export_command,
                changed_command, site_group):
    cli.add_command(command)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point; SIGTERM behaves like Ctrl-C, and both clean up and exit with 130."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        cli(standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except LintUnavailable as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
