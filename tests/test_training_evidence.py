"""A package whose verifier never varies: the pre-flight cannot refuse it on cpu-small's few samples (inconclusive:
it trains, with the model's turns kept), and the real CPU run ends `no_effective_update` (exit 1), unscored. A folder
the pre-flight refused trains anyway with --skip-preflight, and the manifest keeps the verdict it overrode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.score_run import ScoringError, training_summary
from taskpkg.run_manifest import TrainingManifest

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
        env={**os.environ, "ARENA_PREFLIGHT_CACHE": str(out.parent / "preflight-cache")},  # played, never reused
    )


def model_turns(transcript: dict) -> list[dict]:
    return [m for m in transcript["conversation"] if m["role"] == "assistant"]


def test_a_verifier_that_never_varies_trains_without_an_update_and_is_never_scored(
    engine: object, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    trained = arena_train(out)
    assert trained.returncode == 1, trained.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "no_effective_update" and manifest["steps"] == 1
    assert manifest["preflight"]["verdict"]["with_signal"] == 0  # no group carried signal, too few to refuse
    preflight = sorted((out / "transcripts").glob("preflight-*.json"))
    assert preflight and all(model_turns(json.loads(p.read_text())) for p in preflight)  # the model's turns
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


def write_refused_run(out: Path) -> None:
    out.mkdir()
    report = {"verdict": {"decision": "refuse", "reason": "0 of 49 groups carry signal"}, "samples": 98}
    (out / "manifest.json").write_text(json.dumps({"status": "stopped", "preflight": report}))


def test_a_folder_the_preflight_refused_names_the_command_then_trains_anyway_keeping_the_verdict(
    tmp_path: Path,
) -> None:
    from taskpkg.loader import load_package
    from training.preflight import preflight_gate
    from training.recipe import load_recipe
    from training.run import TrainingError, prepare_output, rerun_command

    out = tmp_path / "run"
    write_refused_run(out)
    package = load_package(FLAT).package
    rerun = rerun_command(package, load_recipe("cpu-small", steps=1), out)
    assert rerun == f"arena train {FLAT} --recipe cpu-small --out {out} --steps 1 --skip-preflight"
    with pytest.raises(TrainingError, match=r"the pre-flight stopped the run in this folder \(0 of 49 groups carry "
                       r"signal\); to train anyway here, run: arena train .* --skip-preflight"):
        prepare_output(out, resume=False, skip_preflight=False, rerun=rerun)
    overridden = prepare_output(out, resume=False, skip_preflight=True, rerun=rerun)  # no --resume needed
    assert overridden is not None and overridden["verdict"]["decision"] == "refuse"
    manifest = TrainingManifest()
    assert preflight_gate(None, package, None, "", [], out, True, manifest, print, overridden) == ("completed", None)
    assert manifest.preflight == {"skipped": True, "overridden": overridden}
    (out / "adapter").mkdir()  # a folder that trained is not a refused one: it needs --resume
    with pytest.raises(TrainingError, match="the folder is not empty; pass --resume"):
        prepare_output(out, resume=False, skip_preflight=True, rerun=rerun)
