"""Model backends: something that answers a conversation, given the tools, with one assistant reply.

- `local`: a checkpoint on disk through transformers (CPU or GPU), optionally with a LoRA adapter (PEFT);
- `openai`: any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp, Ollama, a hosted API);
- `vllm_engine`: vLLM in-process on a GPU, serving a base model and LoRA adapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agents.backends.local_threads import prepare_environment
from agents.parse import ParsedReply

prepare_environment()  # before any backend imports torch: idle CPU threads sleep, not spin (local_threads)


class BackendError(RuntimeError):
    """The backend itself failed (unreachable endpoint, garbage answer, out of memory): not the model's doing."""


@dataclass(frozen=True)
class Sampling:
    """How one reply is sampled. `seed` makes a reply reproducible where the backend honours it; `enable_thinking` goes
    to the chat template (None: the template's own default)."""

    max_new_tokens: int = 512
    temperature: float = 0.7
    top_p: float = 1.0
    seed: int = 0
    enable_thinking: bool | None = None


@dataclass(frozen=True)
class Reply:
    """One assistant reply: parsed calls and text, the raw text, and the tokens it took."""

    parsed: ParsedReply
    raw: str
    completion_tokens: int
    prompt_tokens: int = 0


class ChatBackend(Protocol):
    """Answers a conversation (OpenAI-style messages) with one reply, offering `tools` (JSON schemas)."""

    name: str

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        """One assistant reply. Raises BackendError when the backend, not the model, failed."""
        ...


def open_backend(spec: str, *, served_name: str | None = None, adapter: str | None = None) -> ChatBackend:
    """A backend for a model spec: an http(s) URL (OpenAI-compatible endpoint; `served_name` picks its model), a
    checkpoint folder or the bundled small model's name (with an optional LoRA `adapter` folder)."""
    from pathlib import Path

    from agents.models import is_endpoint, resolve_local_model

    if is_endpoint(spec):
        if adapter:
            raise BackendError("an endpoint serves its own adapters: name the adapter's served model with "
                               "--model-name instead of --adapter")
        from agents.backends.openai import OpenAIBackend

        return OpenAIBackend(spec, served_name)
    from agents.backends.local import LocalBackend

    model = resolve_local_model(spec)
    return LocalBackend(model.path, Path(adapter) if adapter else None)


def template_options(sampling: Sampling) -> dict:
    """Keyword arguments for the chat template: only those the sampling settings actually set."""
    return {} if sampling.enable_thinking is None else {"enable_thinking": sampling.enable_thinking}
