"""`arena train`: post-train a model on one environment (GRPO + LoRA over sandbox episodes)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from arena.exit_codes import TRAIN_EPILOG, ExitCode
from sandbox.engine import EngineUnavailable
from taskpkg.loader import load_package
from training.evaluate import EvaluationError
from training.evidence import RunStatus, closing_block
from training.learnability import check_learnability
from training.pins import PinError
from training.preflight import refusal
from training.recipe import RecipeError, load_recipe, recipe_names
from training.run import TrainingError, TrainOptions, train


@click.command(name="train", epilog=TRAIN_EPILOG)
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--recipe", "recipe_spec", default="cpu-small", show_default=True, metavar="NAME|FILE",
              help=f"A shipped recipe ({', '.join(recipe_names())}) or a recipe file.")
@click.option("--out", type=click.Path(path_type=Path), help="Folder for the adapter, checkpoints, "
              "metrics, transcripts and the manifest.")
@click.option("--resume", is_flag=True, help="Continue the run in --out from its newest complete checkpoint.")
@click.option("--skip-preflight", "--skip-calibration", "skip_calibration", is_flag=True,
              help="Train even if the learnability pre-flight refuses (no signal for GRPO).")
@click.option("--preflight", "preflight_only", is_flag=True, help="Run only the learnability pre-flight: print its "
              "signal table and verdict (exit 1 when it refuses); --out is optional.")
@click.option("--steps", type=click.IntRange(min=1), help="Override the recipe's grpo.steps (recorded in the "
              "manifest).")
@click.option("--commit", help="The environment's commit to record (default: the checkout's, when clean).")
def train_command(path: Path, recipe_spec: str, out: Path | None, resume: bool, skip_calibration: bool,
                  preflight_only: bool, steps: int | None, commit: str | None) -> None:
    """Post-train the recipe's base model on the environment at PATH, then check held-out instances."""
    loaded = load_package(path)
    if loaded.package is None:
        for d in loaded.diagnostics:
            click.echo(f"{d.severity.value} {d.check_id} {d.location()}: {d.message}", err=True)
        click.echo(f"arena: {path} does not load; run `arena check --static {path}`", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    try:
        recipe = load_recipe(recipe_spec, steps)
    except RecipeError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.USAGE)
    if out is None and not preflight_only:
        raise click.UsageError("--out is required (a folder for the adapter, checkpoints and manifest)")
    try:
        if preflight_only:
            report = check_learnability(loaded.package, recipe, out)
            sys.exit(ExitCode.CHECK_FAILED if refusal(report) else ExitCode.OK)
        assert out is not None
        outcome = train(loaded.package, recipe, TrainOptions(out, resume, skip_calibration, commit))
    except (TrainingError, EvaluationError) as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT if exc.environment else ExitCode.CHECK_FAILED)
    except (EngineUnavailable, PinError) as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    click.echo(closing_block(outcome.manifest), err=outcome.status != RunStatus.COMPLETED)
    if outcome.status == RunStatus.NO_EFFECTIVE_UPDATE:
        click.echo(f"arena: training had no effective update (exit 1); the run is not scored; manifest in "
                   f"{out / 'manifest.json'}", err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    if outcome.status != RunStatus.COMPLETED:
        click.echo(f"arena: training stopped (exit 1), for the reason above; manifest in {out / 'manifest.json'}",
                   err=True)
        sys.exit(ExitCode.CHECK_FAILED)
    click.echo(f"trained {outcome.manifest.steps} step(s); adapter in {out / 'adapter'}, manifest in "
               f"{out / 'manifest.json'}")
