"""A checkpoint on disk through transformers, optionally with a LoRA adapter: CPU for tests and laptops, or a GPU.

A conversation's prompt grows by a reply and a tool result each turn, and begins with the same system prompt and
tool schemas in every episode; re-encoding all of it every turn is most of a small model's time on a CPU (a
2,000-token prompt costs several seconds, a 24-token reply about one). So the backend keeps the attention cache of
its last few generations and starts the next one from the longest that its prompt begins with: only the new tokens
are encoded. The replies are those of a full re-encoding up to float rounding (which, in bfloat16 (local_dtype),
flips a sampled token more often than in float32).

torch, transformers and peft are imported here only (the `train` extra).
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.backends.contract import BackendError, Reply, Sampling, template_options
from agents.backends.local_dtype import local_dtype
from agents.backends.local_threads import use_cpu_threads
from agents.parse import parse_reply

if TYPE_CHECKING:  # transformers is imported when a backend is made
    from transformers import Cache


class ContextFull(BackendError):
    """The conversation no longer fits the model's context window."""


KEPT_CACHES = 3  # attention caches kept for reuse: one per episode played at once (all share the opening)
MIN_REUSE = 32  # tokens a kept cache must share with a prompt to be worth copying


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
        if self.device == "cpu":
            use_cpu_threads()  # as many threads as the load leaves cores, idle ones sleeping (local_threads)
        self.name = model_dir.name + (f"+{adapter_dir.name}" if adapter_dir else "")
        self._lock = threading.Lock()  # one generation at a time: the seed is global to torch
        try:
            self.dtype = local_dtype(self.device)  # bfloat16 where the hardware computes it fast (local_dtype)
        except ValueError as exc:
            raise BackendError(str(exc)) from None
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
            model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, self.dtype)).to(self.device)
        except (OSError, ValueError) as exc:
            raise BackendError(f"{model_dir}: not a loadable transformers checkpoint: {exc}") from None
        if adapter_dir is not None:
            model = _with_adapter(model, model_dir, adapter_dir)
        model.eval()
        self.model = model
        self.context_tokens = int(getattr(model.config, "max_position_embeddings", 0) or 8192)
        self._caches: list[tuple[list[int], Cache]] = []  # (token ids the cache holds, the cache), newest last
        self.encoded_tokens = self.reused_tokens = 0  # prompt tokens encoded, and those taken from a kept cache

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], sampling: Sampling) -> Reply:
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
            ids = encoded["input_ids"][0].tolist()
            cache = self._reusable(ids)
            torch.manual_seed(sampling.seed)
            sample = sampling.temperature > 0
            output = self.model.generate(
                **encoded, max_new_tokens=min(sampling.max_new_tokens, room), do_sample=sample,
                temperature=sampling.temperature if sample else None, top_p=sampling.top_p if sample else None,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id, past_key_values=cache,
                return_dict_in_generate=True)
            self._keep(output.sequences[0].tolist(), output.past_key_values)
        new = output.sequences[0][prompt_tokens:]
        raw = self.tokenizer.decode(new, skip_special_tokens=False)
        raw = raw.split(self.tokenizer.eos_token)[0] if self.tokenizer.eos_token else raw
        return Reply(parse_reply(raw), raw, int(new.shape[0]), prompt_tokens)


    def _reusable(self, ids: list[int]) -> Cache | None:
        """A copy of the kept cache sharing the longest beginning with `ids`, cut to that beginning (leaving at
        least the prompt's last token to encode); None when none shares MIN_REUSE tokens."""
        best, shared = None, 0
        for held, cache in self._caches:
            length = _common_prefix(held, ids, cache.get_seq_length())
            if length > shared:
                best, shared = cache, length
        shared = min(shared, len(ids) - 1)
        self.encoded_tokens += len(ids)
        if best is None or shared < MIN_REUSE:
            return None
        self.reused_tokens += shared
        reused = copy.deepcopy(best)
        surplus = reused.get_seq_length() - shared
        if surplus > 0:
            reused.crop(-surplus)
        return reused

    def _keep(self, ids: list[int], cache: Cache | None) -> None:
        """Keep a generation's cache (it holds every token but the last generated one), dropping the oldest."""
        if cache is None or not hasattr(cache, "crop"):
            return
        self._caches = [entry for entry in self._caches if entry[1] is not cache][-(KEPT_CACHES - 1):]
        self._caches.append((ids, cache))


def _common_prefix(held: list[int], ids: list[int], limit: int) -> int:
    """How many leading tokens `held` and `ids` share, at most `limit`."""
    length = 0
    for a, b in zip(held[:limit], ids, strict=False):
        if a != b:
            break
        length += 1
    return length


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
