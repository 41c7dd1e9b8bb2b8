"""Held-out evaluation for real: the small model and a LoRA adapter over a fixture suite in the sandbox, the record's
numbers recomputed from the episodes, resuming without redoing work, and the base arm's cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sandbox.sandbox import Sandbox
from scoring.evaluation import (
    BASE_ERROR,
    PROFILES,
    RETRIES,
    EpisodeLog,
    Outcome,
    arm_errors,
    paired_items,
    play_arm,
    selected_items,
    with_retries,
)
from scoring.record import ArmErrors, build_run
from scoring.score_run import ScoreOptions, ScoringError, score
from scoring.suite import load_suite
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from tests.support.model_server import ReplayBackend
from tests.support.packages import edit
from tests.support.scoring import run_info
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
    base = warmed_base(small_model(), recipe.model.warmup)
    run = tmp_path_factory.mktemp("run")
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(base.path), lora_config(recipe.lora))
    model.save_pretrained(run / "adapter")
    manifest = {"status": "completed", "commit": "a" * 40, "steps": 2, "gpu_hours": 0.0, "wall_s": 60.0,
                "hardware": {"cpus": 2, "gpus": []}, "reward_curve": [[1, 0.25], [2, 0.5]],
                "recipe": {"name": recipe.name, "digest": recipe.digest},
                "base_model": {"name": base.name, "revision": base.revision, "path": str(base.path)}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


class Item:
    """The fields of a suite item that pairing reads."""

    def __init__(self, name: str, domain: str = "finance", cluster: str | None = None) -> None:
        self.id, self.domain, self.cluster_id = name, domain, cluster


def test_a_trained_episode_still_erring_scores_0_and_a_base_one_excludes_the_item() -> None:
    base = {("a", 0): Outcome("base", "a", 0, 0.5, "scored"), ("b", 0): Outcome("base", "b", 0, 1.0, "scored"),
            ("c", 0): Outcome("base", "c", 0, None, "verifier_error", "boom", 3)}
    trained = {("a", 0): Outcome("trained", "a", 0, 1.0, "scored"),
               ("b", 0): Outcome("trained", "b", 0, None, "verifier_error", "boom", 3),
               ("c", 0): Outcome("trained", "c", 0, 1.0, "scored", None, 2)}
    paired = paired_items([Item(n) for n in "abc"], 1, base, trained)
    assert paired[0].base == (0.5,) and paired[0].trained == (1.0,) and paired[0].error is None
    assert paired[1].base == (1.0,) and paired[1].trained == (0.0,) and paired[1].error is None
    assert paired[2].error == BASE_ERROR and paired[2].base == paired[2].trained == ()
    assert arm_errors(base) == ArmErrors(1, 1) and arm_errors(trained) == ArmErrors(2, 1)


def test_an_errored_episode_is_played_again_with_the_same_seed_up_to_the_retries() -> None:
    plays: list[int] = []

    def flaky(fails: int) -> object:
        def play(attempt: int) -> Outcome:
            plays.append(attempt)
            broken = attempt <= fails
            return Outcome("trained", "a", 0, None if broken else 1.0, "verifier_error" if broken else "scored",
                           None, attempt)
        return play

    assert with_retries(flaky(2)) == Outcome("trained", "a", 0, 1.0, "scored", None, 3) and plays == [1, 2, 3]
    plays.clear()
    outcome = with_retries(flaky(10))
    assert outcome.reward is None and outcome.attempts == 1 + RETRIES and plays == [1, 2, 3]


@pytest.mark.slow
def test_a_verifier_that_keeps_crashing_is_played_again_then_scored_0(sandbox: Sandbox, tmp_path: Path) -> None:
    """A real sandbox: the model writes nothing and the package's verifier crashes on a missing answer. The episode
    is played 1 + RETRIES times with the same seed, logged once, and the trained arm scores it 0."""
    manifest = make_suite(tmp_path / "suite", domains=("finance",), instances=(0,))
    verifier = tmp_path / "suite" / "packages" / "finance-sum" / "verifier.py"
    edit(verifier, 'return {"reward": 0.0, "details": {"reason": "answer.txt is missing"}}',
         'raise SystemExit("no answer: the verifier gives up")')
    suite = load_suite(manifest, check_balance=False)
    items = selected_items(suite, TINY)
    log = EpisodeLog(tmp_path / "episodes.jsonl")
    backend = ReplayBackend(["done"] * 8)
    outcomes = play_arm(sandbox, suite, items, "trained", backend, TINY, log)
    (outcome,) = outcomes.values()
    assert outcome.reward is None and outcome.outcome == "verifier_error" and outcome.attempts == 1 + RETRIES
    assert len(backend.seen) == 1 + RETRIES, "each attempt played the episode again"
    assert {json.dumps(m, sort_keys=True) for m in backend.seen[0]} == {
        json.dumps(m, sort_keys=True) for m in backend.seen[-1]}, "the same instance, the same prompt"
    assert list(log.done().values()) == [outcome]
    base = {key: replace(o, arm="base", reward=1.0, outcome="scored") for key, o in outcomes.items()}
    (paired,) = paired_items(items, 1, base, outcomes)
    assert paired.trained == (0.0,) and paired.base == (1.0,) and arm_errors(outcomes) == ArmErrors(1, 1)


def test_breaking_the_verifier_on_its_failures_gains_a_model_nothing() -> None:
    """Two trained models solve the same items; on the rest one fails and the other crashes the verifier. Their
    records have the same Δ: the crashes score 0. (Excluding the crashed items, as before, raised Δ.)"""
    rng = np.random.default_rng(3)
    items = [Item(f"{d}-{i}", domain, f"{domain}/{i % 3}") for d, domain in enumerate(DOMAINS) for i in range(9)]
    solved = {item.id: bool(rng.random() < 0.5) for item in items}
    base = {(i.id, k): Outcome("base", i.id, k, float(rng.random() < 0.4), "scored") for i in items for k in range(2)}
    failing = {(i.id, k): Outcome("trained", i.id, k, 1.0 if solved[i.id] else 0.0, "scored")
               for i in items for k in range(2)}
    breaking = {key: o if o.reward else Outcome("trained", o.item, o.sample, None, "verifier_error", "crash", 3)
                for key, o in failing.items()}
    info = run_info(items=len(items), samples_per_item=2)
    fails, _ = build_run(paired_items(items, 2, base, failing), info)  # type: ignore[arg-type]  # Item: the fields it reads
    breaks, _ = build_run(paired_items(items, 2, base, breaking), info)  # type: ignore[arg-type]  # Item: the fields it reads
    assert breaks["macro"]["delta"] <= fails["macro"]["delta"] and breaks["complete"] and fails["complete"]
    assert breaks["macro"] == fails["macro"] and breaks["domains"] == fails["domains"]
    survivors = [i for i in items if solved[i.id]]  # what excluding the crashed items from both arms left
    excluded, _ = build_run(paired_items(survivors, 2, base, failing), replace(info, suite=replace(
        info.suite, items=len(survivors))))
    assert excluded["macro"]["delta"] > fails["macro"]["delta"] + 0.2


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
        assert domain.base == pytest.approx(sum(base[i].reward for i in ids) / len(ids))  # type: ignore[misc]  # ids: rewards set
        assert domain.trained == pytest.approx(sum(trained[i].reward for i in ids) / len(ids))  # type: ignore[misc]  # ids: rewards set
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
