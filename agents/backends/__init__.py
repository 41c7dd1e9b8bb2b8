"""Model backends: something that answers a conversation, given the tools, with one assistant reply.

- `local`: a checkpoint on disk through transformers (CPU or GPU), optionally with a LoRA adapter (PEFT);
- `openai`: any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp, Ollama, a hosted API);
- `vllm_engine`: vLLM in-process on a GPU, serving a base model and LoRA adapters.
"""

from __future__ import annotations

from agents.backends.contract import BackendError, ChatBackend, Reply, Sampling, template_options
from agents.backends.local_threads import prepare_environment

prepare_environment()  # before any backend imports torch: idle CPU threads sleep, not spin (local_threads)

__all__ = ["BackendError", "ChatBackend", "Reply", "Sampling", "open_backend", "template_options"]


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
