"""GPU-hours over every segment of a run: a resumed run adds its segment to the earlier ones'."""

from __future__ import annotations

import json
import time
from pathlib import Path

from training.segments import SEGMENTS_FILE, SegmentClock


def test_a_resumed_run_counts_every_segment_and_a_new_one_starts_afresh(tmp_path: Path) -> None:
    first = SegmentClock(tmp_path, resume=False, gpus=2)
    time.sleep(0.2)
    first.stop()
    killed = json.loads((tmp_path / SEGMENTS_FILE).read_text())["segments"]
    assert len(killed) == 1 and killed[0]["wall_s"] >= 0.1 and killed[0]["gpus"] == 2
    second = SegmentClock(tmp_path, resume=True, gpus=2)
    time.sleep(0.2)
    second.stop()
    assert len(second.segments) == 2 and second.wall_s >= 0.3
    assert second.gpu_hours == round(sum(s["wall_s"] for s in second.segments) * 2 / 3600, 4) > 0
    assert len(SegmentClock(tmp_path, resume=False, gpus=1).segments) == 1
