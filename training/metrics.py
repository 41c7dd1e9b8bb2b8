"""What a training run reports: per-episode records, per-step metrics as JSON lines, sample transcripts, progress."""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sandbox.outcomes import EpisodeResult


@dataclass(frozen=True)
class EpisodeRecord:
    """One rollout's outcome and costs."""

    instance: int | None
    outcome: str
    reward: float | None
    tool_calls: int
    invalid_calls: int
    setup_s: float
    agent_s: float
    verify_s: float
    error: str | None
    transcript: list = field(default_factory=list)

    @classmethod
    def of(cls, result: EpisodeResult | None, calls: int, invalid: int) -> EpisodeRecord:
        """From an episode's result (None: the instance could not be set up)."""
        if result is None:
            return cls(None, "setup_error", None, calls, invalid, 0.0, 0.0, 0.0, "the instance could not be set up")
        timings = result.timings
        return cls(result.instance, result.outcome, result.reward, calls, invalid, timings.get("setup_s", 0.0),
                   timings.get("agent_s", 0.0), timings.get("verify_s", 0.0), result.error,
                   result.transcript.to_list())


def summarize(records: list[EpisodeRecord]) -> dict:
    """A step's episodes in numbers: mean reward over judged rollouts, errors, tool calls and container time."""
    judged = [r.reward for r in records if r.reward is not None]

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 4) if values else 0.0

    return {"episodes": len(records), "reward_mean": mean(judged) if judged else None,
            "verifier_errors": sum(r.outcome == "verifier_error" for r in records),
            "setup_errors": sum(r.outcome == "setup_error" for r in records),
            "limit_exceeded": sum(r.outcome == "limit_exceeded" for r in records),
            "tool_calls_mean": mean([r.tool_calls for r in records]),
            "invalid_calls_mean": mean([r.invalid_calls for r in records]),
            "setup_s_mean": mean([r.setup_s for r in records]), "verify_s_mean": mean([r.verify_s for r in records])}


class RunLog:
    """Collects episode records between log points and appends one JSON line per step to metrics.jsonl; keeps a few
    transcripts per step under transcripts/."""

    def __init__(self, out: Path, transcripts_every: int, transcripts_per_step: int) -> None:
        self.metrics_file = out / "metrics.jsonl"
        self.transcripts = out / "transcripts"
        self.transcripts.mkdir(parents=True, exist_ok=True)
        self._every = transcripts_every
        self._per_step = transcripts_per_step
        self._pending: list[EpisodeRecord] = []
        self._lock = threading.Lock()
        self.verifier_waits_s = 0.0
        self.step = 0
        self.curve: list[tuple[int, float]] = []

    def record(self, records: list[EpisodeRecord]) -> None:
        """Episodes verified in one reward call."""
        with self._lock:
            self._pending.extend(records)

    def write_step(self, step: int, trainer_logs: dict) -> dict:
        """One line: the trainer's numbers for the step and the step's episodes."""
        with self._lock:
            records, self._pending = self._pending, []
        line = {"step": step, "time": round(time.time(), 3), **summarize(records),
                **{k: v for k, v in trainer_logs.items() if isinstance(v, int | float)}}
        with self.metrics_file.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        if line["reward_mean"] is not None:
            self.curve.append((step, line["reward_mean"]))
        if self._per_step and step % self._every == 0:
            for index, record in enumerate(records[: self._per_step]):
                path = self.transcripts / f"step-{step:05d}-{index}.json"
                path.write_text(json.dumps(asdict(record), indent=1, default=str))
        self.step = step
        return line


class Progress:
    """A live line in a terminal (step, reward, episodes per second, ETA); whole plain lines elsewhere (CI)."""

    def __init__(self, total_steps: int, stream: object = None) -> None:
        self.total = total_steps
        self.stream = stream or sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.monotonic()
        self.episodes = 0

    def update(self, line: dict) -> None:
        """Show one step's line."""
        self.episodes += line.get("episodes", 0)
        elapsed = time.monotonic() - self.started
        step = line["step"]
        eta = elapsed / max(step, 1) * max(self.total - step, 0)
        reward = "-" if line.get("reward_mean") is None else f"{line['reward_mean']:.3f}"
        text = (f"train step {step}/{self.total} reward {reward} tool calls {line.get('tool_calls_mean', 0):.1f} "
                f"verifier errors {line.get('verifier_errors', 0)} episodes/s {self.episodes / max(elapsed, 1e-9):.2f}"
                f" ETA {eta:.0f}s")
        end = "\r" if self.live and step < self.total else "\n"
        print(text.ljust(100) if self.live else text, end=end, file=self.stream, flush=True)

    def say(self, message: str) -> None:
        """A line about a phase (warm-up, calibration, saving)."""
        print(message, file=self.stream, flush=True)
