"""scripts/gpu-smoke: its recipe is the GPU recipe's configuration that validates, and without a GPU it says so."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest

from training.recipe import load_recipe

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gpu-smoke"


def test_the_smoke_recipe_is_the_gpu_recipe_on_the_small_model(tmp_path: Path) -> None:
    loader = SourceFileLoader("gpu_smoke", str(SCRIPT))
    smoke = importlib.util.module_from_spec(importlib.util.spec_from_loader("gpu_smoke", loader))  # type: ignore[arg-type]  # the spec is never None for a file loader
    loader.exec_module(smoke)
    for vllm in (True, False):
        recipe = load_recipe(str(smoke.smoke_recipe(tmp_path, vllm)))
        gpu = load_recipe("qwen3-8b-grpo-lora")
        assert recipe.model.base == "smollm2-135m" and recipe.model.dtype == "bfloat16"
        assert recipe.lora == gpu.lora and recipe.precision.bf16 and recipe.precision.gradient_checkpointing
        assert recipe.grpo.steps == 2 and recipe.grpo.num_generations == 8
        assert recipe.generation.backend == ("vllm" if vllm else "transformers")


@pytest.mark.slow
def test_without_a_gpu_it_says_skipped() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: run scripts/gpu-smoke itself")
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "gpu-smoke: skipped: no GPU (torch sees no CUDA device)"
