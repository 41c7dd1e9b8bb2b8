"""The tool-call warm-up's adapter, kept in the repository: checked by its digest before it is merged, merged as its
LoRA says, and reproduced by `python -m training.warmup --rebuild` within tolerance."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents.models import ModelUnavailable, small_model
from training.recipe import load_recipe
from training.warmup import ADAPTER_FILE, DESCRIPTION, kept_folder, verified_adapter, warmup_key

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = load_recipe("cpu-small").model.warmup


def kept() -> tuple[Path, str]:
    base = small_model(prepare=False)
    return kept_folder(base, SETTINGS), warmup_key(base, SETTINGS)


def test_the_recipes_warmup_is_kept_and_its_digest_checks(tmp_path: Path) -> None:
    folder, key = kept()
    assert (folder / ADAPTER_FILE).stat().st_size < 10 * 2**20  # a few MB in the repository
    description = json.loads((folder / DESCRIPTION).read_text())
    assert description["settings"] == SETTINGS and description["made_by"] == "python -m training.warmup --rebuild"
    assert verified_adapter(folder, key) == description["adapter_sha256"]


def test_a_changed_cut_or_foreign_adapter_is_refused_with_how_to_restore_it(tmp_path: Path) -> None:
    folder, key = kept()
    copy = shutil.copytree(folder, tmp_path / folder.name)
    with pytest.raises(ModelUnavailable, match=r"made for warm-up .* train it again with `python -m training.warmup"):
        verified_adapter(copy, "0" * 64)
    weights = copy / ADAPTER_FILE
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelUnavailable, match=rf"{ADAPTER_FILE}: sha256 .* the file was changed or cut .*`git "
                       "checkout --"):
        verified_adapter(copy, key)
    weights.write_text("version https://git-lfs.github.com/spec/v1\n")
    with pytest.raises(ModelUnavailable, match="Git LFS pointer"):
        verified_adapter(copy, key)
    (copy / DESCRIPTION).write_text("{")
    with pytest.raises(ModelUnavailable, match=f"{DESCRIPTION}: not a warm-up description"):
        verified_adapter(copy, key)


def lora_deltas(adapter: Path) -> dict:
    """Each adapted weight's change, scale * B @ A, by module name."""
    from safetensors.torch import load_file

    config = json.loads((adapter / "adapter_config.json").read_text())
    scale = config["lora_alpha"] / config["r"]
    tensors = load_file(adapter / ADAPTER_FILE)
    return {name.removesuffix(".lora_A.weight"): scale * (tensors[name.replace("lora_A", "lora_B")] @ tensor)
            for name, tensor in tensors.items() if name.endswith("lora_A.weight")}


@pytest.mark.slow
def test_the_kept_adapter_is_merged_into_the_base_as_its_lora_says(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.torch import load_file

    from training.warmup import warmed_base

    base = small_model()  # the shared cache's conversion; the merge goes to a fresh cache
    monkeypatch.setenv("ARENA_MODEL_CACHE", str(tmp_path / "models"))
    said: list[str] = []
    warmed = warmed_base(base, SETTINGS, said.append)
    assert any("merging the tool-call adapter" in line for line in said) and not any("teaching" in s for s in said)
    assert warmed_base(base, SETTINGS, said.append) == warmed and len(said) == 1  # cached: merged once
    merged, original = load_file(warmed.path / "model.safetensors"), load_file(base.path / "model.safetensors")
    deltas = lora_deltas(kept()[0])
    for module, delta in deltas.items():
        name = module.removeprefix("base_model.model.") + ".weight"
        assert (merged[name] - original[name] - delta).abs().max() < 1e-5, name
    untouched = "model.layers.3.self_attn.q_proj.weight"  # below the warm-up's layers
    assert not any(".layers.3." in m for m in deltas) and (merged[untouched] == original[untouched]).all()


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.timeout(3600)
def test_the_warmup_script_reproduces_the_kept_adapter_within_tolerance(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "training.warmup", "--rebuild", "--out", str(tmp_path / "again")],
                          cwd=ROOT, capture_output=True, text=True, timeout=3500, env=os.environ)
    assert done.returncode == 0, done.stderr[-3000:]
    folder, key = kept()
    assert json.loads((tmp_path / "again" / DESCRIPTION).read_text())["key"] == key
    again, shipped = lora_deltas(tmp_path / "again"), lora_deltas(folder)
    assert again.keys() == shipped.keys() and len(shipped) == 7 * 12
    for module, delta in shipped.items():
        # Same seed, data and libraries: only the order of float sums (threads, CPU) may differ.
        assert (again[module] - delta).norm() <= TOLERANCE * delta.norm(), module


TOLERANCE = 1e-3  # two runs on this machine (13:36 and an earlier one, other load) differed by 1.3e-6
