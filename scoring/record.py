"""Turn a run's per-item rewards into its version-2 record and items file: what `arena score` calls last.

An evaluation hands over, per suite item, the K rewards of each arm (base and trained) or the reason the item was
excluded from both (the base arm's verifier still erred after retries; a trained arm's unresolved error is already a
0), plus the run's metadata: everything a reader needs to reproduce and compare the numbers (the suite's content
digest, sampling settings, K, harness version, library versions, the gate's parameters, the base model's revision).
`write_run` computes the statistics (`scoring.statistics`), derives the reproducible run id and writes
`results/<environment>/<run_id>.json` and its `.items.json` atomically through `write_record`, the one writer of
results files (names from `taskpkg.layouts`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoring.items import ItemScores
from scoring.results import ArmErrors, ResultRecord, ResultsError, Settings, SuiteInfo, TrainingSummary, parse_record
from scoring.statistics import item_means, summarize
from taskpkg.atomic_files import write_json_atomic
from taskpkg.domains import DOMAINS
from taskpkg.layouts import items_path, record_path

METHOD = "stratified-cluster-bootstrap-t"  # bootstrap standard errors, t intervals at Satterthwaite's df

__all__ = ["METHOD", "ArmErrors", "PairedItem", "RunInfo", "Settings", "SuiteInfo", "TrainingSummary", "build_items",
           "build_run", "record_json", "run_id", "statistics_fields", "write_record", "write_run"]


@dataclass(frozen=True)
class PairedItem:
    """One suite item's rewards in both arms: K each, or an error that excludes it from both."""

    item: str  # the opaque id (scoring.suite.item_id)
    domain: str
    cluster: str | None  # the hashed cluster id, or None
    base: tuple[float, ...] = ()
    trained: tuple[float, ...] = ()
    error: str | None = None  # why it is excluded from both arms, e.g. "base_error"


@dataclass(frozen=True)
class RunInfo:
    """Everything about a run except its rewards."""

    environment: str
    commit: str
    base_model: str
    base_revision: str
    adapter_digest: str
    suite: SuiteInfo
    samples_per_item: int
    harness_version: str
    training: TrainingSummary
    contamination: dict[str, Any]  # the gate's public verdict: {"verdict": "pass" or "flagged"}
    sampling: dict[str, Any]  # the scoring profile: tokens, temperature, tool limits (scoring.evaluation.Profile)
    libraries: dict[str, str]  # versions of the libraries the numbers depend on
    gate: dict[str, Any]  # the contamination gate's parameters
    retries: int  # plays of an errored episode after the first
    errors: dict[str, ArmErrors] = field(default_factory=lambda: {"base": ArmErrors(), "trained": ArmErrors()})
    pr: int | None = None
    contributor: str | None = None
    settings: Settings = field(default_factory=Settings)


def run_id(run: RunInfo) -> str:
    """sha256 over the canonical JSON of what determines the run's numbers (the schema lists it); 16 hex digits."""
    identity = {"environment": run.environment, "commit": run.commit,
                "training_manifest": run.training.manifest_digest, "adapter": run.adapter_digest,
                "base_model": run.base_model, "base_revision": run.base_revision, "suite": run.suite.name,
                "suite_version": run.suite.version, "suite_digest": run.suite.digest,
                "samples_per_item": run.samples_per_item, "harness_version": run.harness_version,
                "sampling": run.sampling, "statistics": asdict(run.settings)}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _checked(items: Sequence[PairedItem], k: int) -> tuple[list[PairedItem], list[PairedItem]]:
    """(scored, excluded); ValueError for rewards that are not K finite numbers in [0, 1], or a repeated item."""
    repeated = [item for item, n in Counter(i.item for i in items).items() if n > 1]
    if repeated:
        raise ValueError(f"item {repeated[0]} is given more than once")
    scored, excluded = [], []
    for item in items:
        if item.domain not in DOMAINS:
            raise ValueError(f"item {item.item}: {item.domain!r} is not an arena domain")
        if item.error is not None:
            excluded.append(item)
            continue
        for arm, rewards in (("base", item.base), ("trained", item.trained)):
            if len(rewards) != k or not all(math.isfinite(r) and 0 <= r <= 1 for r in rewards):
                raise ValueError(f"item {item.item}: the {arm} arm needs {k} rewards in [0, 1], got {list(rewards)}")
        scored.append(item)
    if not scored:
        raise ValueError("no item was scored in both arms: there is nothing to summarise")
    return scored, excluded


def build_items(items: Sequence[PairedItem], run: RunInfo) -> ItemScores:
    """The run's paired per-item scores (each arm's mean over K samples). ValueError for inconsistent input."""
    scored, excluded = _checked(items, run.samples_per_item)
    if len(items) > run.suite.items:
        raise ValueError(f"{len(items)} items given but the suite has {run.suite.items}")
    base, trained = item_means([i.base for i in scored]), item_means([i.trained for i in scored])
    return ItemScores(
        run_id=run_id(run), environment=run.environment, suite=(run.suite.name, run.suite.version),
        samples_per_item=run.samples_per_item, ids=tuple(i.item for i in scored),
        domains=tuple(i.domain for i in scored), clusters=tuple(i.cluster for i in scored),
        base=tuple(float(b) for b in base), trained=tuple(float(t) for t in trained),
        excluded=tuple((i.item, i.domain, str(i.error)) for i in excluded))


