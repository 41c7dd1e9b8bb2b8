"""The small model's conversion reads its GGUF file once: the memo answers repeated reads with what a fresh read gives,
and the converted checkpoint holds exactly the weights transformers' own GGUF loading gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

from agents.models import gguf_read_once  # noqa: E402


def tiny_gguf(path: Path) -> Path:
    """A small GGUF file of our own: a few metadata fields, a token list and two tensors."""
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_block_count(2)
    writer.add_token_list([f"token{i}" for i in range(300)])
    writer.add_tensor("token_embd.weight", np.arange(48, dtype=np.float32).reshape(6, 8))
    writer.add_tensor("output_norm.weight", np.ones(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def fields(reader: Any) -> dict:  # gguf's reader is untyped
    return {name: [bytes(part) for part in field.parts] for name, field in reader.fields.items()}


def test_a_gguf_file_is_parsed_once_and_reads_as_a_fresh_parse(tmp_path: Path) -> None:
    path = tiny_gguf(tmp_path / "tiny.gguf")
    fresh = gguf.GGUFReader(path)
    original_reader, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with gguf_read_once():
        first, again = gguf.GGUFReader(path), gguf.GGUFReader(str(path))
        assert first is again  # parsed once
        assert fields(first) == fields(fresh)
        assert [(t.name, t.data.tolist()) for t in first.tensors] == [(t.name, t.data.tolist()) for t in fresh.tensors]
        arch = next(key for key, value in gguf.MODEL_ARCH_NAMES.items() if value == "llama")
        assert gguf.get_tensor_name_map(arch, 2) is gguf.get_tensor_name_map(arch, 2)
        assert gguf.get_tensor_name_map(arch, 2).get_name("model.layers.1.self_attn.q_proj") == \
            original_map(arch, 2).get_name("model.layers.1.self_attn.q_proj") == "blk.1.attn_q"
        assert gguf.GGUFReader(tiny_gguf(tmp_path / "other.gguf")) is not first  # another file, another parse
    assert gguf.GGUFReader is original_reader and gguf.get_tensor_name_map is original_map  # put back


@pytest.mark.slow
def test_the_converted_small_model_has_the_weights_transformers_reads_from_the_gguf(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from agents.models import ModelUnavailable, _small_model_file, small_model

    try:
        source = _small_model_file()
    except ModelUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("ARENA_MODEL_CACHE", str(tmp_path / "models"))
    converted = transformers.AutoModelForCausalLM.from_pretrained(small_model().path).state_dict()
    plain = transformers.AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name).state_dict()
    assert converted.keys() == plain.keys()
    for name, tensor in plain.items():
        assert torch.equal(converted[name], tensor), name
