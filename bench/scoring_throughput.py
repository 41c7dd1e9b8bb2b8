"""Benchmark: evaluation throughput through the harness against the same model generating the same tokens alone.

The harness side is one arm of `arena score` as it runs: `scoring.evaluation.play_arm` with the default
concurrency plays a profile's items of the sample suite with the small model on the CPU (the sandbox, the tools,
rendering, parsing, verification in a fresh container, the episode log), recording every reply's prompt and length.
The bare side then makes the same model generate exactly the same number of tokens for each of those prompts, one
after another, with no sandbox. Both run in one process on the same cores; overhead = harness time / bare time - 1
(target: at most 20%).

    .venv/bin/python bench/scoring_throughput.py [--profile quick] [--suite suites/sample/suite.yaml]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.backends import Reply, Sampling, template_options  # noqa: E402
from agents.backends.local import LocalBackend  # noqa: E402
from agents.models import small_model  # noqa: E402
from sandbox.sandbox import Sandbox  # noqa: E402
from scoring.evaluation import CONCURRENCY, PROFILES, EpisodeLog, play_arm, selected_items  # noqa: E402
from scoring.suite import load_suite  # noqa: E402


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
    parser.add_argument("--suite", type=Path, default=ROOT / "suites" / "sample" / "suite.yaml")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    args = parser.parse_args()
    suite, profile = load_suite(args.suite), PROFILES[args.profile]
    items = selected_items(suite, profile)
    backend = Recording(LocalBackend(small_model().path))
    with Sandbox() as sandbox, tempfile.TemporaryDirectory() as scratch:
        for package in suite.packages.values():
            sandbox.image(package)  # built (or found) before the clock starts, as a scored run finds them cached
        started = time.perf_counter()
        outcomes = play_arm(sandbox, suite, items, "bench", backend, profile, EpisodeLog(Path(scratch) / "log.jsonl"),
                            CONCURRENCY)
        harness = time.perf_counter() - started
    bare = bare_seconds(backend.inner, backend.calls)
    tokens = sum(c[3] for c in backend.calls)
    print(f"{len(outcomes)} episodes ({len(items)} items x {profile.samples}, profile {profile.name}, "
          f"concurrency {CONCURRENCY}), {len(backend.calls)} replies, {tokens} tokens generated")
    print(f"harness: {harness:.1f} s ({len(outcomes) / harness * 60:.1f} items/min); bare generation of the same "
          f"tokens: {bare:.1f} s; overhead {harness / bare - 1:+.1%} (target at most +20%)")


if __name__ == "__main__":
    main()
