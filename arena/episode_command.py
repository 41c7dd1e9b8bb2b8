"""`arena run` (one episode with a scripted agent or a model, shown step by step) and `arena gc` (remove leftovers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from docker.errors import DockerException
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from agents.backends import BackendError, Sampling, open_backend
from agents.chat import ChatSettings, run_chat_episode
from agents.models import SMALL_MODEL, ModelUnavailable
from agents.scripted import nop_agent, oracle_agent
from arena.exit_codes import EPILOG, ExitCode
from sandbox.agent_interface import Agent
from sandbox.cleanup import collect_garbage, leftovers
from sandbox.engine import EngineUnavailable, connect
from sandbox.images import BuildFailed
from sandbox.outcomes import EpisodeOutcome
from sandbox.sandbox import EpisodeResult, Sandbox
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from validators.dynamic.probes import PROBES

AGENTS = ("oracle", "nop", "model", *(f"probe:{name}" for name in PROBES))


def make_agent(name: str, package: TaskPackage) -> Agent:
    """A scripted agent by its CLI name."""
    if name == "oracle":
        return oracle_agent(package)
    if name == "nop":
        return nop_agent()
    return PROBES[name.removeprefix("probe:")]()


@click.command(name="run", epilog=EPILOG)
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--agent", "agent_name", type=click.Choice(AGENTS), default="oracle", show_default=True)
@click.option("--instance", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--format", "output_format", type=click.Choice(("human", "json")), default="human", show_default=True)
@click.option("--model", "model_spec", default=SMALL_MODEL, show_default=True, metavar="PATH|URL|NAME",
              help="With --agent model: a checkpoint folder, an OpenAI-compatible endpoint URL (key in "
                   "$ARENA_MODEL_API_KEY), or the bundled small model's name.")
@click.option("--model-name", help="With an endpoint URL: the served model to use (default: the first it lists).")
@click.option("--adapter", type=click.Path(exists=True, file_okay=False), help="A LoRA adapter folder for a local "
              "model (the adapter/ that `arena train` writes).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=256, show_default=True,
              help="Tokens per model reply.")
@click.option("--temperature", type=click.FloatRange(min=0), default=0.7, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
def run_command(path: Path, agent_name: str, instance: int, output_format: str, model_spec: str,
                model_name: str | None, adapter: str | None, max_new_tokens: int, temperature: float,
                seed: int) -> None:
    """Run one episode of a scripted agent or a model on one instance; show its transcript and reward."""
    package = package_and_instance(path, instance)
    settings = ChatSettings(Sampling(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed))
    try:
        backend = open_backend(model_spec, served_name=model_name, adapter=adapter) if agent_name == "model" else None
    except (BackendError, ModelUnavailable) as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    try:
        with Sandbox() as sandbox:
            if backend is not None:
                result = run_chat_episode(sandbox.open_episode(package, instance, f"model:{backend.name}"), backend,
                                          settings)
            else:
                result = sandbox.run_episode(package, instance, make_agent(agent_name, package))
    except (EngineUnavailable, DockerException) as exc:
        click.echo(f"arena: the Docker engine failed: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    except BuildFailed as exc:
        click.echo(f"arena: {exc}\n{exc.log}", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    if output_format == "json":
        click.echo(json.dumps(episode_json(result), indent=2))
    else:
        show_episode(result, Console())
    sys.exit(ExitCode.OK if result.outcome == EpisodeOutcome.SCORED else ExitCode.CHECK_FAILED)


def package_and_instance(path: Path, instance: int) -> TaskPackage:
    """The package at path, for a command on one of its instances; exits 1 (its findings shown) when it does not
    load, and is a usage error for an instance it does not have."""
    loaded = load_package(path)
    if loaded.package is None:
        for d in loaded.diagnostics:
            click.echo(f"{d.severity.value} {d.check_id} {d.location()}: {d.message}", err=True)
        click.echo(f"arena: {path} does not load; run `arena check --static {path}`", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    if instance >= loaded.package.instance_count:
        raise click.BadParameter(f"{loaded.package.name} has instances 0..{loaded.package.instance_count - 1}",
                                 param_hint="--instance")
    return loaded.package


def episode_json(result: EpisodeResult) -> dict:
    """An episode as JSON."""
    return {"package": result.package, "instance": result.instance, "agent": result.agent, "outcome": result.outcome,
            "reward": result.reward, "details": result.details, "error": result.error, "limit_hit": result.limit_hit,
            "prompt_values": result.prompt_values, "timings": result.timings,
            "peak_memory_mb": result.peak_memory_mb, "transcript": result.transcript.to_list(),
            "conversation": result.conversation}


def show_episode(result: EpisodeResult, console: Console) -> None:
    """The transcript (a model's whole conversation), step by step, then the verdict."""
    console.print(Text(f"{result.package} · instance {result.instance} · agent {result.agent}", style="bold"))
    if result.conversation:
        show_conversation(result, console)
    for entry in [] if result.conversation else result.transcript.entries:
        title = f"[{entry.scene}] {_action_title(entry.action)}"
        body = entry.error or ""
        if entry.result and "exit_code" in entry.result:
            body = (entry.result["stdout"] + entry.result["stderr"]).rstrip()[-2000:]
            title += f"  → exit {entry.result['exit_code']}" + (" (timed out)" if entry.result["timed_out"] else "")
        console.print(Panel(Text(body or "(no output)"), title=title, title_align="left", expand=True))
    scored = result.outcome == EpisodeOutcome.SCORED
    verdict = f"reward {result.reward}" if scored else f"{result.outcome}: {result.error}"
    style = "green" if result.reward == 1.0 else "yellow" if scored else "red"
    console.print(Text(verdict, style=f"bold {style}"))
    if result.details:
        console.print(Text(json.dumps(result.details)[:2000], style="dim"))
    timings = ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items())
    console.print(Text(f"timings (s): {timings}; peak memory {result.peak_memory_mb} MiB", style="dim"))


