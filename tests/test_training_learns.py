"""The small model learns something real on a deliberately easy package: its reward rises over a short CPU run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
ARENA = str(Path(sys.executable).parent / "arena")
STEPS = 8

# The first test to need the small model prepares it (about 10 minutes on 2 cores, then cached).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2100)]


def test_reward_rises_on_an_easy_package(engine: object, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run([ARENA, "train", str(ECHO_WORD), "--recipe", "cpu-small", "--out", str(out),
                           "--skip-calibration", "--steps", str(STEPS)], capture_output=True, text=True, timeout=2000)
    assert done.returncode == 0, done.stderr[-3000:]
    rewards = [json.loads(line)["reward_mean"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(rewards) == STEPS and all(r is not None for r in rewards)
    half = STEPS // 2
    early, late = sum(rewards[:half]) / half, sum(rewards[half:]) / half
    assert late > early, f"the reward did not rise: {rewards}"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["reward_curve"] == [[i + 1, r] for i, r in enumerate(rewards)]