def build_run(items: Sequence[PairedItem], run: RunInfo,
              evaluated_at: datetime | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record and the items file, as JSON-ready dicts. ValueError for inconsistent input."""
    scores = build_items(items, run)
    return record_json(scores, run, len(items), evaluated_at), scores.to_json()


def record_json(scores: ItemScores, run: RunInfo, given: int, evaluated_at: datetime | None = None) -> dict[str, Any]:
    """The version-2 record's JSON: the run's metadata and the numbers its scores give (`given`: how many suite
    items were handed over, scored or excluded)."""
    moment = (evaluated_at or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    training = run.training
    record = {
        "results_version": 2, "run_id": scores.run_id, "environment": run.environment, "commit": run.commit,
        **({"pr": run.pr} if run.pr is not None else {}),
        **({"contributor": run.contributor} if run.contributor is not None else {}),
        "base_model": {"name": run.base_model, "revision": run.base_revision},
        "adapter_digest": run.adapter_digest,
        "suite": {"name": run.suite.name, "version": run.suite.version, "items": run.suite.items,
                  "public": run.suite.public, "digest": run.suite.digest},
        "samples_per_item": run.samples_per_item, "harness_version": run.harness_version,
        "sampling": run.sampling, "libraries": run.libraries,
        "evaluated_at": moment.isoformat().replace("+00:00", "Z"),
        "complete": not scores.excluded and given == run.suite.items,
        "evaluation": {"retries": run.retries,
                       "errors": {arm: asdict(run.errors.get(arm, ArmErrors())) for arm in ("base", "trained")}},
        **statistics_fields(scores, run.settings),
        "contamination": {**run.contamination, "parameters": run.gate},
        "training": {"manifest_digest": training.manifest_digest, "recipe": training.recipe,
                     "recipe_hash": training.recipe_hash, "steps": training.steps, "gpu_hours": training.gpu_hours,
                     "wall_s": training.wall_s, "hardware": training.hardware,
                     **({"reward_curve": [list(p) for p in training.reward_curve]} if training.reward_curve else {}),
                     **({"in_domain": training.in_domain} if training.in_domain else {}),
                     **({"preflight": training.preflight} if training.preflight else {})},
    }
    return record


def statistics_fields(scores: ItemScores, settings: Settings) -> dict[str, Any]:
    """The record's numbers computed from its items: domains, macro, verdict and the statistics settings. The
    one definition both the writer and every reader that checks a record (scoring.verify) use."""
    summary = summarize(list(scores.domains), list(scores.clusters), list(scores.base), list(scores.trained),
                        resamples=settings.resamples, confidence=settings.confidence, seed=settings.seed,
                        order=DOMAINS)
    dropped = Counter(domain for _, domain, _ in scores.excluded)
    domains = {d.domain: {"items": d.items, **({"excluded": dropped[d.domain]} if dropped[d.domain] else {}),
                          "units": d.units, "clustered": d.clustered, "base": d.base, "trained": d.trained,
                          "delta": d.delta, "se": d.se, "interval": list(d.interval)}
               for d in summary.domains}
    return {
        "domains": domains,
        "macro": {"base": summary.base, "trained": summary.trained, "delta": summary.delta, "se": summary.se,
                  "df": summary.df, "interval": list(summary.interval), "p_value": summary.p_value,
                  "normalized_gain": summary.normalized_gain},
        "verdict": summary.verdict,
        "statistics": {"method": METHOD, "resamples": settings.resamples, "confidence": settings.confidence,
                       "seed": settings.seed},
    }


def write_run(results_dir: Path, items: Sequence[PairedItem], run: RunInfo,
              evaluated_at: datetime | None = None) -> ResultRecord:
    """Build and write a run's record and its items (write_record); returns the record."""
    scores = build_items(items, run)
    return write_record(results_dir, record_json(scores, run, len(items), evaluated_at), scores)


def write_record(results_dir: Path, data: dict[str, Any],
                 items: ItemScores | dict[str, Any] | None = None) -> ResultRecord:
    """The one writer of results files: a version-2 record, validated (schema and consistency: nothing invalid is
    written, whoever built it), and its items (typed, or an items file's JSON from a job, validated), checked against
    the record; both written atomically at their layout places, the items file first, so a record is never seen
    without its items. Returns the typed record. Raises ResultsError on invalid data, writing nothing."""
    target = record_path(results_dir, str(data.get("environment")), str(data.get("run_id")))
    record = parse_record(data, str(target))
    if record.version != 2:
        raise ResultsError(f"{target}: only version 2 records are written")
    if items is not None:
        beside = items_path(target)
        if isinstance(items, ItemScores):
            items.check_against(record, str(beside))
            write_json_atomic(beside, items.to_json())
        else:
            ItemScores.from_json(items, str(beside), record)
            write_json_atomic(beside, items)
    write_json_atomic(target, data)
    return record
