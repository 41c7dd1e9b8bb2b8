"""The type a local model runs in: bfloat16 where the CPU has bfloat16 matrix instructions (or on a GPU), float32
elsewhere, ARENA_LOCAL_DTYPE to choose; and the caches of replies (the base arm's, the pre-flight's) key on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.backends.local_dtype import DTYPE_VARIABLE, cpu_has_bf16, local_dtype
from scoring.evaluation import PROFILES, base_cache_key, selected_items
from scoring.suite import load_suite
from training.preflight import cache_key
from training.recipe import load_recipe

SAMPLE = Path(__file__).resolve().parents[1] / "suites" / "sample" / "suite.yaml"


def cpuinfo(tmp_path: Path, flags: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu sse2 avx2 {flags}\n\nprocessor\t: 1\n")
    return path


def test_bfloat16_only_where_the_cpu_lists_its_instructions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DTYPE_VARIABLE, raising=False)
    amx, avx512, plain = (cpuinfo(tmp_path / name, flags) for name, flags in
                          (("amx", "amx_tile amx_bf16"), ("avx", "avx512f avx512_bf16"), ("plain", "avx512f")))
    assert cpu_has_bf16(amx) and cpu_has_bf16(avx512) and not cpu_has_bf16(plain)
    assert not cpu_has_bf16(tmp_path / "missing")
    assert local_dtype("cpu", amx) == "bfloat16" and local_dtype("cpu", plain) == "float32"
    assert local_dtype("cuda", plain) == "bfloat16"


def test_the_variable_chooses_and_a_wrong_value_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DTYPE_VARIABLE, "float32")
    assert local_dtype("cpu", cpuinfo(tmp_path, "amx_bf16")) == "float32"
    monkeypatch.setenv(DTYPE_VARIABLE, "fp8")
    with pytest.raises(ValueError, match=f"{DTYPE_VARIABLE}='fp8'.*bfloat16, float32"):
        local_dtype("cpu")


def test_the_base_arms_cache_keys_on_the_dtype() -> None:
    suite = load_suite(SAMPLE)
    profile = PROFILES["smoke"]
    items = selected_items(suite, profile)
    key = base_cache_key(suite, items, "rev", profile, "float32")
    assert key == base_cache_key(suite, items, "rev", profile, "float32")
    assert key != base_cache_key(suite, items, "rev", profile, "bfloat16")


def test_the_preflights_cache_keys_on_the_dtype(monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = load_recipe("cpu-first-look")
    monkeypatch.setenv(DTYPE_VARIABLE, "float32")
    key = cache_key("sha256:aa", "sha256:model", recipe)
    monkeypatch.setenv(DTYPE_VARIABLE, "bfloat16")
    assert key != cache_key("sha256:aa", "sha256:model", recipe)
