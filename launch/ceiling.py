"""A hard ceiling per job: wall-clock hours and GPU-hours, set in the job's spec, checked before launch against what
the package's own limits allow, and enforced while the job runs (by the job itself for wall-clock time, and by the
poller for both).

Configuration (repository variables in Actions, environment variables anywhere):
  ARENA_JOB_MAX_HOURS       wall-clock hours one job may take, every segment counted (default 24)
  ARENA_JOB_MAX_GPU_HOURS   GPU-hours one job may use, every segment counted (default 24)

Before launch, the time a package alone can make the job spend is counted: its image build, and its verifier running
to `verifier_timeout_s` on every training episode (recipe steps × waves of episodes; a wave is as many episodes as
the recipe runs at once). A package whose limits make that alone exceed the ceiling is refused with the arithmetic.
The rest (the agent's time, scoring) depends on the model too; the running ceiling stops it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from launch.settings import read_numbers
from launch.spec import MAX_CEILING_HOURS, JobSpec
from taskpkg.frontmatter import read_frontmatter
from taskpkg.rules.rule import RuleViolation

MIN_HOURS = 0.01
RECIPES = Path(__file__).resolve().parent.parent / "training" / "recipes"  # data files, read as YAML


class CeilingConfigError(ValueError):
    """A ceiling variable that is not a number in range; the message names it."""


@dataclass(frozen=True)
class Ceiling:
    """The most one job may take."""

    max_hours: float = 24.0
    max_gpu_hours: float = 24.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Ceiling:
        """The ceiling from environment variables (unset ones keep their defaults)."""
        return cls(**read_numbers(env, (("ARENA_JOB_MAX_HOURS", "max_hours", float, MIN_HOURS, MAX_CEILING_HOURS),
                                        ("ARENA_JOB_MAX_GPU_HOURS", "max_gpu_hours", float, MIN_HOURS,
                                         MAX_CEILING_HOURS)), CeilingConfigError))


@dataclass(frozen=True)
class Exposure:
    """The hours a package's own limits let it make one job spend, and the arithmetic behind them."""

    hours: float
    arithmetic: str


def package_exposure(limits: Mapping[str, object], recipe: str, steps: int | None = None) -> Exposure | None:
    """What the package alone can make training take, from its `limits` and the recipe file; None when the recipe
    has no file here (a recipe given by path is checked by the ceiling while it runs)."""
    path = RECIPES / f"{recipe}.yaml"
    if not path.is_file():
        return None
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    grpo, episodes = data["grpo"], data.get("episodes") or {}
    steps = steps or int(grpo["steps"])
    per_step = int(grpo["prompts_per_step"]) * int(grpo["num_generations"])
    waves = math.ceil(per_step / max(1, int(episodes.get("concurrency") or 1)))
    verifier, build = float(limits["verifier_timeout_s"]), float(limits["build_timeout_s"])
    seconds = steps * waves * verifier + build
    return Exposure(seconds / 3600, f"{steps} steps × {waves} waves of episodes ({per_step} episodes a step, "
                    f"{per_step // waves if waves else per_step} at once) × verifier_timeout_s {verifier:g} s + "
                    f"build_timeout_s {build:g} s = {seconds / 3600:.1f} h")


def refusal(spec: JobSpec, limits: Mapping[str, object], gpus: int = 1) -> str | None:
    """Why the package's limits do not fit the job's ceiling, with the arithmetic; None when they do."""
    exposure = package_exposure(limits, spec.recipe, spec.steps)
    if exposure is None:
        return None
    if exposure.hours > spec.max_hours:
        return (f"the package's limits let its verifier alone take {exposure.arithmetic}, over the "
                f"{spec.max_hours:g} h a job may run (ARENA_JOB_MAX_HOURS); lower limits.verifier_timeout_s in "
                "task.md")
    if exposure.hours * gpus > spec.max_gpu_hours:
        return (f"the package's limits let its verifier alone take {exposure.arithmetic} × {gpus} GPU(s), over the "
                f"{spec.max_gpu_hours:g} GPU-hours a job may use (ARENA_JOB_MAX_GPU_HOURS); lower "
                "limits.verifier_timeout_s in task.md")
    return None


def over(spec: JobSpec, hours: float, gpu_hours: float) -> str | None:
    """Why a running job must be stopped now, or None."""
    if hours > spec.max_hours:
        return (f"stopped at its ceiling: it ran {hours:.2f} h over all its segments, and a job may run "
                f"{spec.max_hours:g} h (ARENA_JOB_MAX_HOURS)")
    if gpu_hours > spec.max_gpu_hours:
        return (f"stopped at its ceiling: it used {gpu_hours:.2f} GPU-hours over all its segments, and a job may "
                f"use {spec.max_gpu_hours:g} (ARENA_JOB_MAX_GPU_HOURS)")
    return None


def package_limits(environment: Path | None) -> dict | None:
    """The `limits` of a package folder's task.md, or None when it has none readable (the checks refuse such a
    package long before a launch)."""
    if environment is None:
        return None
    try:
        limits = read_frontmatter((environment / "task.md").read_text(encoding="utf-8")).data.get("limits")
    except (OSError, ValueError, RuleViolation):
        return None
    return limits if isinstance(limits, dict) else None
