"""`arena show PATH --instance N`: the rendered prompt and the files the agent starts with. Wiring only: the view is
made by sandbox.instance_view."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click
from docker.errors import DockerException
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.episode_command import package_and_instance
from arena.exit_codes import EPILOG, ExitCode
from sandbox.engine import EngineUnavailable
from sandbox.images import BuildFailed
from sandbox.instance_view import InstanceView, view_instance
from sandbox.instances import SetupError
from sandbox.sandbox import Sandbox


@click.command(name="show", epilog=EPILOG)
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--instance", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the instance's files in this new folder (default: shown, then deleted).")
@click.option("--format", "output_format", type=click.Choice(("human", "json")), default="human", show_default=True)
def show_command(path: Path, instance: int, out: Path | None, output_format: str) -> None:
    """Make one instance in the sandbox and show what the agent starts with: the prompt, scene by scene, with the
    generator's values filled in, and the files in /workspace."""
    package = package_and_instance(path, instance)
    with tempfile.TemporaryDirectory(prefix="arena-show-") as scratch:
        try:
            with Sandbox() as sandbox:
                view = view_instance(sandbox, package, instance, out or Path(scratch) / "workspace")
        except (EngineUnavailable, DockerException) as exc:
            click.echo(f"arena: the Docker engine failed: {exc}", err=True)
            sys.exit(ExitCode.ENVIRONMENT)
        except FileExistsError as exc:
            raise click.BadParameter(str(exc), param_hint="--out") from None
        except BuildFailed as exc:
            click.echo(f"arena: {exc}\n{exc.log}", err=True)
            sys.exit(ExitCode.CHECK_FAILED)
        except SetupError as exc:
            click.echo(f"arena: instance {instance} could not be made: {exc}", err=True)
            sys.exit(ExitCode.CHECK_FAILED)
        if output_format == "json":
            click.echo(json.dumps({**view.to_dict(), "folder": str(out) if out else None}, indent=2))
        else:
            _show(view, Console(), kept=out is not None)


def _show(view: InstanceView, console: Console, kept: bool) -> None:
    console.print(Text(f"{view.package} · instance {view.instance}", style="bold"))
    for prompt in view.prompts:
        console.print(Panel(Text(prompt.text), title=f"[{prompt.scene}] {prompt.speaker}", title_align="left"))
    table = Table("file in /workspace", "bytes", "mode")
    for file in view.files:
        table.add_row(file.path, str(file.size), f"{file.mode:o}")
    console.print(table if view.files else Text("(/workspace is empty)", style="dim"))
    if kept:
        console.print(Text(f"files kept in {view.folder}", style="dim"))
