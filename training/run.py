"""One `arena train` run: check the machine, prepare the base model, calibrate, train with GRPO + LoRA over sandbox
episodes, save the adapter, check held-out instances, write the manifest.

Artifacts in the output folder:
- `adapter/` the LoRA adapter (written whole, then renamed into place);
- `checkpoints/checkpoint-N/` for `--resume` (a preempted run continues from the newest complete one);
- `metrics.jsonl` one line per step (reward, tool calls, verifier errors, episode timings, the trainer's numbers);
- `transcripts/` sample rollouts; `preflight.json`, `in-domain.json`, `segments.json`;
- `manifest.json` written last: the package and image digests, commit, recipe and its hash, seeds, library
  versions, hardware, wall time and GPU-hours, the evidence that the update happened, and how the run ended
  (completed, stopped, or no_effective_update: trained without any evidence of an update, and never scored).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.models import LocalModel, ModelUnavailable, resolve_local_model
from sandbox.sandbox import Sandbox
from taskpkg.digest import git_commit, tree_digest
from taskpkg.layouts import ADAPTER_DIR, CHECKPOINTS_DIR, MANIFEST_FILE
from taskpkg.package import TaskPackage
from taskpkg.run_manifest import TrainingManifest
from training.environment import RolloutPool
from training.evaluate import chat_settings
from training.evidence import RunStatus, lora_change, lora_snapshot, no_update_reason, update_evidence
from training.in_domain import in_domain_lift
from training.manifest import folder_digest, hardware, library_versions, now_iso
from training.metrics import Progress, RunLog
from training.pins import check_pin, hub_snapshot
from training.preflight import preflight_gate, preflight_refusal
from training.recipe import Recipe
from training.segments import SegmentClock
from training.trainer import build_trainer, latest_checkpoint
from training.warmup import warmed_base

if TYPE_CHECKING:  # TRL is imported when the trainer is built (training.trainer)
    from trl import GRPOTrainer


class TrainingError(RuntimeError):
    """The run cannot go on; the message says why and what to do. `environment` marks a missing prerequisite (exit
    3) rather than a problem with the package or the input (exit 1)."""

    def __init__(self, message: str, environment: bool = False) -> None:
        super().__init__(message)
        self.environment = environment


@dataclass(frozen=True)
class TrainOptions:
    """How to run: where to write, whether to resume, whether to calibrate first, and the commit to record."""

    out: Path
    resume: bool = False
    skip_calibration: bool = False
    commit: str | None = None


@dataclass(frozen=True)
class TrainOutcome:
    """How a run ended (see RunStatus), with the reason when it did not complete."""

    status: RunStatus
    reason: str | None
    manifest: TrainingManifest


def split_seeds(count: int, shuffle_seed: int, heldout: int) -> tuple[list[int], list[int]]:
    """Instances for training and a disjoint held-out set, from a seeded shuffle of 0..count-1."""
    order = list(range(count))
    random.Random(f"arena-seeds/{shuffle_seed}").shuffle(order)
    kept = min(heldout, max(1, count // 5))
    return order[kept:], order[:kept]


def check_machine(recipe: Recipe) -> int:
    """The GPUs the recipe will use; fails early, before anything is loaded, when the machine cannot run it."""
    try:
        import torch
        import transformers  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        raise TrainingError(f"training needs the train extra ({exc.name} is missing): run scripts/setup, or "
                            "pip install -e '.[train]'", environment=True) from None
    if not recipe.on_gpu:
        return 0
    if not torch.cuda.is_available():
        kinds = ", ".join(recipe.hardware.gpu_types or ("any",))
        raise TrainingError(f"the recipe {recipe.name} needs a CUDA GPU ({kinds}) and this machine has none; run it "
                            "on a GPU machine (arena launch --backend skypilot) or "
                            "use --recipe cpu-small here", environment=True)
    if recipe.generation.backend == "vllm":
        try:
            import vllm  # noqa: F401
        except ImportError:
            raise TrainingError("the recipe generates with vLLM: pip install -e '.[gpu]'", environment=True) from None
    return int(torch.cuda.device_count())


def base_model(recipe: Recipe, say: Callable[[str], None]) -> tuple[str, dict[str, Any]]:
    """The base the LoRA trains on (warm-up merged in where the recipe says) and how to name it in manifests."""
    spec = recipe.model.base
    try:
        local = resolve_local_model(spec)
    except ModelUnavailable as exc:
        if Path(spec).exists() or "/" not in spec or spec.startswith("."):
            raise TrainingError(str(exc), environment=True) from None
        revision = recipe.model.revision
        snapshot = hub_snapshot(spec, revision)  # the pinned commit's files: what training and scoring both load
        return snapshot, {"name": spec, "revision": revision, "path": snapshot, "source": "hub"}
    check_pin(recipe, local)  # the bundled model must be the revision the recipe pins
    try:  # a kept warm-up adapter that fails its digest check stops the run with what to do
        warmed: LocalModel = warmed_base(local, recipe.model.warmup, say)
    except ModelUnavailable as exc:
        raise TrainingError(str(exc), environment=True) from None
    return str(warmed.path), {"name": warmed.name, "revision": warmed.revision, "path": str(warmed.path),
                              "source": "local"}


def prepare_output(out: Path, resume: bool, skip_preflight: bool, rerun: str) -> dict[str, Any] | None:
    """An empty (or new) output folder, the folder of the run being resumed, or the folder of a run the pre-flight
    refused, trained anyway with --skip-preflight. Returns the pre-flight such a run overrides (or None); `rerun` is
    the command that trains anyway, for the message."""
    if resume:
        if not out.is_dir():
            raise TrainingError(f"{out}: nothing to resume (the folder does not exist); run without --resume")
        return preflight_refusal(out) if skip_preflight else None
    if out.exists() and any(out.iterdir()):
        refused = preflight_refusal(out)
        if refused and skip_preflight:
            return refused
        if refused:
            raise TrainingError(f"{out}: the pre-flight stopped the run in this folder "
                                f"({refused['verdict']['reason']}); to train anyway here, run: {rerun}")
        raise TrainingError(f"{out}: the folder is not empty; pass --resume to continue the run in it, or choose a "
                            "new --out")
    out.mkdir(parents=True, exist_ok=True)
    return None


def rerun_command(package: TaskPackage, recipe: Recipe, out: Path) -> str:
    """The exact `arena train` command that trains this run anyway (--skip-preflight)."""
    spec = recipe.name if recipe.source == f"training/recipes/{recipe.name}.yaml" else recipe.source
    steps = recipe.overrides.get("grpo.steps")
    return (f"arena train {package.root} --recipe {spec} --out {out}" + (f" --steps {steps}" if steps else "") +
            " --skip-preflight")


def train(package: TaskPackage, recipe: Recipe, options: TrainOptions,
          progress: Progress | None = None) -> TrainOutcome:
    """The whole run. Raises TrainingError (with what to do) when it cannot start or go on."""
    progress = progress or Progress(recipe.grpo.steps)
    say = progress.say
    gpus = check_machine(recipe)
    overridden = prepare_output(options.out, options.resume, options.skip_calibration,
                                rerun_command(package, recipe, options.out))
    clock = SegmentClock(options.out, options.resume, gpus)  # wall time and GPU-hours over every segment of the run
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental: docs/TRAINING.md
    started, wall_started = now_iso(), time.monotonic()
    train_instances, heldout = split_seeds(package.instance_count, recipe.seeds.shuffle_seed,
                                           recipe.seeds.heldout)
    base, base_info = base_model(recipe, say)
    manifest = TrainingManifest(
        environment=package.name, package_digest="sha256:" + tree_digest(package.root, frozenset({"__pycache__"})),
        commit=options.commit or git_commit(package.root),
        recipe={"name": recipe.name, "source": recipe.source, "digest": recipe.digest,
                "overrides": recipe.overrides, "data": recipe.data},
        base_model=base_info, seeds={"shuffle_seed": recipe.seeds.shuffle_seed,
                                     "train_instances": len(train_instances), "heldout": heldout},
        libraries=library_versions(), hardware=hardware(), started_at=started)
    with Sandbox() as sandbox, contextlib.closing(progress):
        try:
            manifest.image = sandbox.image(package).tag
        except Exception as exc:  # BuildFailed: the package's image does not build
            raise TrainingError(f"{package.root}/environment/Dockerfile: the image does not build: {exc}; run "
                                f"`arena check {package.root}`") from None
        status, reason = preflight_gate(sandbox, package, recipe, base, train_instances, options.out,
                                        options.skip_calibration, manifest, say, overridden)  # may refuse
        if status == RunStatus.COMPLETED:
            status, reason = _grpo(sandbox, package, recipe, base, train_instances, heldout, options, manifest,
                                   progress, gpus)
    clock.stop()
    manifest.finished_at, manifest.wall_s, manifest.gpus = now_iso(), round(time.monotonic() - wall_started, 1), gpus
    manifest.total_wall_s, manifest.gpu_hours, manifest.segments = clock.wall_s, clock.gpu_hours, len(clock.segments)
    manifest.status, manifest.reason = status, reason
    manifest.write(options.out / MANIFEST_FILE)
    return TrainOutcome(status, reason, manifest)


def _grpo(sandbox: Sandbox, package: TaskPackage, recipe: Recipe, base: str, train_instances: list[int],
          heldout: list[int], options: TrainOptions, manifest: TrainingManifest, progress: Progress,
          gpus: int) -> tuple[RunStatus, str | None]:
    out = options.out
    log = RunLog(out, recipe.transcripts.every_steps, recipe.transcripts.per_step, recipe.grpo.num_generations)
    checkpoint = latest_checkpoint(out / CHECKPOINTS_DIR) if options.resume else None
    if checkpoint is not None:
        resumed_at = int(checkpoint.name.removeprefix("checkpoint-"))
        log.forget_after(resumed_at)
        progress.say(f"resuming from {checkpoint.name}")
        manifest.resumed_from_step = resumed_at
    elif options.resume:
        log.forget_after(0)  # killed before its first checkpoint: it starts over, its earlier lines go
    chat = chat_settings(recipe, recipe.grpo.max_completion_length)
    pool = RolloutPool(sandbox, package, chat.tools, recipe.episodes.concurrency)
    try:
        trainer = build_trainer(recipe, base, train_instances, pool, log, progress, out / CHECKPOINTS_DIR, gpus > 0)
        before = lora_snapshot(trainer.model)
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    finally:
        pool.close()
    manifest.steps, manifest.trainer_summary, manifest.reward_curve = log.step, log.summary, log.curve[-500:]
    moved = lora_change(before, trainer.model)
    evidence = manifest.update_evidence = update_evidence(log.lines, moved)
    if log.stopped_because:
        return RunStatus.STOPPED, f"{log.stopped_because} (transcripts: {out / 'transcripts'})"
    if not evidence["effective"]:
        return RunStatus.NO_EFFECTIVE_UPDATE, no_update_reason(evidence)
    _save_adapter(trainer, out)
    manifest.adapter = {"path": ADAPTER_DIR, "digest": folder_digest(out / ADAPTER_DIR)}
    manifest.in_domain = in_domain_lift(sandbox, package, recipe, base, out, heldout, progress.say)
    return RunStatus.COMPLETED, None


def _save_adapter(trainer: GRPOTrainer, out: Path) -> None:
    """Write the adapter beside its place, then rename it in: never half an adapter."""
    staging = out / ".adapter-staging"
    shutil.rmtree(staging, ignore_errors=True)
    trainer.model.save_pretrained(staging)
    trainer.processing_class.save_pretrained(staging)
    shutil.rmtree(out / ADAPTER_DIR, ignore_errors=True)
    staging.rename(out / ADAPTER_DIR)
