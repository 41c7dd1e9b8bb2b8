"""The three tools a model may call, over one step-wise episode session.

`EpisodeTools` is the single definition of the tools: TRL's `environment_factory` reads its public methods (their
type hints and Google-style docstrings become the tool schema the model is shown), and the chat loop of scoring and
`arena run --agent model` calls the same methods through `call()`. `TOOL_SCHEMAS` is the same schema as data, for
backends that take JSON (an OpenAI-compatible endpoint); a test keeps it equal to what transformers derives from the
methods.

Every public method is a tool: helpers must stay private (TRL turns every public function into a tool).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from agents.render import RenderLimits, observation_text, scene_text
from sandbox.agent_interface import Action, EndScene, InvalidAction, Observation, Shell, WriteFile
from sandbox.episode_session import EpisodeSession

EPISODE_OVER = "The episode is over; no further tool calls are carried out."


@dataclass(frozen=True)
class ToolSettings:
    """How tool calls are carried out: the shell's per-call time-out and how much output a model is shown."""

    command_timeout_s: float = 60.0
    render: RenderLimits = field(default_factory=RenderLimits)


def _schema(name: str, description: str, properties: dict[str, str]) -> dict:
    """A tool's schema exactly as transformers derives it from the method (so every backend shows the same text)."""
    parameters: dict = {"type": "object", "properties": {key: {"type": "string", "description": text}
                                                         for key, text in properties.items()}}
    if properties:
        parameters["required"] = list(properties)
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters,
                                             "return": {"type": "string"}}}


TOOL_SCHEMAS: tuple[dict, ...] = (
    _schema("shell", "Run a shell command in /workspace as the agent user and return its exit code and output.",
            {"command": "The command line, run with `sh -c`."}),
    _schema("write_file", "Create or replace a file with the given text.",
            {"path": "The file's path; a relative path is under /workspace.",
             "content": "The file's complete new text."}),
    _schema("end_scene", "Say that you are done with the current part of the task; the next part's message, if any, "
                         "is the answer.", {}),
)
TOOL_NAMES = tuple(schema["function"]["name"] for schema in TOOL_SCHEMAS)


def argument_problem(name: str, arguments: dict) -> str | None:
    """What is wrong with a known tool's argument names (missing or unknown ones), or None."""
    schema = next(s["function"]["parameters"] for s in TOOL_SCHEMAS if s["function"]["name"] == name)
    expected = set(schema["properties"])
    missing, extra = sorted(expected - set(arguments)), sorted(set(arguments) - expected)
    if not missing and not extra:
        return None
    said = "; ".join(p for p in (f"missing {', '.join(missing)}" if missing else "",
                                 f"unknown {', '.join(extra)}" if extra else "") if p)
    return f"{name} takes {', '.join(sorted(expected)) or 'no arguments'} ({said})"


