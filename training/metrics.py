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
    tool_s: float = 0.0  # time the model's tool calls spent in the sandbox
    transcript: list = field(default_factory=list)

    @classmethod
    def of(cls, result: EpisodeResult | None, calls: int, invalid: int, tool_s: float = 0.0) -> EpisodeRecord:
        """From an episode's result (None: the instance could not be set up)."""
        if result is None:
            return cls(None, "setup_error", None, calls, invalid, 0.0, 0.0, 0.0, "the instance could not be set up")
        timings = result.timings
        return cls(result.instance, result.outcome, result.reward, calls, invalid, timings.get("setup_s", 0.0),
                   timings.get("agent_s", 0.0), timings.get("verify_s", 0.0), result.error, tool_s,
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
        self.episodes_seen = 0
        self.verifier_errors = 0
        self.stopped_because: str | None = None
        self.summary: dict = {}  # the trainer's closing numbers (runtime, mean loss)
        self._waited_s = 0.0

    def waited(self, seconds: float) -> None:
        """Time the trainer spent waiting on containers outside tool calls (starts, the batch's verification)."""
        with self._lock:
            self._waited_s += seconds

    @property
    def verifier_error_share(self) -> float:
        """Share of all rollouts so far whose verifier errored."""
        return self.verifier_errors / self.episodes_seen if self.episodes_seen else 0.0

    def record(self, records: list[EpisodeRecord]) -> None:
        """Episodes verified in one reward call."""
        with self._lock:
            self._pending.extend(records)
            self.episodes_seen += len(records)
            self.verifier_errors += sum(r.outcome == "verifier_error" for r in records)

    def forget_after(self, step: int) -> None:
        """On resume: drop the lines of steps after the checkpoint (they are trained again)."""
        if not self.metrics_file.is_file():
            return
        kept = [line for line in self.metrics_file.read_text().splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= step]
        self.metrics_file.write_text("".join(line + "\n" for line in kept))
        self.curve = [(json.loads(line)["step"], json.loads(line)["reward_mean"]) for line in kept
                      if json.loads(line).get("reward_mean") is not None]

    def write_step(self, step: int, trainer_logs: dict) -> dict:
        """One line: the trainer's numbers for the step and the step's episodes."""
        with self._lock:
            records, self._pending = self._pending, []
            waited, self._waited_s = self._waited_s, 0.0
        line = {"step": step, "time": round(time.time(), 3), **summarize(records),
                **{k: v for k, v in trainer_logs.items() if isinstance(v, int | float)}}
        line["container_wait_s"] = round(waited + sum(r.tool_s for r in records), 3)
        if line.get("step_time"):
            line["container_share"] = round(line["container_wait_s"] / line["step_time"], 4)
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
    """A rich progress bar in a terminal (step, reward, episodes per second, ETA); whole plain lines elsewhere (CI)."""

    def __init__(self, total_steps: int, stream: object = None) -> None:
        self.total = total_steps
        self.stream = stream or sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.monotonic()
        self.episodes = 0
        self._bar: object = None
        self._task: object = None

    def update(self, line: dict) -> None:
        """Show one step's line."""
        self.episodes += line.get("episodes", 0)
        elapsed = time.monotonic() - self.started
        step = line["step"]
        reward = "-" if line.get("reward_mean") is None else f"{line['reward_mean']:.3f}"
        status = (f"reward {reward} · tool calls {line.get('tool_calls_mean', 0):.1f} · verifier errors "
                  f"{line.get('verifier_errors', 0)} · {self.episodes / max(elapsed, 1e-9) * 60:.1f} episodes/min")
        if self.live:
            self._rich().update(self._task, completed=step, status=status)  # type: ignore[attr-defined]
            return
        eta = elapsed / max(step, 1) * max(self.total - step, 0)
        print(f"train step {step}/{self.total} {status} · ETA {eta:.0f}s", file=self.stream, flush=True)

    def say(self, message: str) -> None:
        """A line about a phase (warm-up, calibration, saving)."""
        if self._bar is not None:
            self._bar.console.print(message)  # type: ignore[attr-defined]
        else:
            print(message, file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the live display."""
        if self._bar is not None:
            self._bar.stop()  # type: ignore[attr-defined]
            self._bar = None

    def _rich(self) -> object:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("train"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.fields[status]}"), console=Console(file=self.stream))
            self._task = self._bar.add_task("train", total=self.total, status="")  # type: ignore[attr-defined]
            self._bar.start()  # type: ignore[attr-defined]
        return self._bar
