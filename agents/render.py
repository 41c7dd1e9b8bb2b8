"""What a model is shown: scene prompts, tool results (with truncation it is told about) and problems, as text."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.agent_interface import Observation
from sandbox.channel import CommandResult
from taskpkg.package import ScenePrompt


@dataclass(frozen=True)
class RenderLimits:
    """How much of each stream a model is shown (characters)."""

    output_chars: int = 4000


def scene_text(scene: ScenePrompt) -> str:
    """A scene's opening message as the model sees it: who speaks (for scripted roles) and what they say."""
    if scene.speaker_kind == "agent":
        return scene.text
    return f"[{scene.speaker}]\n{scene.text}"


def clip(text: str, limit: int, what: str, already_truncated: bool = False) -> str:
    """`text` cut to `limit` characters, with a note that says so when anything was dropped."""
    if len(text) <= limit and not already_truncated:
        return text
    shown = text[:limit]
    return (f"{shown}\n[{what} truncated: only the first {len(shown)} characters are shown; "
            "narrow the command (head, tail, grep, wc) to see the rest]")


def command_text(result: CommandResult, limits: RenderLimits) -> str:
    """A shell command's outcome: exit code (or time-out), then stdout and stderr, each clipped."""
    status = (f"timed out after {result.duration_s:.0f} s (the command was killed)" if result.timed_out
              else f"exit code {result.exit_code}")
    parts = [status]
    for name, stream in (("stdout", result.stdout), ("stderr", result.stderr)):
        if stream:
            parts.append(f"{name}:\n{clip(stream, limits.output_chars, name, result.truncated)}")
    return "\n".join(parts)


def observation_text(observation: Observation, limits: RenderLimits, written: str | None = None) -> str:
    """The tool result for one action's observation, with the budget left."""
    if observation.error:
        body = f"error: {observation.error}"
    elif observation.result is not None:
        body = command_text(observation.result, limits)
    else:
        body = f"wrote {written}" if written else "done"
    return f"{body}\n(turns left: {observation.turns_left}, seconds left: {observation.seconds_left:.0f})"
