"""A checkpoint on disk through transformers, optionally with a LoRA adapter: CPU for tests and laptops, or a GPU.

torch, transformers and peft are imported here only (the `train` extra).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from agents.backends import BackendError, Reply, Sampling, template_options
from agents.parse import parse_reply


class ContextFull(BackendError):
    """The conversation no longer fits the model's context window."""


class LocalBackend:
    """Generates replies with a transformers causal LM (plus an optional PEFT LoRA adapter)."""

    def __init__(self, model_dir: Path, adapter_dir: Path | None = None, device: str | None = None) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise BackendError(f"a local model needs the train extra ({exc}): run scripts/setup, or "
                               "pip install -e '.[train]'") from None
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.name = model_dir.name + (f"+{adapter_dir.name}" if adapter_dir else "")
        self._lock = threading.Lock()  # one generation at a time: the seed is global to torch
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
            dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
            model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(self.device)
        except (OSError, ValueError) as exc:
            raise BackendError(f"{model_dir}: not a loadable transformers checkpoint: {exc}") from None
        if adapter_dir is not None:
            model = _with_adapter(model, model_dir, adapter_dir)
        model.eval()
        self.model = model
        self.context_tokens = int(getattr(model.config, "max_position_embeddings", 0) or 8192)

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        """Render with the tokenizer's chat template (tools included), sample, and parse the calls."""
        torch = self._torch
        prompt = self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False,
                                                    **template_options(sampling))
        encoded = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
        prompt_tokens = int(encoded["input_ids"].shape[1])
        room = self.context_tokens - prompt_tokens
        if room < 16:
            raise ContextFull(f"the conversation holds {prompt_tokens} tokens; the model's context is "
                              f"{self.context_tokens}")
        with self._lock, torch.inference_mode():
            torch.manual_seed(sampling.seed)
            sample = sampling.temperature > 0
            output = self.model.generate(
                **encoded, max_new_tokens=min(sampling.max_new_tokens, room), do_sample=sample,
                temperature=sampling.temperature if sample else None, top_p=sampling.top_p if sample else None,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id)
        new = output[0][prompt_tokens:]
        raw = self.tokenizer.decode(new, skip_special_tokens=False)
        raw = raw.split(self.tokenizer.eos_token)[0] if self.tokenizer.eos_token else raw
        return Reply(parse_reply(raw), raw, int(new.shape[0]), prompt_tokens)


def _with_adapter(model: object, model_dir: Path, adapter_dir: Path) -> object:
    """The model with a LoRA adapter applied; a clear error when it is missing, corrupt or for another base."""
    config_file = adapter_dir / "adapter_config.json"
    try:
        config = json.loads(config_file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise BackendError(f"{config_file}: not a PEFT adapter ({exc}); pass the folder `arena train` wrote as "
                           "adapter/") from None
    try:
        from peft import PeftModel

        return PeftModel.from_pretrained(model, adapter_dir)
    except Exception as exc:  # peft raises many kinds for shape mismatches and damaged files
        base = config.get("base_model_name_or_path")
        raise BackendError(f"{adapter_dir}: the adapter does not fit the model {model_dir} (trained on {base!r}): "
                           f"{str(exc)[:300]}") from None
