"""Recipes, seeds, warm-up data and the GPU recipe's configuration objects: no engine, no training."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from agents.render import RenderLimits, command_text
from agents.tools import TOOL_NAMES
from sandbox.channel import CommandResult
from training.recipe import RecipeError, load_recipe, recipe_names
from training.run import split_seeds
from training.trainer import grpo_arguments, lora_config
from training.warmup import conversations

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "training" / "recipes"


def write_recipe(tmp_path: Path, old: str, new: str, name: str = "cpu-small") -> Path:
    text = (SHIPPED / f"{name}.yaml").read_text()
    assert old in text, old
    path = tmp_path / "recipe.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_the_shipped_recipes_load_and_every_value_is_explicit() -> None:
    assert recipe_names() == ["cpu-first-look", "cpu-small", "qwen3-8b-grpo-lora"]
    small, large = load_recipe("cpu-small"), load_recipe("qwen3-8b-grpo-lora")
    assert not small.on_gpu and large.on_gpu and large.generation.backend == "vllm"
    assert large.gradient_accumulation_steps * large.grpo.micro_batch_size == 64


@pytest.mark.parametrize(("old", "new", "said"), [
    ("  num_generations: 4\n", "  num_generations: 4\n  num_generation: 4\n", "unknown key num_generation in grpo"),
    ("  learning_rate: 0.003\n", "  learning_rate: fast\n", "grpo.learning_rate: 'fast' is not of type 'number'"),
    ("  steps: 4\n", "", "'steps' is a required property"),
    ("  micro_batch_size: 4\n", "  micro_batch_size: 3\n", "not a multiple of micro_batch_size 3"),
    ("  backend: transformers\n", "  backend: vllm\n", "vLLM generation needs hardware.accelerator: gpu"),
    ("precision: {bf16: false,", "precision: {bf16: true,", "bf16 training needs a GPU"),
    ("  seed: 0\ngeneration", "  seed: 0\n  seed: 1\ngeneration", "duplicate key 'seed'"),
])
def test_a_bad_recipe_names_the_file_line_and_the_fix(tmp_path: Path, old: str, new: str, said: str) -> None:
    path = write_recipe(tmp_path, old, new)
    with pytest.raises(RecipeError) as caught:
        load_recipe(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}:") and said in message
    line = int(message.split(":")[1])
    assert 1 < line <= len(path.read_text().splitlines())


def test_unknown_recipes_are_refused_with_the_known_ones() -> None:
    with pytest.raises(RecipeError, match="the shipped recipes are cpu-first-look, cpu-small, qwen3-8b-grpo-lora"):
        load_recipe("cpu-large")


def test_the_hash_follows_the_effective_recipe(tmp_path: Path) -> None:
    plain, overridden = load_recipe("cpu-small"), load_recipe("cpu-small", steps=9)
    assert plain.digest == load_recipe("cpu-small").digest != overridden.digest
    assert overridden.overrides == {"grpo.steps": 9} and overridden.grpo.steps == 9
    edited = load_recipe(str(write_recipe(tmp_path, "  beta: 0.0\n", "  beta: 0.01\n")))
    assert edited.digest != plain.digest


def test_the_gpu_recipe_becomes_trl_and_peft_configuration() -> None:
    from trl import GRPOConfig

    recipe = load_recipe("qwen3-8b-grpo-lora")
    arguments = grpo_arguments(recipe, Path("/tmp/out"), gpu=True)
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    assert set(arguments) <= fields, set(arguments) - fields
    assert arguments["use_vllm"] and arguments["vllm_mode"] == "colocate" and arguments["vllm_enable_sleep_mode"]
    assert arguments["bf16"] and arguments["gradient_checkpointing"] and not arguments["use_cpu"]
    assert arguments["num_generations"] == recipe.grpo.num_generations == 8
    assert arguments["per_device_train_batch_size"] * arguments["gradient_accumulation_steps"] == 64
    assert arguments["chat_template_kwargs"] == {"enable_thinking": False}
    assert arguments["max_completion_length"] == 8192 and arguments["mask_truncated_completions"]
    lora = lora_config(recipe.lora)
    assert lora.r == 32 and lora.lora_alpha == 64 and set(lora.target_modules) == {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    small = lora_config(load_recipe("cpu-small").lora)
    assert small.layers_to_transform == [26, 27, 28, 29]


@pytest.mark.slow
def test_the_gpu_recipe_fails_early_and_clearly_without_a_gpu(tmp_path: Path) -> None:
    out = tmp_path / "run"
    arena = str(Path(sys.executable).parent / "arena")
    done = subprocess.run([arena, "train", "environments/ledger-reconciliation", "--recipe", "qwen3-8b-grpo-lora",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "needs a CUDA GPU (H200, H100) and this machine has none" in done.stderr and "cpu-small" in done.stderr
    assert not out.exists()  # nothing was written, nothing was built


def test_training_and_heldout_seeds_are_disjoint_and_reproducible() -> None:
    train, heldout = split_seeds(1000, 0, 8)
    assert len(heldout) == 8 and not set(train) & set(heldout) and len(train) + len(heldout) == 1000
    assert split_seeds(1000, 0, 8) == (train, heldout) and split_seeds(1000, 1, 8)[1] != heldout
    assert len(split_seeds(10, 0, 8)[1]) == 2  # never more than a fifth of a small package


def test_warmup_conversations_use_the_real_tools_and_tool_result_text() -> None:
    chats = conversations(30, 0)
    assert chats == conversations(30, 0) and chats != conversations(30, 1)
    called = {c["function"]["name"] for chat in chats for m in chat if m["role"] == "assistant"
              for c in m.get("tool_calls", [])}
    assert called == set(TOOL_NAMES)
    shell_results = [m["content"] for chat in chats for m in chat if m.get("name") == "shell"]
    expected = command_text(CommandResult(0, "7\n", "", False, False, 0.0), RenderLimits())
    assert any(r.startswith(expected.split("7")[0]) for r in shell_results) and all(
        r.startswith("exit code 0\nstdout:\n") for r in shell_results)


def test_the_first_look_is_cpu_small_cut_down_with_the_same_model_and_warmup() -> None:
    first, small = load_recipe("cpu-first-look"), load_recipe("cpu-small")
    assert first.model == small.model and first.lora == small.lora  # the kept warm-up adapter fits both
    assert first.grpo.steps == 1 and first.grpo.num_generations == small.grpo.num_generations == 4
    assert first.grpo.max_completion_length < small.grpo.max_completion_length
