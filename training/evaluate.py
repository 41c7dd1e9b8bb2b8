"""Pass rates with the chat harness: calibration of the base model before training (GRPO learns nothing where every
rollout scores the same), and the in-environment check on held-out instances after it."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass

from agents.backends import ChatBackend, Sampling
from agents.chat import ChatSettings, ChatStats, run_chat_episode
from agents.render import RenderLimits
from agents.tools import ToolSettings
from sandbox.episode import EpisodeResult, Sandbox
from taskpkg.model import TaskPackage
from training.recipe import Recipe

SOLVED = 1.0


@dataclass(frozen=True)
class PassRate:
    """Mean reward and share of instances solved over judged episodes; verifier errors are counted, not scored."""

    instances: list[int]
    rewards: list[float | None]
    mean_reward: float | None
    solved_share: float | None
    verifier_errors: int
    tool_calls: int

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)


def chat_settings(recipe: Recipe, max_new_tokens: int) -> ChatSettings:
    """The harness settings a recipe implies (same tools and rendering as its rollouts)."""
    grpo, episodes = recipe["grpo"], recipe["episodes"]
    return ChatSettings(
        Sampling(max_new_tokens=max_new_tokens, temperature=grpo["temperature"], top_p=grpo["top_p"],
                 seed=grpo["seed"], enable_thinking=grpo["enable_thinking"]),
        ToolSettings(episodes["command_timeout_s"], RenderLimits(episodes["output_chars"])),
        max_episode_tokens=grpo["max_completion_length"])


def pass_rate(sandbox: Sandbox, package: TaskPackage, instances: list[int], backend: ChatBackend,
              settings: ChatSettings, say: object = print,
              keep: Callable[[EpisodeResult], None] | None = None) -> PassRate:
    """Run one episode per instance and summarise the rewards; `keep` is given each episode's result (its
    transcript)."""
    rewards: list[float | None] = []
    errors = calls = 0
    for number, instance in enumerate(instances, 1):
        stats = ChatStats()
        result = run_chat_episode(sandbox.open_episode(package, instance, f"model:{backend.name}"), backend,
                                  settings, stats)
        calls += stats.tool_calls
        if keep is not None:
            keep(result)
        errors += result.outcome == "verifier_error"
        rewards.append(result.reward if result.outcome == "scored" else None)
        say(f"  instance {instance} ({number}/{len(instances)}): {result.outcome}, reward {result.reward}")  # type: ignore[operator]
    judged = [r for r in rewards if r is not None]
    return PassRate(instances, rewards, statistics.fmean(judged) if judged else None,
                    sum(r >= SOLVED for r in judged) / len(judged) if judged else None, errors, calls)


def calibration_verdict(rate: PassRate) -> str | None:
    """Why training would teach nothing, or None: every rollout failing, or every one succeeding."""
    if rate.mean_reward is None:
        return "the verifier errored on every calibration episode; fix verifier.py first"
    if rate.mean_reward == 0.0:
        return "too hard for the base model: it scored 0 on every calibration instance, so GRPO has no signal"
    if rate.solved_share == 1.0:
        return "already solved: the base model solved every calibration instance, so GRPO has no signal"
    return None
