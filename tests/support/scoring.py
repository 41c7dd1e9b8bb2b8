"""Build scored runs for tests: synthetic paired rewards with a known effect, and a run's metadata."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np

from scoring.record import PairedItem, RunInfo, Settings, SuiteInfo, TrainingSummary
from taskpkg.domains import DOMAINS

PASSING_GATE = {"verdict": "pass"}
SUITE_DIGEST = "sha256:" + "5" * 64
SAMPLING = {"name": "full", "items_per_domain": None, "samples": 4, "max_new_tokens": 1024, "max_episode_tokens": 8192,
            "temperature": 0.7, "command_timeout_s": 60, "output_chars": 4000}
LIBRARIES = {"numpy": "2.4.6", "posttrain-arena": "0.1.0"}
GATE = {"ngram": 13, "code_gram": 20, "pair_gap": 2, "pair_share": 0.2, "code_share": 0.5}


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def hex_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def paired_items(seed: int, per_domain: int = 24, clusters: int = 6, k: int = 4, effect: float = 0.0,
                 base_rate: float = 0.4, domains: tuple[str, ...] = DOMAINS) -> list[PairedItem]:
    """Binary rewards, K per arm: base succeeds with base_rate, trained with base_rate + effect (per item)."""
    rng = np.random.default_rng(seed)
    items = []
    for domain in domains:
        for i in range(per_domain):
            cluster = hex_id(f"{domain}/{i % clusters}") if clusters else None
            base = rng.random(k) < base_rate
            trained = rng.random(k) < base_rate + effect
            items.append(PairedItem(hex_id(f"{domain}/{i}"), domain, cluster, tuple(map(float, base)),
                                    tuple(map(float, trained))))
    return items


def run_info(environment: str = "ledger-reconciliation", items: int = 192, resamples: int = 400,
             **changes: Any) -> RunInfo:
    """A plausible run's metadata; any field can be changed."""
    info = RunInfo(
        environment=environment, commit="a" * 40, base_model="Qwen/Qwen3-8B", base_revision="b" * 40,
        adapter_digest=digest(f"adapter {environment}"), suite=SuiteInfo("sample", "1.0.0", items, True, SUITE_DIGEST),
        samples_per_item=4, harness_version="full/agents-chat-1", contamination=PASSING_GATE, sampling=SAMPLING,
        libraries=LIBRARIES, gate=GATE, retries=2,
        training=TrainingSummary(digest(f"manifest {environment}"), "grpo-lora", digest("recipe"), 200, 1.5, 5400.0,
                                 "1x H100", ((0, 0.2), (100, 0.5), (200, 0.7))),
        settings=Settings(resamples=resamples, seed=7))
    return replace(info, **changes)
