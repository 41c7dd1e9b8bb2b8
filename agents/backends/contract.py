"""What every backend shares: the reply, the sampling settings, the error and the protocol a backend answers.

Backends (`local`, `openai`, `vllm_engine`) import these from here, and the package imports the backends only when
opening one, so no backend module imports the package it lives in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agents.parse import ParsedReply


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


def template_options(sampling: Sampling) -> dict:
    """Keyword arguments for the chat template: only those the sampling settings actually set."""
    return {} if sampling.enable_thinking is None else {"enable_thinking": sampling.enable_thinking}
