"""The local backend reuses the attention cache of a conversation's earlier turns (and of the opening every episode
shares): the replies are those of a full re-encoding, and only the new tokens are encoded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents.backends import Sampling
from agents.chat import SYSTEM_PROMPT
from agents.tools import TOOL_SCHEMAS

if TYPE_CHECKING:
    from agents.backends.local import LocalBackend

pytestmark = pytest.mark.slow


def two_turns(backend: LocalBackend, task: str, keep: bool) -> list[str]:
    sampling = Sampling(max_new_tokens=12, temperature=0.0, seed=1)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    replies = []
    for _ in range(2):
        if not keep:
            backend._caches.clear()
        reply = backend.reply(messages, list(TOOL_SCHEMAS), sampling)
        replies.append(reply.raw)
        messages += [{"role": "assistant", "content": reply.raw},
                     {"role": "user", "content": "That could not be read as a tool call; call a tool."}]
    return replies


def test_a_later_turn_encodes_only_its_new_tokens_and_replies_as_a_full_encoding_does() -> None:
    from agents.backends.local import LocalBackend
    from agents.models import small_model

    backend = LocalBackend(small_model().path)
    task = "Count the lines of /workspace/data.csv and write the number to /workspace/answer.txt."
    full = two_turns(backend, task, keep=False)
    assert backend.reused_tokens == 0
    encoded_before = backend.encoded_tokens
    reused = two_turns(backend, task, keep=True)
    assert reused == full
    second_prompt = backend.encoded_tokens - encoded_before
    assert backend.reused_tokens > 0.9 * second_prompt  # the first turn's opening, then the whole earlier turn
    other = two_turns(backend, "Write the word amber to /workspace/out.txt.", keep=True)
    assert len(other) == 2 and backend.reused_tokens > 0.9 * second_prompt + 400  # the shared opening again
