"""`arena import` (BenchFlow, Harbor or older Terminal-Bench task → native package) and `arena export` (→ Harbor)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from arena.exit_codes import EPILOG, ExitCode
from sandbox.engine import engine_available
from sandbox.instances import SetupError
from sandbox.sandbox import Sandbox
from taskpkg.check_report import Report
from taskpkg.discover import display_path
from taskpkg.domains import DOMAINS
from taskpkg.package import TaskPackage
from validators.render_human import render_human
from validators.static import run_static_checks

if TYPE_CHECKING:
    from interop.export.harbor import InstanceMaker


def _sandboxed_instance_maker() -> InstanceMaker | None:
    """Make instance 0 in the sandbox where an engine answers (package code never runs on this machine then)."""
    from interop import InteropError  # the interop formats load only for these two commands
    if not engine_available():
        click.echo("note: no Docker engine answers, so the generator runs on this machine for instance 0", err=True)
        return None

    def make(package: TaskPackage, scratch: Path) -> tuple[dict, Path]:
        workspace = scratch / "workspace"
        with Sandbox() as sandbox:
            try:
                values = sandbox.make_instance(package, 0, workspace)
            except SetupError as exc:
                raise InteropError(package.generator, f"failed for instance 0: {exc}", "Fix the generator.") from None
        return values, workspace

    return make


@click.command(name="import", epilog=EPILOG)
@click.argument("src", type=click.Path(exists=True, path_type=Path))
@click.option("--name", help="Package name (default: the source's name as a slug).")
@click.option("--domain", "-d", type=click.Choice(DOMAINS),
              help="Domain (default: proposed from the source's metadata).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("environments"),
              show_default=True, help="Folder to write the package into.")
@click.option("--github", help="GitHub handle for an author the source names without one.")
@click.option("--license", "license_id", help="SPDX licence when the source declares none.")
@click.option("--verbose", "-v", is_flag=True, help="Show notes (info-level findings) too.")
def import_command(src: Path, name: str | None, domain: str | None, out: Path, github: str | None,
                   license_id: str | None, verbose: bool) -> None:
    """Import a BenchFlow (task.md), Harbor (task.toml) or older Terminal-Bench (task.yaml) task, then static-check it.

    Prints what was mapped (with -v), what was lost and what is still to do, each with its file and line; a to-do the
    static check reports at the same place is shown once, by the check. Exit 2 means nothing was written (the
    message says why); 1 means the package was written but the static check found errors to fix.
    """
    from interop import InteropError, import_task

    try:
        result = import_task(src, out, name, domain, github=github, license=license_id)
    except InteropError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.USAGE)
    click.echo(f"Imported the {result.source_format} task {src} as {display_path(result.package_path)}/")
    checked = run_static_checks(result.package_path, display_path(result.package_path))
    places = {f"{d.file}:{d.line}" for d in checked.diagnostics if d.file and d.line}
    sections = (("Mapped", result.report.mapped if verbose else []), ("Lost", result.report.lost),
                ("To do", result.todo_except(places)))
    for heading, lines in sections:
        if lines:
            click.echo(f"\n{heading} ({len(lines)}):")
            click.echo("\n".join(f"  - {line}" for line in lines))
    if not verbose:
        click.echo(f"\n({len(result.report.mapped)} mapped fields and notes: -v shows them)")
    click.echo("")
    report = Report(mode="static", packages=[checked])
    render_human(report, Console(), verbose)
    sys.exit(ExitCode.OK if report.passed else ExitCode.CHECK_FAILED)


@click.command(name="export", epilog=EPILOG)
@click.argument("package", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["harbor"]), required=True, help="Target format.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Folder to write into.")
def export_command(package: Path, output_format: str, out: Path) -> None:
    """Export a native package as a Harbor task (instance 0), which Harbor's own loader accepts."""
    report = run_static_checks(package, display_path(package))
    if not report.passed:
        render_human(Report(mode="static", packages=[report]), Console(), False)
        click.echo("error: fix the errors above before exporting", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    from interop import InteropError, PackageHasErrors, export_harbor, harbor_needed_by

    try:
        target = export_harbor(package, out, _sandboxed_instance_maker())
    except PackageHasErrors as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    except InteropError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.USAGE)
    click.echo(f"Wrote the Harbor task {display_path(target)}/ (instance 0 of {report.name}); it needs Harbor "
               f"{harbor_needed_by(target)} or later")
