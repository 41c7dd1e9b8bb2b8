"""What a training run reports: per-episode records, per-step metrics as JSON lines, sample transcripts, progress."""

from __future__ import annotations

import json
import math
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sandbox.outcomes import EpisodeOutcome, EpisodeResult
from taskpkg.atomic_files import write_text_atomic
from training.guards import ErrorWindow

if TYPE_CHECKING:  # rich is imported when a live bar is first drawn
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID


@dataclass(frozen=True)
class EpisodeRecord:
    """One rollout's outcome and costs."""

    instance: int | None
    outcome: EpisodeOutcome
    reward: float | None
    tool_calls: int
    invalid_calls: int
    setup_s: float
    agent_s: float
    verify_s: float
    error: str | None
    tool_s: float = 0.0  # time the model's tool calls spent in the sandbox
    conversation: list[Any] = field(default_factory=list)  # the model's turns: prompt, replies, tool calls and results
    transcript: list[Any] = field(default_factory=list)  # what the sandbox did (shell, write_file, invalid calls)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", EpisodeOutcome(self.outcome))  # "scored" becomes the member

    @classmethod
    def of(cls, result: EpisodeResult | None, calls: int, invalid: int, tool_s: float = 0.0,
           error: str = "the instance could not be set up") -> EpisodeRecord:
        """From an episode's result (None: the instance could not be set up, for the reason `error`)."""
        if result is None:
            return cls(None, EpisodeOutcome.SETUP_ERROR, None, calls, invalid, 0.0, 0.0, 0.0, error)
        timings = result.timings
        return cls(result.instance, result.outcome, result.reward, calls, invalid, timings.get("setup_s", 0.0),
                   timings.get("agent_s", 0.0), timings.get("verify_s", 0.0), result.error, tool_s,
                   list(result.conversation), result.transcript.to_list())


def transcript_of(result: EpisodeResult) -> dict[str, Any]:
    """A chat-loop episode (the pre-flight, the in-domain lift) as a transcript file: the model's turns, what the
    sandbox carried out, and how it ended."""
    return {"instance": result.instance, "outcome": result.outcome, "reward": result.reward, "error": result.error,
            "limit_hit": result.limit_hit, "timings": result.timings, "conversation": result.conversation,
            "transcript": result.transcript.to_list()}


def reward_spread(rewards: list[float | None], group_size: int) -> dict[str, Any]:
    """A step's rewards as TRL sees them: how many were judged, their range, and how many groups of `group_size`
    consecutive rollouts had rewards that differ (the only groups GRPO learns from)."""
    judged = [r for r in rewards if r is not None]
    groups = [[r for r in rewards[i:i + group_size] if r is not None] for i in range(0, len(rewards), group_size)]
    return {"judged": len(judged), "reward_mean": round(statistics.fmean(judged), 4) if judged else None,
            "reward_min": min(judged, default=None), "reward_max": max(judged, default=None),
            "groups": len(groups), "groups_with_signal": sum(len(set(g)) > 1 for g in groups)}


def summarize(records: list[EpisodeRecord]) -> dict[str, Any]:
    """A step's episodes in numbers: errors, tool calls (invalid ones included) and container time."""

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 4) if values else 0.0

    return {"episodes": len(records),
            "verifier_errors": sum(r.outcome == EpisodeOutcome.VERIFIER_ERROR for r in records),
            "setup_errors": sum(r.outcome == EpisodeOutcome.SETUP_ERROR for r in records),
            "limit_exceeded": sum(r.outcome == EpisodeOutcome.LIMIT_EXCEEDED for r in records),
            "tool_calls_mean": mean([r.tool_calls for r in records]),
            "invalid_calls_mean": mean([r.invalid_calls for r in records]),
            "setup_s_mean": mean([r.setup_s for r in records]), "verify_s_mean": mean([r.verify_s for r in records])}