class EpisodeTools:
    """Tools bound to one episode session. Results are the text the model is shown."""

    def __init__(self, settings: ToolSettings | None = None) -> None:
        self._settings = settings or ToolSettings()
        self._session: EpisodeSession | None = None
        self._calls = 0
        self._invalid = 0
        self._busy_s = 0.0

    # -- the tools -------------------------------------------------------------------------------------------------

    def shell(self, command: str) -> str:
        """Run a shell command in /workspace as the agent user and return its exit code and output.

        Args:
            command: The command line, run with `sh -c`.
        """
        if not isinstance(command, str):
            return self._reject("shell", {"command": command}, "`command` must be a string")
        return self._act(Shell(command, self._settings.command_timeout_s))

    def write_file(self, path: str, content: str) -> str:
        """Create or replace a file with the given text.

        Args:
            path: The file's path; a relative path is under /workspace.
            content: The file's complete new text.
        """
        if not isinstance(path, str) or not isinstance(content, str) or not path.strip():
            return self._reject("write_file", {"path": path, "content": content},
                                "`path` and `content` must be strings, and `path` must not be empty")
        return self._act(WriteFile(path, content), written=path)

    def end_scene(self) -> str:
        """Say that you are done with the current part of the task; the next part's message, if any, is the answer."""
        session = self._live_session()
        if session is None:
            return EPISODE_OVER
        self._calls += 1
        observation = self._step(session, EndScene())
        if session.done or observation.scene is None:
            return "The task is complete; there is nothing more to do. " + EPISODE_OVER
        return scene_text(observation.scene)

    # -- helpers (private: every public method would be a tool) ---------------------------------------------------

    def _bind(self, session: EpisodeSession | None) -> None:
        self._session = session
        self._calls = 0
        self._invalid = 0
        self._busy_s = 0.0

    def _call(self, name: str, arguments: object) -> str:
        """Carry out a parsed tool call, checking the name and arguments first; a bad call costs a turn and its
        problem is the result."""
        if name not in TOOL_NAMES:
            return self._reject(name, arguments, f"there is no tool named {name!r}; the tools are "
                                                 f"{', '.join(TOOL_NAMES)}")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                return self._reject(name, arguments, f"the arguments are not valid JSON ({exc})")
        if not isinstance(arguments, dict):
            return self._reject(name, arguments, "the arguments must be a JSON object")
        problem = argument_problem(name, arguments)
        if problem:
            return self._reject(name, arguments, problem)
        return getattr(self, name)(**arguments)

    def _reject(self, name: str, arguments: object, problem: str) -> str:
        """Record an invalid call (a turn spent) and tell the model what was wrong."""
        session = self._live_session()
        if session is None:
            return EPISODE_OVER
        self._calls += 1
        self._invalid += 1
        attempted = json.dumps({"name": name, "arguments": arguments}, default=repr)[:2000]
        observation = self._step(session, InvalidAction(attempted, f"invalid tool call: {problem}"))
        return self._text(observation)

    def _act(self, action: Shell | WriteFile, written: str | None = None) -> str:
        session = self._live_session()
        if session is None:
            return EPISODE_OVER
        self._calls += 1
        return self._text(self._step(session, action), written)

    def _step(self, session: EpisodeSession, action: Action) -> Observation:
        """One step, timed: the time tool calls spend in the sandbox is what a trainer waits on containers."""
        started = time.perf_counter()
        try:
            return session.step(action)
        finally:
            self._busy_s += time.perf_counter() - started

    def _text(self, observation: Observation, written: str | None = None) -> str:
        text = observation_text(observation, self._settings.render, written)
        if observation.scene is not None:  # the scene's turn budget ran out: the next scene begins
            text += "\n\n" + scene_text(observation.scene)
        elif self._session is not None and self._session.done:
            text += "\n" + EPISODE_OVER
        return text

    def _live_session(self) -> EpisodeSession | None:
        session = self._session
        return None if session is None or session.done else session


def bind(tools: EpisodeTools, session: EpisodeSession | None) -> None:
    """Point the tools at a (new) episode session and reset their counters."""
    tools._bind(session)


def reject_call(tools: EpisodeTools, name: str, arguments: object, problem: str) -> str:
    """A call that cannot be carried out as made: it costs a turn and the model is told `problem`."""
    return tools._reject(name, arguments, problem)


def call_tool(tools: EpisodeTools, name: str, arguments: object) -> str:
    """Carry out one parsed tool call (name and arguments checked first); returns what the model is shown."""
    return tools._call(name, arguments)


def reject_reply(tools: EpisodeTools, attempted: str, problem: str) -> str:
    """A reply that held no usable call: the attempt costs a turn and the model is told what was wrong."""
    return reject_call(tools, "(unreadable reply)", attempted, problem)


def call_counts(tools: EpisodeTools) -> tuple[int, int]:
    """(tool calls made, of which invalid) since the last bind."""
    return tools._calls, tools._invalid


def sandbox_seconds(tools: EpisodeTools) -> float:
    """Seconds the tool calls since the last bind spent in the sandbox."""
    return tools._busy_s
