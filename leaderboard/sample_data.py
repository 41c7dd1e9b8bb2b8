"""Realistic sample inputs for the site's tests and benchmark: results records (version 2), packages and job states.

Everything is drawn from a seeded generator, so the same arguments always give the same files. Deltas, intervals
and p-values agree with each other the way a paired bootstrap's would (p from the interval's normal approximation),
and each environment gets a history: older commits superseded by newer ones, now and then an incomplete run or one
the contamination gate flagged.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

from taskpkg.domains import DOMAINS

WORDS = ("ledger", "invoice", "triage", "audit", "schedule", "refund", "claims", "forensics", "routing", "tariff",
         "dosage", "contract", "permit", "spreadsheet", "memo", "ticket", "lab", "circuit", "firewall", "incident",
         "proof", "budget", "roster", "inventory", "escrow", "coding", "summary", "census", "grant", "lease")
VERBS = ("Reconcile", "Triage", "Audit", "Schedule", "Classify", "Draft", "Verify", "Route", "Estimate", "Repair")
LOGINS = ("ada-l", "grace-h", "alan-t", "edsger-d", "barbara-l", "donald-k", "frances-a", "john-m", "radia-p",
          "leslie-l", "shafi-g", "tim-bl", "margaret-h", "ken-t", "dennis-r", "guido-vr")
SUITE = {"name": "arena-heldout", "items": 1600, "public": False}
BASE_MODEL = {"name": "Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218"}
SIGNIFICANCE_Z = 1.959963984540054  # the 97.5% normal quantile: a 95% two-sided interval


@dataclass(frozen=True)
class SampleSet:
    """What write_sample_set wrote: environment names, record count, and the folders."""

    environments: tuple[str, ...]
    records: int
    results_dir: Path
    environments_dir: Path | None
    jobs_dir: Path | None


def _hex(*parts: object, length: int = 64) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:length]

MIN_P_VALUE = 1e-6


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _p_value(delta: float, half_width: float) -> float:
    """A two-sided normal p-value, never 0 (a permutation test's smallest is one over its permutations)."""
    if half_width <= 0:
        return MIN_P_VALUE if delta else 1.0
    z = abs(delta) / (half_width / SIGNIFICANCE_Z)
    return _clamp(math.erfc(z / math.sqrt(2)), MIN_P_VALUE, 1.0)


def environment_names(count: int, seed: int = 7) -> list[str]:
    """count distinct, valid environment names."""
    rng = random.Random(seed)
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        if name in seen:
            name = f"{name}-{len(names)}"
        seen.add(name)
        names.append(name)
    return names


def _curve(rng: random.Random, steps: int, gain: float) -> list[list[float]]:
    start = rng.uniform(0.05, 0.35)
    top = _clamp(start + abs(gain) * 6 + rng.uniform(0.05, 0.3), 0.0, 0.98)
    points = []
    for index in range(0, 101):
        step = round(steps * index / 100)
        shape = 1 / (1 + math.exp(-(index - 35) / 10))
        points.append([step, round(_clamp(start + (top - start) * shape + rng.gauss(0, 0.02), 0.0, 1.0), 4)])
    return points


def sample_record(environment: str, rng: random.Random, *, when: str, commit_index: int = 0,
                  effect: float | None = None, complete: bool = True, flagged: bool = False,
                  suite_version: str = "1.2.0", pr: int | None = None) -> dict:
    """One version-2 results record as JSON data; effect is the true macro delta (a fraction)."""
    effect = rng.gauss(0.012, 0.02) if effect is None else effect
    commit = _hex(environment, commit_index, length=40)
    domains = {}
    for domain in DOMAINS:
        base = rng.uniform(0.2, 0.7)
        delta = _clamp(effect + rng.gauss(0, 0.015), -base, 1 - base)
        half = rng.uniform(0.02, 0.05)
        domains[domain] = {"items": 200, "base": round(base, 4), "trained": round(base + delta, 4),
                           "delta": round(delta, 4),
                           "interval": [round(_clamp(delta - half, -1, 1), 4), round(_clamp(delta + half, -1, 1), 4)]}
    base = sum(d["base"] for d in domains.values()) / len(domains)
    delta = sum(d["delta"] for d in domains.values()) / len(domains)
    half = rng.uniform(0.008, 0.02)
    steps = rng.choice((200, 300, 400, 600))
    contributor = rng.choice(LOGINS)
    run_id = _hex(environment, commit, suite_version, when)
    return {
        "results_version": 2, "run_id": run_id, "environment": environment, "commit": commit,
        "pr": pr if pr is not None else rng.randint(10, 9000), "contributor": contributor,
        "base_model": BASE_MODEL, "adapter_digest": f"sha256:{_hex(run_id, 'adapter')}",
        "suite": {**SUITE, "version": suite_version}, "samples_per_item": 4, "evaluated_at": when,
        "complete": complete, "domains": domains,
        "macro": {"base": round(base, 4), "trained": round(base + delta, 4), "delta": round(delta, 4),
                  "interval": [round(delta - half, 4), round(delta + half, 4)],
                  "p_value": round(_p_value(delta, half), 6),
                  "normalized_gain": round(delta / (1 - base), 4) if base < 1 else None},
        "verdict": "improves" if delta - half > 0 else "hurts" if delta + half < 0 else "no_detectable_change",
        "statistics": {"method": "paired-stratified-cluster-bootstrap", "resamples": 10000, "confidence": 0.95,
                       "seed": 20260101},
        "contamination": {"verdict": "flagged" if flagged else "pass"},
        "training": {"manifest_digest": f"sha256:{_hex(run_id, 'manifest')}", "recipe": "grpo-lora-r16",
                     "recipe_hash": f"sha256:{_hex('grpo-lora-r16')}", "steps": steps,
                     "gpu_hours": round(steps * rng.uniform(0.015, 0.03), 2), "wall_s": round(steps * 21.5, 1),
                     "hardware": "1x NVIDIA H100 80GB", "reward_curve": _curve(rng, steps, delta)},
    }


def _timestamp(day: int, minute: int) -> str:
    month, dom = divmod(day % 300, 28)
    return f"2026-{1 + month % 12:02d}-{1 + dom:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:00Z"


def sample_records(names: list[str], records: int, seed: int = 11) -> list[dict]:
    """`records` records spread over the environments (each gets at least one), newest last per environment."""
    rng = random.Random(seed)
    per_env = [1] * len(names)
    for _ in range(max(0, records - len(names))):
        per_env[rng.randrange(len(names))] += 1
    out = []
    for index, (name, count) in enumerate(zip(names, per_env, strict=True)):
        effect = rng.choice((rng.gauss(0.03, 0.015), rng.gauss(0.0, 0.004), rng.gauss(-0.015, 0.01)))
        pr = rng.randint(10, 9000)
        for commit in range(count):
            out.append(sample_record(
                name, rng, when=_timestamp(index % 280 + commit * 3, index % 1440), commit_index=commit,
                effect=effect + rng.gauss(0, 0.004), complete=rng.random() > 0.03, flagged=rng.random() < 0.03,
                pr=pr + commit))
    return out


def task_markdown(name: str, domain: str, title: str, author: tuple[str, str], body: str) -> str:
    """A task.md for a sample package."""
    return (f"---\nschema_version: 1\nname: {name}\ntitle: {json.dumps(title)}\nversion: \"1.0.0\"\n"
            f"authors:\n  - name: {json.dumps(author[0])}\n    github: {author[1]}\nlicense: Apache-2.0\n"
            f"domain: {domain}\ntags: [sample]\ndifficulty: medium\ncanary: {uuid.UUID(hex=_hex(name, length=32))}\n"
            "limits:\n  build_timeout_s: 600\n  agent_timeout_s: 900\n  oracle_timeout_s: 120\n"
            "  verifier_timeout_s: 60\n  max_turns: 40\n  cpus: 1\n  memory_mb: 512\n  storage_mb: 512\n  pids: 128\n"
            "network:\n  agent: none\n  verifier: none\ninstances:\n  count: 500\n  generator: instance/generate.py\n"
            f"oracle:\n  entrypoint: solve.sh\n---\n{body}\n")


def write_package(into: Path, name: str, domain: str, title: str, author: tuple[str, str], body: str) -> Path:
    """A minimal package folder that taskpkg.load_package accepts (its scripts are placeholders, never run)."""
    root = into / name
    for relative, text in {
        "task.md": task_markdown(name, domain, title, author, body),
        "environment/Dockerfile": "FROM debian:bookworm-slim\n",
        "instance/generate.py": "print('{}')\n",
        "oracle/solve.sh": "#!/bin/sh\ntrue\n",
        "verifier.py": "print('{\"reward\": 0}')\n",
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def sample_body(rng: random.Random, title: str) -> str:
    """A task prompt in Markdown with a heading, a list, a table and code."""
    noun = rng.choice(WORDS)
    return (f"{title}.\n\nYou are given the files in `/workspace/{noun}/`. Work through them and write "
            f"your answer to `/workspace/answer.json`.\n\n## Rules\n\n- Every {noun} appears once in the answer.\n"
            "- Amounts are in cents; round half to even.\n- Do not modify the input files.\n\n"
            "| field | type |\n|---|---|\n| id | string |\n| total | integer |\n\n"
            "```json\n{\"id\": \"A-1\", \"total\": 1200}\n```\n")


def write_sample_set(root: Path, environments: int, records: int, *, packages: bool = True, jobs: int = 0,
                     seed: int = 7) -> SampleSet:
    """Write results/ (and environments/, jobs/) under root; packages for all but every tenth environment."""
    rng = random.Random(seed)
    names = environment_names(environments, seed)
    results_dir = root / "results"
    for data in sample_records(names, records, seed + 4):
        path = results_dir / data["environment"] / f"{data['run_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    environments_dir = root / "environments" if packages else None
    if environments_dir is not None:
        for index, name in enumerate(names):
            if index % 10 == 9:
                continue  # a scored environment whose package has since been removed
            title = f"{rng.choice(VERBS)} {name.replace('-', ' ')} records"
            login = rng.choice(LOGINS)
            write_package(environments_dir, name, DOMAINS[index % len(DOMAINS)], title,
                          (login.replace("-", " ").title(), login), sample_body(rng, title))
        for index in range(max(1, environments // 20)):
            name = f"unscored-{names[index]}"
            write_package(environments_dir, name, DOMAINS[index % len(DOMAINS)], f"Unscored {name}",
                          ("New Contributor", "new-contributor"), sample_body(rng, f"Unscored {name}"))
    jobs_dir = root / "jobs" if jobs else None
    if jobs_dir is not None:
        states = ("queued", "running", "succeeded", "failed", "cancelled", "stale")
        for index in range(jobs):
            name = names[index % len(names)]
            commit = _hex(name, "job", index, length=40)
            job = {"job_version": 1, "environment": name, "commit": commit, "pr": 100 + index,
                   "state": states[index % len(states)], "backend": "skypilot" if index % 2 else "local",
                   "requested_by": rng.choice(LOGINS), "requested_at": _timestamp(index, 60),
                   "updated_at": _timestamp(index, 90)}
            path = jobs_dir / name / f"{commit}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")
    return SampleSet(tuple(names), records, results_dir, environments_dir, jobs_dir)
