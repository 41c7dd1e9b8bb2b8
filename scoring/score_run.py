"""One `arena score` run: base and trained model over the suite, the contamination verdict, then the version-2
record and its items file (scoring.record.write_run)."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from agents.backends import BackendError, ChatBackend
from agents.models import ModelUnavailable, resolve_local_model
from sandbox.sandbox import Sandbox
from scoring import contamination as gate
from scoring.evaluation import (
    CONCURRENCY,
    HARNESS_VERSION,
    PROFILES,
    RETRIES,
    EpisodeLog,
    EvaluationFailed,
    Outcome,
    Profile,
    arm_errors,
    base_cache_key,
    paired_items,
    play_arm,
    score_cache,
    selected_items,
)
from scoring.gate_run import GateError, run_gate
from scoring.record import RunInfo, SuiteInfo, TrainingSummary, write_run
from scoring.results import ResultRecord
from scoring.suite import Suite, suite_digest
from taskpkg.digest import tree_digest
from taskpkg.layouts import RESULTS_DIR
from taskpkg.package import TaskPackage
from taskpkg.run_manifest import RunStatus, TrainingManifest

HARDWARE_CHARS = 200
LIBRARIES = ("numpy", "posttrain-arena", "torch", "transformers", "peft", "trl", "vllm")  # recorded when installed


class ScoringError(RuntimeError):
    """The run cannot start or finish; `environment` marks a missing prerequisite (exit 3)."""

    def __init__(self, message: str, environment: bool = False) -> None:
        super().__init__(message)
        self.environment = environment


@dataclass(frozen=True)
class ScoreOptions:
    """Where the adapter and its training manifest are, where to write, and how."""

    adapter: Path
    training_manifest: Path
    out: Path
    profile: Profile = PROFILES["quick"]
    backend: str = "local"
    base_model: str | None = None
    gate: Path | None = None  # `arena score --contamination-only --format json` output, reused when given
    commit: str | None = None
    pr: int | None = None
    contributor: str | None = None
    concurrency: int = CONCURRENCY


def training_summary(manifest_path: Path) -> tuple[TrainingManifest, TrainingSummary]:
    """The training manifest, and its summary for the record."""
    try:
        raw = manifest_path.read_bytes()
        manifest = TrainingManifest.from_json(json.loads(raw))
        recipe = manifest.recipe or {}
        summary = TrainingSummary(
            manifest_digest="sha256:" + hashlib.sha256(raw).hexdigest(), recipe=recipe["name"],
            recipe_hash=recipe["digest"], steps=int(_written(manifest.steps, "steps")),
            gpu_hours=float(_written(manifest.gpu_hours, "gpu_hours")),
            wall_s=float(_written(manifest.wall_s, "wall_s")),
            hardware=_hardware(manifest.hardware or {}),
            reward_curve=tuple((int(s), float(r)) for s, r in (manifest.reward_curve or [])[-500:]),
            in_domain=in_domain_summary(manifest.in_domain), preflight=manifest.line("preflight"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ScoringError(f"{manifest_path}: not a completed training manifest ({exc}); pass the manifest.json "
                           "that `arena train` wrote") from None
    if manifest.status != RunStatus.COMPLETED:  # stopped, or no_effective_update: nothing trained to score
        raise ScoringError(f"{manifest_path}: the training run ended {manifest.status}, not completed "
                           f"({manifest.reason}); only a completed run is scored")
    return manifest, summary


def _written(value: float | None, key: str) -> float:
    """A number the completed manifest must hold (KeyError, as for a missing key, when it does not)."""
    if value is None:
        raise KeyError(key)
    return value


def in_domain_summary(report: dict | None) -> dict | None:
    """The training manifest's in-domain lift as the record keeps it (its numbers, not its episodes)."""
    if not isinstance(report, dict):
        return None
    kept = {key: report[key] for key in ("lift", "interval", "samples", "base_mean", "trained_mean", "confidence")
            if report.get(key) is not None}
    return {**kept, "lift": report.get("lift"), "instances": len(report.get("instances") or []),
            "excluded": len(report.get("excluded") or [])}


def library_versions() -> dict[str, str]:
    """The installed versions of the libraries a run's numbers depend on (those of LIBRARIES that are installed)."""
    installed = {(d.metadata["Name"] or "").lower(): d.version for d in metadata.distributions()}
    return {name: installed[name] for name in LIBRARIES if name in installed}


def _hardware(info: dict) -> str:
    gpus = info.get("gpus") or []
    text = f"{len(gpus)}x {gpus[0]}" if gpus else f"cpu ({info.get('cpus', '?')} cores)"
    return text[:HARDWARE_CHARS]