class RunLog:
    """Collects episode records between log points and appends one JSON line per step to metrics.jsonl; keeps a few
    transcripts per step under transcripts/."""

    def __init__(self, out: Path, transcripts_every: int, transcripts_per_step: int, group_size: int = 1) -> None:
        self.metrics_file = out / "metrics.jsonl"
        self.transcripts = out / "transcripts"
        self.transcripts.mkdir(parents=True, exist_ok=True)
        self._every = transcripts_every
        self._per_step = transcripts_per_step
        self._group_size = group_size
        self._pending: list[EpisodeRecord] = []
        self._rewards: list[float | None] = []
        self._signal_tokens = 0
        self._lock = threading.Lock()
        self.step = 0
        self.curve: list[tuple[int, float]] = []
        self.lines: list[dict[str, Any]] = []  # every step's line, those kept from before a resume included
        self.errors = ErrorWindow()
        self.stopped_because: str | None = None  # a guard's reason to stop (with its fix)
        self.loss_not_finite = False
        self.summary: dict[str, Any] = {}  # the trainer's closing numbers (runtime, mean loss)
        self._waited_s = 0.0

    def waited(self, seconds: float) -> None:
        """Time the trainer spent waiting on containers outside tool calls (starts, the batch's verification)."""
        with self._lock:
            self._waited_s += seconds

    def record(self, records: list[EpisodeRecord], rewards: list[float | None]) -> None:
        """Episodes verified in one reward call (in the trainer's order: groups are consecutive), and the rewards the
        trainer was given for them. Each outcome goes through the error window."""
        with self._lock:
            self._pending.extend(records)
            self._rewards.extend(rewards)
            for record in records:
                reason = self.errors.add(record.outcome)
                self.stopped_because = self.stopped_because or reason

    def signal(self, tokens: int) -> None:
        """Tokens of a generation batch that carried a non-zero advantage (counted where the trainer computes it)."""
        with self._lock:
            self._signal_tokens += tokens

    def forget_after(self, step: int) -> None:
        """On resume: drop the lines of steps after the checkpoint (they are trained again)."""
        if not self.metrics_file.is_file():
            return
        kept = [line for line in self.metrics_file.read_text().splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= step]
        self.metrics_file.write_text("".join(line + "\n" for line in kept))
        self.lines = [json.loads(line) for line in kept]
        self.curve = [(line["step"], line["reward_mean"]) for line in self.lines if line.get("reward_mean") is not None]

    def write_step(self, step: int, trainer_logs: dict[str, Any]) -> dict[str, Any]:
        """One line: the trainer's numbers for the step and the step's episodes."""
        with self._lock:
            records, self._pending = self._pending, []
            rewards, self._rewards = self._rewards, []
            waited, self._waited_s = self._waited_s, 0.0
            tokens, self._signal_tokens = self._signal_tokens, 0
        line = {"step": step, "time": round(time.time(), 3), **summarize(records),
                **reward_spread(rewards, self._group_size), "signal_tokens": tokens,
                **{k: v for k, v in trainer_logs.items() if isinstance(v, int | float)}}
        line["container_wait_s"] = round(waited + sum(r.tool_s for r in records), 3)
        if line.get("step_time"):
            line["container_share"] = round(line["container_wait_s"] / line["step_time"], 4)
        if "loss" in line and not math.isfinite(line["loss"]):
            self.loss_not_finite = True
        with self.metrics_file.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        self.lines.append(line)
        if line["reward_mean"] is not None:
            self.curve.append((step, line["reward_mean"]))
        if self._per_step and step % self._every == 0:
            for index, record in enumerate(records[: self._per_step]):
                self.write_transcript(f"step-{step:05d}-{index}", asdict(record))
        self.step = step
        return line

    def write_transcript(self, name: str, data: dict[str, Any]) -> None:
        """One rollout's transcript file under transcripts/."""
        write_transcript(self.transcripts, name, data)


class Progress:
    """A rich progress bar in a terminal (step, reward, episodes per second, ETA); whole plain lines elsewhere (CI)."""

    def __init__(self, total_steps: int, stream: IO[str] | None = None) -> None:
        self.total = total_steps
        self.stream = stream or sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.monotonic()
        self.episodes = 0
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    def update(self, line: dict[str, Any]) -> None:
        """Show one step's line."""
        self.episodes += line.get("episodes", 0)
        elapsed = time.monotonic() - self.started
        step = line["step"]
        reward = "-" if line.get("reward_mean") is None else f"{line['reward_mean']:.3f}"
        status = (f"reward {reward} · groups with signal {line.get('groups_with_signal', 0)}/{line.get('groups', 0)}"
                  f" · tool calls {line.get('tool_calls_mean', 0):.1f} · verifier errors "
                  f"{line.get('verifier_errors', 0)} · {self.episodes / max(elapsed, 1e-9) * 60:.1f} episodes/min")
        if self.live:
            bar, task = self._rich()
            bar.update(task, completed=step, status=status)
            return
        eta = elapsed / max(step, 1) * max(self.total - step, 0)
        print(f"train step {step}/{self.total} {status} · ETA {eta:.0f}s", file=self.stream, flush=True)

    def say(self, message: str) -> None:
        """A line about a phase (warm-up, pre-flight, saving)."""
        if self._bar is not None:
            self._bar.console.print(message)
        else:
            print(message, file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the live display."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _rich(self) -> tuple[RichProgress, TaskID]:
        if self._bar is None or self._task is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("train"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[status]}"), console=Console(file=self.stream))
            self._task = self._bar.add_task("train", total=self.total, status="")
            self._bar.start()
        return self._bar, self._task


def keep_transcripts(out: Path | None, phase: str) -> Callable[[EpisodeResult, int], None] | None:
    """Writes each episode of a phase to transcripts/<phase>-<instance>-<sample>.json (None without a folder)."""
    if out is None:
        return None
    folder = out / "transcripts"

    def keep(result: EpisodeResult, sample: int) -> None:
        write_transcript(folder, f"{phase}-{result.instance}-{sample}", transcript_of(result))

    return keep


def write_transcript(folder: Path, name: str, data: dict[str, Any]) -> None:
    """One transcript file, `folder`/`name`.json, written whole (a reader never sees half of one)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / f"{name}.json", json.dumps(data, indent=1, default=str) + "\n")
