"""Benchmark: evaluation throughput through the harness against the same model generating the same tokens alone.

The harness side plays N episodes of a package with the small model on the CPU through `agents.chat` (the sandbox,
the tools, rendering, parsing, verification in a fresh container), recording every reply's prompt and length. The
bare side then makes the same model generate exactly the same number of tokens for each of those prompts, with no
sandbox. Both run in one process on the same cores; overhead = harness time / bare time - 1 (target: at most 20%).

    .venv/bin/python bench/scoring_throughput.py [--package tests/fixtures/training/echo-word] [--episodes 6]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.backends import Reply, Sampling, template_options  # noqa: E402
from agents.backends.local import LocalBackend  # noqa: E402
from agents.chat import ChatSettings, run_chat_episode  # noqa: E402
from agents.models import small_model  # noqa: E402
from sandbox.episode import Sandbox  # noqa: E402
from taskpkg.loader import load_package  # noqa: E402


@dataclass
class Recording:
    """A backend that remembers every prompt and how many tokens each reply took."""

    inner: LocalBackend
    name: str = "recorded"
    calls: list[tuple[list[dict], list[dict], Sampling, int]] = field(default_factory=list)

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        answer = self.inner.reply(messages, tools, sampling)
        self.calls.append(([dict(m) for m in messages], tools, sampling, answer.completion_tokens))
        return answer


def bare_seconds(backend: LocalBackend, calls: list[tuple[list[dict], list[dict], Sampling, int]]) -> float:
    """The same prompts, the same number of new tokens, straight through transformers."""
    import torch

    started = time.perf_counter()
    for messages, tools, sampling, tokens in calls:
        prompt = backend.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                                       tokenize=False, **template_options(sampling))
        encoded = backend.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        with torch.inference_mode():
            torch.manual_seed(sampling.seed)
            backend.model.generate(**encoded, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=True,
                                   temperature=sampling.temperature, pad_token_id=backend.tokenizer.pad_token_id)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(ROOT / "tests" / "fixtures" / "training" / "echo-word"))
    parser.add_argument("--episodes", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    args = parser.parse_args()
    package = load_package(Path(args.package)).package
    assert package is not None
    backend = Recording(LocalBackend(small_model().path))
    with Sandbox() as sandbox:
        sandbox.image(package)
        started = time.perf_counter()
        for episode in range(args.episodes):
            settings = ChatSettings(Sampling(max_new_tokens=args.max_new_tokens, seed=episode),
                                    max_episode_tokens=2 * args.max_new_tokens)
            run_chat_episode(sandbox.open_episode(package, episode, "bench"), backend, settings)
        harness = time.perf_counter() - started
    bare = bare_seconds(backend.inner, backend.calls)
    tokens = sum(c[3] for c in backend.calls)
    print(f"{args.episodes} episodes, {len(backend.calls)} replies, {tokens} tokens generated")
    print(f"harness: {harness:.1f} s ({args.episodes / harness * 60:.1f} items/min); bare generation of the same "
          f"tokens: {bare:.1f} s; overhead {harness / bare - 1:+.1%} (target at most +20%)")


if __name__ == "__main__":
    main()
