"""Realistic sample inputs for the site's tests and benchmark: results records (version 2), packages and job states.

Everything is drawn from a seeded generator, so the same arguments always give the same files. Every record is what
scoring writes (scoring.record.build_run) from synthetic paired rewards on a small suite (SUITE_DOMAINS x
ITEMS_PER_DOMAIN items in clusters, K = 4, one base arm shared by every run of a suite version, as the score cache
shares it), with its items file, so the site's recomputation of every number and its paired rank comparisons work on
it as on real results. Each environment gets a history: older commits superseded by newer ones, now and then an
incomplete run or one the contamination gate flagged.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from launch.state import STATES
from scoring.record import PairedItem, RunInfo, Settings, SuiteInfo, TrainingSummary, build_run
from scoring.results import parse_time
from taskpkg.domains import DOMAINS

WORDS = ("ledger", "invoice", "triage", "audit", "schedule", "refund", "claims", "forensics", "routing", "tariff",
         "dosage", "contract", "permit", "spreadsheet", "memo", "ticket", "lab", "circuit", "firewall", "incident",
         "proof", "budget", "roster", "inventory", "escrow", "coding", "summary", "census", "grant", "lease")
VERBS = ("Reconcile", "Triage", "Audit", "Schedule", "Classify", "Draft", "Verify", "Route", "Estimate", "Repair")
LOGINS = ("ada-l", "grace-h", "alan-t", "edsger-d", "barbara-l", "donald-k", "frances-a", "john-m", "radia-p",
          "leslie-l", "shafi-g", "tim-bl", "margaret-h", "ken-t", "dennis-r", "guido-vr")
SUITE_NAME = "arena-heldout"
ITEMS_PER_DOMAIN = 12
CLUSTERS_PER_DOMAIN = 4
K = 4
RESAMPLES = 200  # the schema's floor is 100: enough for sample numbers, cheap to recompute at 50,000 records
BASE_MODEL = ("Qwen/Qwen3-8B", "b968826d9c46dd6066d109eabc6255188de91218")
SAMPLING = {"name": "full", "items_per_domain": None, "samples": K, "max_new_tokens": 1024,
            "max_episode_tokens": 8192, "temperature": 0.7, "command_timeout_s": 60, "output_chars": 4000}
GATE = {"ngram": 13, "code_gram": 20, "pair_gap": 2, "pair_share": 0.2, "code_share": 0.5}


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


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


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


@cache
def _suite_base(suite_version: str) -> tuple[tuple[str, str, str, float, tuple[float, ...]], ...]:
    """The suite's items (id, domain, cluster, success rate) with the base arm's K rewards, one per suite version."""
    rng = random.Random(f"base {suite_version}")
    rows = []
    for domain in DOMAINS:
        for index in range(ITEMS_PER_DOMAIN):
            cluster = _hex(suite_version, domain, index % CLUSTERS_PER_DOMAIN, length=16)
            rate = rng.uniform(0.15, 0.7)
            rows.append((_hex(suite_version, domain, index, length=16), domain, cluster, rate,
                         tuple(float(rng.random() < rate) for _ in range(K))))
    return tuple(rows)


def sample_record(environment: str, rng: random.Random, *, when: str, commit_index: int = 0,
                  effect: float | None = None, complete: bool = True, flagged: bool = False,
                  suite_version: str = "1.2.0", pr: int | None = None) -> tuple[dict, dict]:
    """One version-2 results record and its items file, as scoring writes them; effect is the true gain in success
    rate (a fraction) of the trained arm."""
    effect = rng.gauss(0.012, 0.02) if effect is None else effect
    commit = _hex(environment, commit_index, length=40)
    items = []
    for position, (item, domain, cluster, rate, base) in enumerate(_suite_base(suite_version)):
        if not complete and position % 37 == 5:
            items.append(PairedItem(item, domain, cluster, error="base_error"))
            continue
        chance = _clamp(rate + effect + rng.gauss(0, 0.03), 0.0, 1.0)
        items.append(PairedItem(item, domain, cluster, base, tuple(float(rng.random() < chance) for _ in range(K))))
    steps = rng.choice((200, 300, 400, 600))
    identity = _hex(environment, commit, suite_version, when)
    training = TrainingSummary(f"sha256:{_hex(identity, 'manifest')}", "grpo-lora-r16",
                               f"sha256:{_hex('grpo-lora-r16')}", steps, round(steps * rng.uniform(0.015, 0.03), 2),
                               round(steps * 21.5, 1), "1x NVIDIA H100 80GB",
                               tuple((s, r) for s, r in _curve(rng, steps, effect)))
    run = RunInfo(environment=environment, commit=commit, base_model=BASE_MODEL[0], base_revision=BASE_MODEL[1],
                  adapter_digest=f"sha256:{_hex(identity, 'adapter')}",
                  suite=SuiteInfo(SUITE_NAME, suite_version, len(items), False, f"sha256:{_hex(suite_version)}"),
                  samples_per_item=K, harness_version="full/agents-chat-1", training=training,
                  contamination={"verdict": "flagged" if flagged else "pass"}, sampling=SAMPLING,
                  libraries={"numpy": "2.4.6", "posttrain-arena": "0.1.0"}, gate=GATE, retries=2,
                  pr=pr if pr is not None else rng.randint(10, 9000), contributor=rng.choice(LOGINS),
                  settings=Settings(resamples=RESAMPLES, seed=20260101))
    record, items_file = build_run(items, run, parse_time(when))
    record["run_id"] = items_file["run_id"] = _hex(identity, length=16)  # distinct per evaluation, as time differs
    return record, items_file


def write_run_files(results_dir: Path, record: dict, items: dict) -> Path:
    """A record and its items file where the leaderboard reads them; returns the record's path."""
    path = results_dir / record["environment"] / f"{record['run_id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    path.with_name(f"{record['run_id']}.items.json").write_text(json.dumps(items) + "\n", encoding="utf-8")
    return path


def _timestamp(day: int, minute: int) -> str:
    month, dom = divmod(day % 300, 28)
    return f"2026-{1 + month % 12:02d}-{1 + dom:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:00Z"


def sample_records(names: list[str], records: int, seed: int = 11) -> list[tuple[dict, dict]]:
    """`records` records spread over the environments (each gets at least one), newest last per environment."""
    rng = random.Random(seed)
    per_env = [1] * len(names)
    for _ in range(max(0, records - len(names))):
        per_env[rng.randrange(len(names))] += 1
    out = []
    for index, (name, count) in enumerate(zip(names, per_env, strict=True)):
        effect = rng.choice((rng.gauss(0.12, 0.04), rng.gauss(0.0, 0.004), rng.gauss(-0.08, 0.02)))
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
    for data, items in sample_records(names, records, seed + 4):
        write_run_files(results_dir, data, items)
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
        for index in range(jobs):
            name = names[index % len(names)]
            commit = _hex(name, "job", index, length=40)
            job = {"job_version": 1, "environment": name, "commit": commit, "pr": 100 + index,
                   "state": STATES[index % len(STATES)], "backend": "skypilot" if index % 2 else "local",
                   "requested_by": rng.choice(LOGINS), "requested_at": _timestamp(index, 60),
                   "updated_at": _timestamp(index, 90)}
            path = jobs_dir / name / f"{commit}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")
    return SampleSet(tuple(names), records, results_dir, environments_dir, jobs_dir)
