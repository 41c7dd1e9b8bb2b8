"""A real CPU training run on the real engine: GRPO + LoRA on the small model, killed mid-way and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.cleanup import collect_garbage
from tests.conftest import OWNER

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2100)]


def wait_for(path: Path, process: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the run ended ({process.returncode}) before {path} appeared: "
                                 f"{process.stderr.read() if process.stderr else ''}")
        assert time.monotonic() < deadline, f"{path} did not appear within {timeout_s} s"
        time.sleep(1)


def test_a_killed_cpu_run_resumes_and_writes_a_complete_run(engine: object, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [ARENA, "train", str(ECHO_WORD), "--recipe", "cpu-small", "--out", str(out), "--skip-calibration",
               "--steps", "3"]
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        wait_for(out / "checkpoints" / "checkpoint-2" / "trainer_state.json", first, 1500)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    collect_garbage(engine, include_images=False, owner=OWNER)  # what a kill -9 leaves, as `arena gc` removes it
    assert not (out / "adapter").exists() and not (out / "manifest.json").exists()  # nothing half-written

    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=1500)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["steps"] == 3 and manifest["resumed_from_step"] == 2
    assert manifest["recipe"]["name"] == "cpu-small" and manifest["recipe"]["overrides"] == {"grpo.steps": 3}
    assert manifest["package_digest"].startswith("sha256:") and manifest["image"].startswith("posttrain-arena")
    assert manifest["gpu_hours"] == 0 and manifest["wall_s"] > 0 and {"torch", "trl", "peft"} <= set(
        manifest["libraries"])
    assert manifest["adapter"]["digest"].startswith("sha256:") and (out / "adapter" / "adapter_config.json").is_file()
    assert manifest["preflight"] == {"skipped": True}
    assert len(manifest["seeds"]["heldout"]) == 8
    lift = manifest["in_domain"]  # base and trained model on the same held-out instances (cpu-small: 2 x 1 sample)
    assert lift["instances"] == manifest["seeds"]["heldout"][:2] and lift["samples"] == 1
    assert lift["lift"] is None or lift["interval"][0] <= lift["lift"] <= lift["interval"][1]
    assert manifest["segments"] == 2 and manifest["total_wall_s"] > manifest["wall_s"]  # the killed run counts too

    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2, 3]  # the step after the checkpoint was logged once
    for line in lines:
        assert line["episodes"] == 4 and line["verifier_errors"] == 0 and "tool_calls_mean" in line
        assert line["reward_mean"] is not None and 0 <= line["reward_mean"] <= 1
        assert 0 < line["container_share"] < 1 and line["container_wait_s"] > 0
        assert line["groups"] == 1 and "grad_norm" in line and "signal_tokens" in line
        assert line["tool_calls_mean"] == line["tools/call_frequency"]  # the arena's count and TRL's agree
    transcripts = sorted((out / "transcripts").glob("step-*.json"))
    first = json.loads(transcripts[0].read_text())
    assert transcripts and first["outcome"] == "scored"
    assert [m["role"] for m in first["conversation"][:3]] == ["system", "user", "assistant"]  # the model's turns
    assert sorted((out / "transcripts").glob("in-domain-trained-*.json"))  # the in-domain lift's episodes too
    assert "train step 3/3" in resumed.stderr

    evidence = manifest["update_evidence"]
    assert evidence["effective"] and evidence["missing"] == [] and evidence["steps"] == 3
    assert evidence["groups_with_signal"] >= 1 and evidence["signal_tokens"] > 0 and evidence["lora_b_changed"] > 0
    assert evidence["steps_with_gradient"] >= 1 and evidence["losses_finite"] and evidence["weights_finite"]
    block = resumed.stdout[resumed.stdout.index("run summary"):]
    assert f"groups with signal: {evidence['groups_with_signal']} of 3" in block and "verdict: trained" in block
