"""The wall time and GPU-hours of a run over all its segments: a run preempted and resumed in the same folder is one
run, and what it cost is the sum of every process that worked on it, not the last one's.

Each `arena train` process appends its segment to `segments.json` in the output folder and keeps its wall time
current from a background thread (every HEARTBEAT_S seconds, so a killed segment loses at most that much), then
writes it exactly when it ends.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from taskpkg.atomic_files import write_json_atomic

SEGMENTS_FILE = "segments.json"
HEARTBEAT_S = 30.0


class SegmentClock:
    """This process's segment of a run, beside the earlier ones (when resuming)."""

    def __init__(self, out: Path, resume: bool, gpus: int) -> None:
        self.path = out / SEGMENTS_FILE
        earlier = _read(self.path) if resume else []
        self.segments = [*earlier, {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                    "wall_s": 0.0, "gpus": gpus}]
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._save()
        self._thread = threading.Thread(target=self._beat, name="arena-segment-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End this segment and write its final wall time."""
        self._stop.set()
        self._thread.join()
        self._save()

    @property
    def wall_s(self) -> float:
        """Wall time of every segment so far, this one included."""
        self._update()
        return round(sum(float(s["wall_s"]) for s in self.segments), 1)

    @property
    def gpu_hours(self) -> float:
        """GPU-hours of every segment: each one's wall time times the GPUs it held."""
        self._update()
        return round(sum(float(s["wall_s"]) * int(s.get("gpus", 0)) for s in self.segments) / 3600, 4)

    def _update(self) -> None:
        with self._lock:
            self.segments[-1]["wall_s"] = round(time.monotonic() - self._started, 1)

    def _save(self) -> None:
        self._update()
        with self._lock:
            write_json_atomic(self.path, {"segments": self.segments}, sort_keys=True)

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            self._save()


def _read(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    segments = data.get("segments") if isinstance(data, dict) else None
    return [s for s in segments if isinstance(s, dict) and "wall_s" in s] if isinstance(segments, list) else []
