"""What episodes produce: an episode's result, and an instance's committed initial state."""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.agent_interface import Transcript


@dataclass
class EpisodeResult:
    """Everything about one episode. `outcome` is scored, verifier_error, setup_error, agent_error or limit_exceeded
    (the agent's files outgrew limits.storage_mb: stopped, not verified)."""

    package: str
    instance: int
    agent: str
    outcome: str
    reward: float | None = None
    details: dict | None = None
    error: str | None = None
    limit_hit: str | None = None
    prompt_values: dict = field(default_factory=dict)
    unfilled: list[str] = field(default_factory=list)  # setup failed: the prompt's keys the generator did not print
    transcript: Transcript = field(default_factory=Transcript)
    timings: dict[str, float] = field(default_factory=dict)
    peak_memory_mb: float | None = None
    conversation: list[dict] = field(default_factory=list)  # a model agent's messages, for people (never verified)
    initial_files: dict | None = None  # /workspace after setup and at the end, where the driver asked to keep them
    final_files: dict | None = None  # (path -> sandbox.workspace_files.WorkspaceFile; None when not kept)


@dataclass(frozen=True)
class InitialState:
    """One instance as the agent first finds it, committed as an image. Episodes may start from it instead of running
    the generator again, and scoring it untouched is the do-nothing floor. Its owner hands it back with release()."""

    package: str
    instance: int
    image: str
    prompt_values: dict
