"""The chat loop of a model agent: the conversation a model has with one episode, tool call by tool call.

The same opening messages and the same tools (`EpisodeTools`) are used by training, so a model sees identical text
in training, in held-out scoring and in `arena run --agent model`. A reply without a tool call ends the episode (as
it ends a rollout in TRL); a reply whose calls cannot be read costs a turn and the model is told why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from agents.backends import BackendError, ChatBackend, Sampling
from agents.parse import ToolCall
from agents.render import scene_text
from agents.tools import TOOL_SCHEMAS, EpisodeTools, ToolSettings, bind, call_counts, call_tool, reject_reply
from sandbox.episode_session import EpisodeSession
from sandbox.outcomes import EpisodeResult
from taskpkg.package import ScenePrompt

SYSTEM_PROMPT = ("You are an agent working in a Linux sandbox with no network. Your files are in /workspace. Use the "
                 "tools to inspect files, run commands and write your results; call end_scene when you have finished "
                 "the current part of the task.")


@dataclass(frozen=True)
class ChatSettings:
    """A model agent's budget: sampling per reply, tool settings, and the tokens it may generate in one episode."""

    sampling: Sampling = field(default_factory=Sampling)
    tools: ToolSettings = field(default_factory=ToolSettings)
    max_episode_tokens: int = 8192


@dataclass
class ChatStats:
    """What a chat episode cost."""

    replies: int = 0
    tool_calls: int = 0
    invalid_calls: int = 0
    completion_tokens: int = 0
    generation_s: float = 0.0


def opening_messages(first_scene: ScenePrompt | None) -> list[dict]:
    """The conversation before the model's first reply: the system prompt and the first scene (empty when unknown,
    as in a training prompt whose scene text the environment's reset() appends)."""
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": scene_text(first_scene) if first_scene else ""}]


def run_chat_episode(session: EpisodeSession, backend: ChatBackend, settings: ChatSettings,
                     stats: ChatStats | None = None) -> EpisodeResult:
    """Start the session, let the model act until it stops or a limit is hit, then finish (verify) the episode."""
    stats = stats if stats is not None else ChatStats()
    tools = EpisodeTools(settings.tools)
    try:
        first = session.start()
        if first is None:  # setup failed: nothing to converse about
            return session.finish()
        bind(tools, session)
        messages = opening_messages(first.scene)
        session.result.conversation = messages
        _converse(session, backend, settings, tools, messages, stats)
    except BackendError as exc:
        session.fail(f"the model backend failed: {exc}")
    finally:
        stats.tool_calls, stats.invalid_calls = call_counts(tools)
    return session.finish()


def _converse(session: EpisodeSession, backend: ChatBackend, settings: ChatSettings, tools: EpisodeTools,
              messages: list[dict], stats: ChatStats) -> None:
    while not session.done:
        if session.seconds_left <= 0:
            session.end("time")
            return
        if stats.completion_tokens >= settings.max_episode_tokens:
            session.end("tokens")
            return
        budget = min(settings.sampling.max_new_tokens, settings.max_episode_tokens - stats.completion_tokens)
        started = time.perf_counter()
        reply = backend.reply(messages, list(TOOL_SCHEMAS),
                              replace(settings.sampling, max_new_tokens=budget, seed=settings.sampling.seed +
                                      stats.replies))
        stats.generation_s += time.perf_counter() - started
        stats.replies += 1
        stats.completion_tokens += reply.completion_tokens
        calls, problems = reply.parsed.tool_calls, reply.parsed.problems
        messages.append(_assistant_message(reply.parsed.content, calls))
        if not calls and not problems:
            session.end()  # answered without a tool call: the model is done
            return
        for call in calls:
            result = call_tool(tools, call.name, call.arguments)
            messages.append({"role": "tool", "tool_call_id": call.call_id, "name": call.name, "content": result})
            if session.done:
                return
        if problems:
            messages.append({"role": "user", "content": reject_reply(tools, reply.raw[-1000:], "; ".join(problems))})


def _assistant_message(content: str, calls: list[ToolCall]) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": c.call_id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
    return message
