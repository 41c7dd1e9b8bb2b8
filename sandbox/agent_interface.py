"""The agent interface: what an agent sees and what it may do. Scripted and model-driven agents implement it alike.

An episode shows the agent one Observation at a time and asks for one Action:

- the first observation of each scene carries the scene's prompt (`scene`), later ones the result of the last action;
- `Shell(command, timeout_s)` runs `sh -c command` as the agent user (UID 1000) in /workspace, with a deadline and
  output capped per stream; `WriteFile(path, content)` writes a file as the agent user; `EndScene()` ends the scene;
  `InvalidAction(attempted, problem)` records a malformed attempt (a model's bad tool call) and shows the problem.

Each Shell, WriteFile or InvalidAction costs one turn; the episode ends when the last scene ends, `max_turns` are
spent, or `agent_timeout_s` passes. Agents see nothing of the verifier, and the verifier sees nothing of the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from sandbox.channel import CommandResult
from taskpkg.package import ScenePrompt, TaskPackage


@dataclass(frozen=True)
class Shell:
    """Run a shell command in /workspace."""

    command: str
    timeout_s: float = 60.0


@dataclass(frozen=True)
class WriteFile:
    """Write a file (a relative path is under /workspace)."""

    path: str
    content: str


@dataclass(frozen=True)
class EndScene:
    """The agent is done with the current scene."""


@dataclass(frozen=True)
class InvalidAction:
    """Something the agent tried that is no action (a model's malformed tool call): it costs a turn, is kept in the
    transcript, and the agent is shown `problem`."""

    attempted: str
    problem: str


Action = Shell | WriteFile | EndScene | InvalidAction


@dataclass(frozen=True)
class Observation:
    """What the agent is shown before it acts."""

    scene: ScenePrompt | None
    result: CommandResult | None
    error: str | None
    turns_left: int
    seconds_left: float


class Agent(Protocol):
    """Anything that chooses actions. `provision` may return files to place under /arena/ before it starts."""

    name: str

    def provision(self, package: TaskPackage) -> dict[str, bytes]:
        """Files the agent brings, by path under /arena/ (e.g. oracle/solve.sh), read-only to it. Usually none."""
        ...

    def act(self, observation: Observation) -> Action:
        """Choose the next action."""
        ...


@dataclass
class TranscriptEntry:
    """One step of an episode, kept on the host for people and logs, never given to the verifier."""

    scene: str
    action: dict[str, Any]
    result: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class Transcript:
    """An episode's steps in order."""

    entries: list[TranscriptEntry] = field(default_factory=list)

    def to_list(self) -> list[dict[str, Any]]:
        """JSON form."""
        return [e.__dict__ for e in self.entries]
