"""Real CPU runs on a package whose verifier never varies: calibration refuses it (with the model's turns kept), the
same folder then trains anyway with --skip-calibration, and the run ends `no_effective_update` (exit 1), unscored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.score_run import ScoringError, training_summary

ROOT = Path(__file__).resolve().parent.parent
FLAT = ROOT / "tests" / "fixtures" / "training" / "flat-reward"
ARENA = str(Path(sys.executable).parent / "arena")

# The first test to need the small model prepares it (about 10 minutes on 2 cores, then cached).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2100)]


def arena_train(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [ARENA, "train", str(FLAT), "--recipe", "cpu-small", "--out", str(out), "--steps", "1", *extra],
        capture_output=True,
        text=True,
        timeout=1500,
    )


def model_turns(transcript: dict) -> list[dict]:
    return [m for m in transcript["conversation"] if m["role"] == "assistant"]


def test_a_verifier_that_never_varies_is_refused_then_trained_anyway_without_an_update(
    engine: object, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    refused = arena_train(out)
    assert refused.returncode == 1, refused.stderr[-3000:]
    assert "verdict: stopped: too hard for the base model" in refused.stderr
    calibration = sorted((out / "transcripts").glob("calibration-*.json"))
    assert len(calibration) == 2 and all(model_turns(json.loads(p.read_text())) for p in calibration)

    again = arena_train(out)  # the same command again: the message names the one that trains anyway
    assert again.returncode == 1
    assert (
        f"calibration stopped the run in this folder (too hard for the base model: it scored 0 on every "
        f"calibration instance, so GRPO has no signal); to train anyway here, run: arena train {FLAT} --recipe "
        f"cpu-small --out {out} --steps 1 --skip-calibration"
    ) in again.stderr

    trained = arena_train(out, "--skip-calibration")  # no --resume needed
    assert trained.returncode == 1, trained.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "no_effective_update" and manifest["steps"] == 1
    assert manifest["calibration"]["skipped"] and manifest["calibration"]["overridden"]["verdict"].startswith(
        "too hard for the base model"
    )
    evidence = manifest["update_evidence"]
    assert not evidence["effective"] and evidence["groups"] == 1 and evidence["groups_with_signal"] == 0
    assert evidence["signal_tokens"] == 0 and evidence["lora_b_tensors"] == 16 and evidence["lora_b_changed"] == 0
    assert evidence["rewards"] == {"judged": 4, "min": 0.0, "max": 0.0, "mean": 0.0}
    assert "adapter" not in manifest and not (out / "adapter").exists()  # nothing to score
    block = trained.stderr[trained.stderr.index("run summary") :]
    assert "groups with signal: 0 of 1 (0%)" in block and "LoRA-B tensors changed: 0 of 16" in block
    assert "verdict: no_effective_update: no effective update: no group of rollouts had rewards that differed" in block
    assert "the run is not scored" in trained.stderr

    [line] = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert line["groups_with_signal"] == 0 and line["signal_tokens"] == 0 and line["grad_norm"] == 0.0
    assert line["tool_calls_mean"] == line["tools/call_frequency"]  # the arena's count and TRL's agree
    [rollout] = [json.loads(p.read_text()) for p in (out / "transcripts").glob("step-*.json")]
    assert rollout["conversation"][0]["role"] == "system" and model_turns(rollout)  # the model's turns are kept
    assert len(rollout["transcript"]) <= rollout["tool_calls"]

    with pytest.raises(ScoringError, match="the training run ended no_effective_update, not completed"):
        training_summary(out / "manifest.json")  # what `arena score --training-manifest` reads first