def _backends(options: ScoreOptions, base_path: str) -> tuple[ChatBackend, ChatBackend]:
    """The base arm's and the trained arm's backends (one vLLM engine serves both on a GPU)."""
    try:
        if options.backend == "vllm":
            from agents.backends.vllm_engine import VllmBackend, VllmEngine

            engine = VllmEngine(base_path)
            return VllmBackend(engine), VllmBackend(engine, options.adapter)
        from agents.backends.local import LocalBackend

        return LocalBackend(Path(base_path)), LocalBackend(Path(base_path), options.adapter)
    except BackendError as exc:
        raise ScoringError(str(exc), environment="extra" in str(exc)) from None


def _contamination(options: ScoreOptions, suite: Suite, package: TaskPackage) -> dict:
    """The gate's public verdict: the one `arena score --contamination-only --format json` printed, or a new run."""
    if options.gate is not None:
        try:
            verdict = json.loads(options.gate.read_text())["verdict"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ScoringError(f"{options.gate}: not the gate's JSON output ({exc})") from None
        if verdict not in gate.GATE_VERDICTS:
            raise ScoringError(f"{options.gate}: not the gate's JSON output (verdict {verdict!r})")
        return {"verdict": verdict}
    try:
        return run_gate(suite, package.root, package).public()
    except GateError as exc:
        raise ScoringError(f"contamination gate: {exc}") from None


def score(package: TaskPackage, suite: Suite, options: ScoreOptions,
          say: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True)) -> ResultRecord:
    """Play both arms, then write the record. Raises ScoringError (or EvaluationFailed, finished work kept)."""
    manifest, training = training_summary(options.training_manifest)
    if not (options.adapter / "adapter_config.json").is_file():
        raise ScoringError(f"{options.adapter}: no adapter_config.json; pass the adapter/ folder `arena train` wrote")
    commit = options.commit or manifest.commit
    if not commit:
        raise ScoringError("the environment's commit is unknown (the training manifest has none): pass --commit")
    base_model = manifest.base_model or {}
    base_spec = options.base_model or base_model.get("path") or base_model["name"]
    try:
        base = resolve_local_model(base_spec) if options.backend == "local" else None
    except ModelUnavailable as exc:
        raise ScoringError(str(exc), environment=True) from None
    base_path = str(base.path) if base else base_spec
    base_revision = base_model.get("revision") or (base.revision if base else "unpinned")
    items = selected_items(suite, options.profile)
    base_arm, trained_arm = _backends(options, base_path)
    contamination = _contamination(options, suite, package)
    key = base_cache_key(suite, items, base_revision, options.profile, getattr(base_arm, "dtype", options.backend))
    cache = EpisodeLog(score_cache() / f"base-{key}.jsonl")
    trained_log = EpisodeLog(options.out / "episodes.jsonl")
    total = 2 * len(items) * options.profile.samples
    progress = _Progress(total, say)
    with Sandbox() as sandbox:
        say(f"base arm: {base_arm.name} on {len(items)} item(s) x {options.profile.samples} (cached runs reused)")
        base_outcomes = play_arm(sandbox, suite, items, "base", base_arm, options.profile, cache,
                                 options.concurrency, progress.tick)
        progress.skip(total // 2 - progress.done)
        say(f"trained arm: {trained_arm.name}")
        trained_outcomes = play_arm(sandbox, suite, items, "trained", trained_arm, options.profile, trained_log,
                                    options.concurrency, progress.tick)
    paired = paired_items(items, options.profile.samples, base_outcomes, trained_outcomes)
    subset = len(items) < len(suite.items)
    run = RunInfo(
        environment=package.name, commit=commit, base_model=base_model["name"],
        base_revision=base_revision, adapter_digest="sha256:" + tree_digest(options.adapter),
        suite=SuiteInfo(f"{suite.name}-{options.profile.name}" if subset else suite.name, suite.version,
                        len(items), suite.public, suite_digest(suite)),
        samples_per_item=options.profile.samples, harness_version=f"{options.profile.name}/{HARNESS_VERSION}",
        training=training, contamination=contamination, sampling=asdict(options.profile),
        libraries=library_versions(), gate=gate.parameters(), retries=RETRIES,
        errors={"base": arm_errors(base_outcomes), "trained": arm_errors(trained_outcomes)},
        pr=options.pr, contributor=options.contributor)
    try:
        return write_run(options.out / RESULTS_DIR, paired, run)
    except ValueError as exc:
        raise ScoringError(f"no record was written: {exc}") from None


class _Progress:
    """Episodes done of the total, with an ETA, as whole lines (the CLI shows a bar in a terminal)."""

    def __init__(self, total: int, say: Callable[[str], None]) -> None:
        self.total, self.say, self.done, self.started = total, say, 0, time.monotonic()

    def tick(self, outcome: Outcome) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        self.say(f"scored {self.done}/{self.total} ({outcome.arm} {outcome.item} #{outcome.sample}: "
                 f"{outcome.outcome} {outcome.reward}) · ETA {eta:.0f}s")

    def skip(self, count: int) -> None:
        self.done += max(0, count)


__all__ = ["EvaluationFailed", "ScoreOptions", "ScoringError", "score"]
