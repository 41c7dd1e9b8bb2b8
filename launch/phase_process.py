"""One phase of a job as a child process: its output into the phase's own log file (never the job's log, which the
poller reads and which must carry nothing the package printed), a heartbeat while it runs, and a deadline."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TERMINATE_GRACE_S = 30.0


@dataclass(frozen=True)
class PhaseOutcome:
    """How a phase ended: its exit code (None when the deadline stopped it) and its wall time."""

    exit_code: int | None
    wall_s: float

    @property
    def over_deadline(self) -> bool:
        return self.exit_code is None


def run_phase(command: list[str], log_path: Path, header: str, deadline_s: float,
              heartbeat: Callable[[float], None], every_s: float, stdout_path: Path | None = None) -> PhaseOutcome:
    """Run `command` with its output appended to `log_path` (its stdout to `stdout_path` instead, when given),
    calling `heartbeat(elapsed)` every `every_s` seconds; stop it once `deadline_s` seconds have passed."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(log_path, "a", encoding="utf-8"))
        log.write(f"== {header} ==\n")
        log.flush()
        stdout = stack.enter_context(open(stdout_path, "w", encoding="utf-8")) if stdout_path else log
        process = stack.enter_context(subprocess.Popen(command, stdout=stdout, stderr=log,
                                                       stdin=subprocess.DEVNULL))
        while True:
            elapsed = time.monotonic() - started
            try:
                code = process.wait(timeout=max(0.1, min(every_s, deadline_s - elapsed)))
                return PhaseOutcome(code, round(time.monotonic() - started, 1))
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
            if elapsed >= deadline_s:
                _stop(process)
                log.write(f"== stopped after {elapsed:.0f} s: the job's wall-clock ceiling ==\n")
                return PhaseOutcome(None, round(elapsed, 1))
            heartbeat(elapsed)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
