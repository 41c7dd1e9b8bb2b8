"""Held-out evaluation for real: the small model and a LoRA adapter over a fixture suite in the sandbox, the record's
numbers recomputed from the episodes, resuming without redoing work, and the base arm's cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scoring.evaluation import PROFILES, EpisodeLog, Outcome, paired_items, selected_items
from scoring.score_run import ScoreOptions, ScoringError, score
from scoring.suite import load_suite
from taskpkg.loader import load_package
from tests.support.suites import make_suite

TINY = replace(PROFILES["quick"], name="tiny", items_per_domain=1, max_new_tokens=12, max_episode_tokens=12)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An adapter and a completed training manifest: a LoRA (untrained, as PEFT initialises it) on the warmed-up
    small model, with the manifest `arena train` would write."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from agents.models import small_model
    from training.recipe import load_recipe
    from training.trainer import lora_config
    from training.warmup import warmed_base

    recipe = load_recipe("cpu-small")
    base = warmed_base(small_model(), recipe["model"]["warmup"])
    run = tmp_path_factory.mktemp("run")
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(base.path), lora_config(recipe["lora"]))
    model.save_pretrained(run / "adapter")
    manifest = {"status": "completed", "commit": "a" * 40, "steps": 2, "gpu_hours": 0.0, "wall_s": 60.0,
                "hardware": {"cpus": 2, "gpus": []}, "reward_curve": [[1, 0.25], [2, 0.5]],
                "recipe": {"name": recipe.name, "digest": recipe.digest},
                "base_model": {"name": base.name, "revision": base.revision, "path": str(base.path)}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_pairing_excludes_an_item_whose_verifier_failed_in_either_arm() -> None:
    suite_items = ["a", "b"]

    class Item:
        def __init__(self, name: str) -> None:
            self.id, self.domain, self.cluster_id = name, "finance", None

    base = {("a", 0): Outcome("base", "a", 0, 0.5, "scored"), ("b", 0): Outcome("base", "b", 0, 1.0, "scored")}
    trained = {("a", 0): Outcome("trained", "a", 0, 1.0, "scored"),
               ("b", 0): Outcome("trained", "b", 0, None, "verifier_error", "boom")}
    paired = paired_items([Item(n) for n in suite_items], 1, base, trained)  # type: ignore[arg-type]
    assert paired[0].base == (0.5,) and paired[0].trained == (1.0,) and paired[0].error is None
    assert paired[1].error == "verifier_error" and paired[1].base == () and paired[1].trained == ()


@pytest.mark.slow
@pytest.mark.timeout(1800)  # its fixture prepares the small model when no earlier test did (about 10 minutes)
def test_scoring_writes_a_record_whose_numbers_follow_from_the_episodes(engine: object, tmp_path: Path,
                                                                       trained_run: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SCORE_CACHE", str(tmp_path / "cache"))
    suite = load_suite(make_suite(tmp_path / "suite", domains=("finance", "healthcare", "law-government",
                                                              "office-documents", "math-planning")))
    package = load_package(Path(__file__).resolve().parent / "fixtures" / "training" / "echo-word").package
    assert package is not None
    options = ScoreOptions(trained_run / "adapter", trained_run / "manifest.json", tmp_path / "out", TINY)
    record = score(package, suite, options, say=lambda _: None)

    assert record.environment == "echo-word" and record.commit == "a" * 40 and record.complete
    assert record.suite == "test-suite-tiny" and record.raw["suite"]["items"] == 5
    assert record.raw["samples_per_item"] == 1
    trained = {o.item: o for (arm, _, _), o in EpisodeLog(tmp_path / "out" / "episodes.jsonl").done().items()
               if arm == "trained"}
    cached = list((tmp_path / "cache").glob("base-*.jsonl"))
    base = {o.item: o for o in EpisodeLog(cached[0]).done().values()}
    assert len(trained) == len(base) == 5
    items = {i.id: i for i in selected_items(suite, TINY)}
    for domain in record.domains:
        ids = [i for i, item in items.items() if item.domain == domain.domain and base[i].reward is not None
               and trained[i].reward is not None]
        assert domain.items == len(ids)
        assert domain.base == pytest.approx(sum(base[i].reward for i in ids) / len(ids))  # type: ignore[misc]
        assert domain.trained == pytest.approx(sum(trained[i].reward for i in ids) / len(ids))  # type: ignore[misc]
        assert domain.delta == pytest.approx(domain.trained - domain.base)
    assert record.macro_delta == pytest.approx(sum(d.delta for d in record.domains) / len(record.domains))
    assert record.raw["training"]["steps"] == 2 and record.raw["training"]["reward_curve"] == [[1, 0.25], [2, 0.5]]
    assert record.raw["contamination"]["verdict"] == "pass"

    # Resume: a second run with the same folder plays nothing again and writes the same numbers.
    lines = (tmp_path / "out" / "episodes.jsonl").read_text().count("\n")
    again = score(package, suite, options, say=lambda _: None)
    assert (tmp_path / "out" / "episodes.jsonl").read_text().count("\n") == lines
    assert again.run_id == record.run_id and again.macro_delta == record.macro_delta

    # Another submission scored the same way reuses the base arm: only the trained arm is played.
    other = ScoreOptions(trained_run / "adapter", trained_run / "manifest.json", tmp_path / "other", TINY)
    score(package, suite, other, say=lambda _: None)
    assert cached[0].read_text().count("\n") == 5
    assert (tmp_path / "other" / "episodes.jsonl").read_text().count("\n") == 5


@pytest.mark.timeout(1800)
@pytest.mark.slow
def test_bad_inputs_say_what_to_pass(tmp_path: Path, trained_run: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "suite", domains=("finance", "healthcare", "law-government",
                                                              "office-documents", "math-planning")))
    package = load_package(Path(__file__).resolve().parent / "fixtures" / "training" / "echo-word").package
    assert package is not None
    broken = tmp_path / "manifest.json"
    broken.write_text("{not json")
    with pytest.raises(ScoringError, match="not a completed training manifest"):
        score(package, suite, ScoreOptions(trained_run / "adapter", broken, tmp_path / "out", TINY))
    with pytest.raises(ScoringError, match=r"no adapter_config\.json"):
        score(package, suite, ScoreOptions(tmp_path, trained_run / "manifest.json", tmp_path / "out", TINY))
