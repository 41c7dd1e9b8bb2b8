"""The learnability pre-flight: its report from episodes, its verdict, its cache, and `arena train --preflight` on the
real engine with the real small model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from training.evaluate import Sample
from training.preflight import cache_key, cached_report, one_line, refusal, summary
from training.recipe import load_recipe

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
ARENA = str(Path(sys.executable).parent / "arena")


def samples(rewards: dict[int, list[float | None]]) -> list[Sample]:
    return [Sample(i, k, r, "scored" if r is not None else "verifier_error", 2, 1, k % 2, 1.0)
            for i, group in rewards.items() for k, r in enumerate(group)]


def test_the_report_counts_signal_pass_rates_turns_and_errors_per_instance() -> None:
    report = summary(samples({3: [0.0, 1.0, 0.0, 0.0], 5: [0.0, 0.0, 0.0, None], 8: [1.0, 1.0, 1.0, 1.0]}), 4, 0.95)
    rows = {row["instance"]: row for row in report["instances"]}
    assert rows[3]["signal"] and rows[3]["pass_rate"] == 0.25 and rows[3]["pass_at_g"] == 1.0
    assert not rows[5]["signal"] and rows[5]["judged"] == 3 and rows[5]["verifier_errors"] == 1
    assert not rows[8]["signal"] and rows[8]["pass_rate"] == 1.0
    assert rows[3]["turns"] == 2 and rows[3]["tool_errors"] == 2 and report["samples"] == 12
    assert report["pass_at_1"]["value"] == pytest.approx((0.25 + 0 + 1) / 3, abs=1e-4)
    assert report["pass_at_g"]["units"] == 2  # instance 5 lost a sample: pass@4 needs four judged ones
    low, high = report["pass_at_1"]["interval"]
    assert low < report["pass_at_1"]["value"] < high


def test_a_refusal_says_why_and_how_many_samples_it_took() -> None:
    verdict = {"decision": "refuse", "reason": "0 of 49 groups carry signal", "signal_share": [0.0, 0.09],
               "groups": 49, "with_signal": 0}
    report = {**summary(samples({1: [0.0, 0.0]}), 2, 0.95), "threshold": 0.1, "verdict": verdict}
    reason = refusal(report)
    assert reason is not None and "0 of 49" in reason and "--skip-preflight" in reason
    assert one_line(report).startswith("refuse: 0/49 groups of 2 carry signal (share 0.00–0.09, threshold 0.10)")
    assert refusal({**report, "verdict": {**verdict, "decision": "inconclusive"}}) is None


def test_the_cache_keys_on_the_package_and_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = load_recipe("cpu-small")
    key = cache_key("sha256:aa", "sha256:model", recipe)
    assert key != cache_key("sha256:bb", "sha256:model", recipe) != cache_key("sha256:aa", "sha256:other", recipe)
    fewer = replace(recipe, data={**recipe.data, "preflight": {**recipe.data["preflight"], "instances": 1}})
    assert key != cache_key("sha256:aa", "sha256:model", fewer)
    monkeypatch.setenv("ARENA_PREFLIGHT_CACHE", str(tmp_path / "cache"))
    assert cached_report(key, tmp_path) is None
    (tmp_path / "preflight.json").write_text(json.dumps({"key": key, "samples": 3}))
    assert cached_report(key, tmp_path) == {"key": key, "samples": 3}
    assert cached_report(cache_key("sha256:bb", "sha256:model", recipe), tmp_path) is None


def tiny_recipe(folder: Path) -> Path:
    """cpu-small without its warm-up (not needed to exercise the pre-flight), two samples on one instance."""
    text = (ROOT / "training" / "recipes" / "cpu-small.yaml").read_text()
    start, end = text.index("  warmup:"), text.index("# LoRA on the top four")
    text = (text[:start] + text[end:]).replace("name: cpu-small", "name: preflight-test")
    text = text.replace("num_generations: 4", "num_generations: 2").replace("micro_batch_size: 4",
                                                                              "micro_batch_size: 2")
    text = text.replace("preflight:\n  instances: 2\n  max_instances: 4", "preflight:\n  instances: 1\n  "
                        "max_instances: 1")
    path = folder / "preflight-test.yaml"
    path.write_text(text)
    return path


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_arena_train_preflight_prints_its_table_and_verdict_and_caches_it(engine: object, tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_PREFLIGHT_CACHE": str(tmp_path / "cache")}
    command = [ARENA, "train", str(ECHO_WORD), "--recipe", str(tiny_recipe(tmp_path)), "--preflight", "--out",
               str(tmp_path / "out")]
    first = subprocess.run(command, capture_output=True, text=True, timeout=800, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "pass rate signal  pass@2" in first.stdout and "pre-flight: inconclusive: " in first.stdout
    report = json.loads((tmp_path / "out" / "preflight.json").read_text())
    assert report["samples"] == 2 and len(report["instances"]) == 1 and report["verdict"]["groups"] <= 1
    again = subprocess.run(command, capture_output=True, text=True, timeout=800, env=env)
    assert again.returncode == 0 and "pre-flight: reused (2 samples" in again.stdout
