"""What episodes produce: an episode's result, and an instance's committed initial state."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from sandbox.agent_interface import Transcript

if TYPE_CHECKING:
    from sandbox.workspace_files import WorkspaceFile

LimitHit = Literal["storage", "time", "turns", "tokens"]  # the limit that ended an episode early


class EpisodeOutcome(StrEnum):
    """How an episode ended. The one rule for what each outcome is worth, used alike by training's reward
    (training.environment.reward_of), held-out scoring (scoring.evaluation) and the learnability pre-flight and
    in-domain lift (training.evaluate): see `worth`."""

    SCORED = "scored"  # the verifier judged the final state: its reward
    VERIFIER_ERROR = "verifier_error"  # the verifier broke on the final state: nothing judged
    SETUP_ERROR = "setup_error"  # the instance could not be made: the agent never acted, nothing judged
    AGENT_ERROR = "agent_error"  # the agent program itself broke (not a bad action): nothing judged
    LIMIT_EXCEEDED = "limit_exceeded"  # the agent's files outgrew limits.storage_mb: stopped, not verified, worth 0
    SKIPPED = "skipped"  # validation only: an answer probe with nothing to submit was not played

    @property
    def judged(self) -> bool:
        """Whether the episode counts toward a reward: scored, or stopped at the storage limit (which wins nothing)."""
        return self in (EpisodeOutcome.SCORED, EpisodeOutcome.LIMIT_EXCEEDED)

    def worth(self, reward: float | None) -> float | None:
        """What the episode is worth in training, scoring and the pre-flight: the verifier's `reward` when scored, 0
        when the agent broke the storage limit (a broken limit is a failure of the agent, never a free pass, in all
        three alike), None when nothing was judged (a verifier, setup or agent error: the caller retries, stops or
        leaves it out)."""
        if self is EpisodeOutcome.SCORED:
            return reward
        return 0.0 if self is EpisodeOutcome.LIMIT_EXCEEDED else None


@dataclass
class EpisodeResult:
    """Everything about one episode: how it ended (`outcome`), the verifier's reward when scored, what went wrong
    otherwise, and what the agent did."""

    package: str
    instance: int
    agent: str
    outcome: EpisodeOutcome
    reward: float | None = None
    details: dict[str, Any] | None = None
    error: str | None = None
    limit_hit: LimitHit | None = None
    prompt_values: dict[str, Any] = field(default_factory=dict)
    unfilled: list[str] = field(default_factory=list)  # setup failed: the prompt's keys the generator did not print
    transcript: Transcript = field(default_factory=Transcript)
    timings: dict[str, float] = field(default_factory=dict)
    peak_memory_mb: float | None = None
    conversation: list[dict[str, Any]] = field(default_factory=list)  # a model agent's messages (never verified)
    # /workspace after setup and at the end, path -> file, where the driver asked to keep them (None when not kept)
    initial_files: dict[str, WorkspaceFile] | None = None
    final_files: dict[str, WorkspaceFile] | None = None

    def __post_init__(self) -> None:
        self.outcome = EpisodeOutcome(self.outcome)  # one given by its value ("scored") becomes the member


@dataclass(frozen=True)
class InitialState:
    """One instance as the agent first finds it, committed as an image. Episodes may start from it instead of running
    the generator again, and scoring it untouched is the do-nothing floor. Its owner hands it back with release()."""

    package: str
    instance: int
    image: str
    prompt_values: dict[str, Any]
