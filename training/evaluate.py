"""Episodes of a recipe's model through the chat harness, played for the pre-flight (the base model on training
instances) and the in-domain lift (base and trained model on held-out instances): the same tools, rendering and
sampling as the recipe's rollouts, several episodes at once, each with a fixed seed per (instance, sample).

The model backend is the recipe's: local transformers on a CPU recipe, vLLM in-process where the recipe generates
with vLLM (one engine serving the base and, for the trained arm, the LoRA adapter). Generation is serialised per
backend; sandbox set-up, tool calls and verification of other episodes overlap it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from agents.backends import BackendError, ChatBackend, Reply, Sampling
from agents.chat import ChatSettings, ChatStats, run_chat_episode
from agents.render import RenderLimits
from agents.tools import ToolSettings
from sandbox.outcomes import EpisodeOutcome
from sandbox.sandbox import EpisodeResult, Sandbox
from taskpkg.package import TaskPackage
from training.recipe import Recipe


class EvaluationError(RuntimeError):
    """The model backend could not be opened or failed mid-episode; `environment` marks a missing prerequisite."""

    def __init__(self, message: str, environment: bool = False) -> None:
        super().__init__(message)
        self.environment = environment


@dataclass(frozen=True)
class Sample:
    """One episode: its reward (None when nothing was judged), how it ended, and what it cost."""

    instance: int
    sample: int
    reward: float | None
    outcome: EpisodeOutcome
    turns: int
    tool_calls: int
    invalid_calls: int
    seconds: float

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)


def chat_settings(recipe: Recipe, max_new_tokens: int) -> ChatSettings:
    """The harness settings a recipe implies (same tools, rendering and sampling as its rollouts)."""
    grpo, episodes = recipe.grpo, recipe.episodes
    return ChatSettings(
        Sampling(max_new_tokens=max_new_tokens, temperature=grpo.temperature, top_p=grpo.top_p,
                 seed=grpo.seed, enable_thinking=grpo.enable_thinking),
        ToolSettings(episodes.command_timeout_s, RenderLimits(episodes.output_chars)),
        max_episode_tokens=grpo.max_completion_length)


def sample_seed(base_seed: int, instance: int, sample: int) -> int:
    """The seed of one (instance, sample): the same in both arms of a comparison and in every run."""
    return int(hashlib.sha256(f"{base_seed}:{instance}:{sample}".encode()).hexdigest()[:8], 16)


class Serialised:
    """A backend that generates one reply at a time (vLLM's offline engine and torch's global seed are not safe to
    share between threads)."""

    def __init__(self, backend: ChatBackend) -> None:
        self.backend = backend
        self.name = backend.name
        self._lock = threading.Lock()

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        """The wrapped backend's reply, under the lock."""
        with self._lock:
            return self.backend.reply(messages, tools, sampling)


def open_backends(recipe: Recipe, base: str, adapter: Path | None = None) -> tuple[ChatBackend, ChatBackend | None]:
    """The base model's backend and, with an adapter, the trained model's: one vLLM engine for both where the recipe
    generates with vLLM, else local transformers."""
    try:
        settings = recipe.generation.vllm
        if recipe.generation.backend == "vllm" and settings is not None:  # the recipe's check: vllm has settings
            from agents.backends.vllm_engine import VllmBackend, VllmEngine

            engine = VllmEngine(base, settings.gpu_memory_utilization, settings.max_model_length,
                                max_lora_rank=max(64, recipe.lora.r))
            return Serialised(VllmBackend(engine)), Serialised(VllmBackend(engine, adapter)) if adapter else None
        from agents.backends.local import LocalBackend

        trained = LocalBackend(Path(base), adapter) if adapter else None
        return LocalBackend(Path(base)), trained
    except BackendError as exc:
        raise EvaluationError(str(exc), environment="extra" in str(exc) or "GPU" in str(exc)) from None


def play(sandbox: Sandbox, package: TaskPackage, jobs: Sequence[tuple[int, int]], backend: ChatBackend,
         settings: ChatSettings, concurrency: int, agent: str,
         on_sample: Callable[[Sample], None] | None = None,
         keep: Callable[[EpisodeResult, int], None] | None = None) -> list[Sample]:
    """Every (instance, sample) in `jobs`, `concurrency` episodes at a time; results in the order of `jobs`. `keep`
    is given each episode's result and sample number (to save its transcript)."""

    def once(job: tuple[int, int]) -> Sample:
        instance, k = job
        stats = ChatStats()
        seeded = replace(settings, sampling=replace(settings.sampling,
                                                    seed=sample_seed(settings.sampling.seed, instance, k)))
        session = sandbox.open_episode(package, instance, f"{agent}:{backend.name}")
        result = run_chat_episode(session, backend, seeded, stats)
        if keep is not None:
            keep(result, k)
        if result.outcome == EpisodeOutcome.AGENT_ERROR:  # the harness broke, not the model: the run stops
            raise EvaluationError(f"instance {instance}, sample {k}: {result.error}")
        done = Sample(instance, k, result.outcome.worth(result.reward), result.outcome, stats.replies,
                      stats.tool_calls, stats.invalid_calls, round(result.timings.get("total_s", 0.0), 2))
        if on_sample:
            on_sample(done)
        return done

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="arena-eval") as pool:
        return list(pool.map(once, jobs))


def release(*backends: ChatBackend | None) -> None:
    """Free what the backends hold before the next phase loads its own model (on a GPU: vLLM's engine and its KV
    cache, so the trainer's colocated engine finds its share of memory free)."""
    import gc

    for backend in backends:
        inner = getattr(backend, "backend", backend)
        engine = getattr(inner, "engine", None)
        llm = getattr(engine, "llm", None)
        shutdown = getattr(getattr(llm, "llm_engine", None), "shutdown", None)
        if callable(shutdown):
            shutdown()
    gc.collect()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