def _action_title(action: dict) -> str:
    if "command" in action:
        return f"$ {action['command']}"
    if "path" in action:
        return f"write {action['path']}"
    return f"invalid: {action.get('attempted', '')[:200]}"


def show_conversation(result: EpisodeResult, console: Console) -> None:
    """A model's conversation: the prompts it was given, its replies and calls, and what each call returned."""
    styles = {"system": "dim", "user": "blue", "assistant": "cyan", "tool": "white"}
    for message in result.conversation:
        body = message.get("content") or ""
        for call in message.get("tool_calls") or []:
            body += f"\n→ {call['function']['name']}({json.dumps(call['function']['arguments'])[:1500]})"
        title = message["role"] if message["role"] != "tool" else f"tool result: {message.get('name', '')}"
        console.print(Panel(Text(body.strip()[-3000:] or "(empty)"), title=title, title_align="left",
                            border_style=styles.get(message["role"], "white")))


@click.command(name="gc", epilog=EPILOG)
@click.option("--images", "include_images", is_flag=True, help="Also remove cached environment images.")
@click.option("--package", "package", metavar="NAME", help="Only what belongs to this package (its name).")
@click.option("--dry-run", is_flag=True, help="List what would be removed, and remove nothing.")
def gc_command(include_images: bool, package: str | None, dry_run: bool) -> None:
    """Remove containers and snapshots the arena left behind (a crash, a kill -9): every package's, or one's."""
    try:
        client = connect()
    except EngineUnavailable as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    if dry_run:
        found = leftovers(client, include_images, package=package)
        for leftover in found:
            click.echo(f"would remove {leftover.what} {leftover.id.removeprefix('sha256:')[:12]} ({leftover.kind}"
                       f"{', ' + leftover.package if leftover.package else ''})")
        click.echo(f"{len(found)} to remove; nothing removed (--dry-run)")
        return
    removed = collect_garbage(client, include_images, package=package)
    click.echo(f"removed {removed['containers']} container(s) and {removed['images']} image(s)"
               + (f"; {removed['failed']} could not be removed yet (in use), run again" if removed["failed"] else ""))
