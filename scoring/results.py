"""TEMP stand-in for scoring's results reader: the agreed interface, so the leaderboard can be built before it lands.

Reads version-2 records (`results/<environment>/<run_id>.json`, scoring/schema/results-v2.schema.json) and version-1
files (`results/<environment>.json`). The real module replaces this file whole.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

SCHEMA_FILE = Path(__file__).resolve().parent / "schema" / "results-v2.schema.json"
MAX_BYTES = 1024 * 1024


class ResultsError(Exception):
    """A results file cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class DomainResult:
    """One held-out domain's scores."""

    domain: str
    items: int | None
    base: float
    trained: float
    delta: float
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class ResultRecord:
    """One scored run of one environment."""

    version: int
    run_id: str
    environment: str
    commit: str | None
    pr: int | None
    contributor: str | None
    base_model: str
    base_revision: str | None
    suite: str | None
    suite_version: str | None
    evaluated_at: str
    complete: bool
    domains: tuple[DomainResult, ...]
    macro_base: float
    macro_trained: float
    macro_delta: float
    macro_interval: tuple[float, float] | None
    p_value: float | None
    normalized_gain: float | None
    verdict: str | None
    contamination: str | None
    gpu_hours: float | None
    steps: int | None
    recipe: str | None
    reward_curve: tuple[tuple[int, float], ...]
    raw: dict[str, Any]


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def _pair(value: list | None) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _v2(data: dict) -> ResultRecord:
    domains = tuple(DomainResult(name, d["items"], d["base"], d["trained"], d["delta"], _pair(d["interval"]))
                    for name, d in sorted(data["domains"].items()))
    macro, training = data["macro"], data["training"]
    return ResultRecord(
        version=2, run_id=data["run_id"], environment=data["environment"], commit=data["commit"], pr=data.get("pr"),
        contributor=data.get("contributor"), base_model=data["base_model"]["name"],
        base_revision=data["base_model"]["revision"], suite=data["suite"]["name"],
        suite_version=data["suite"]["version"], evaluated_at=data["evaluated_at"], complete=data["complete"],
        domains=domains, macro_base=macro["base"], macro_trained=macro["trained"], macro_delta=macro["delta"],
        macro_interval=_pair(macro["interval"]), p_value=macro["p_value"], normalized_gain=macro["normalized_gain"],
        verdict=data["verdict"], contamination=data["contamination"]["verdict"], gpu_hours=training["gpu_hours"],
        steps=training["steps"], recipe=training["recipe"],
        reward_curve=tuple((int(s), float(r)) for s, r in training.get("reward_curve", ())), raw=data)


def _v1(data: dict, source: str) -> ResultRecord:
    try:
        scores = {name: (float(d["base"]), float(d["trained"])) for name, d in sorted(data["domains"].items())}
        environment, model, evaluated_at = str(data["environment"]), str(data["model"]), str(data["evaluated_at"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsError(f"{source}: not a version-1 results file: {exc}") from None
    if not scores:
        raise ResultsError(f"{source}: domains: at least one domain is required")
    domains = tuple(DomainResult(n, None, b, t, t - b, None) for n, (b, t) in scores.items())
    base = sum(d.base for d in domains) / len(domains)
    trained = sum(d.trained for d in domains) / len(domains)
    run_id = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    return ResultRecord(
        version=1, run_id=run_id, environment=environment, commit=data.get("commit"), pr=None, contributor=None,
        base_model=model, base_revision=None, suite=None, suite_version=None, evaluated_at=evaluated_at,
        complete=True, domains=domains, macro_base=base, macro_trained=trained, macro_delta=trained - base,
        macro_interval=None, p_value=None, normalized_gain=None if base >= 1 else (trained - base) / (1 - base),
        verdict=None, contamination=None, gpu_hours=None, steps=None, recipe=None, reward_curve=(), raw=data)


def parse_record(data: object, source: str) -> ResultRecord:
    """A ResultRecord from a results file's JSON (version 1 or 2); raises ResultsError naming source."""
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: (top level): expected a JSON object")
    if data.get("results_version") == 1:
        return _v1(data, source)
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ResultsError(f"{source}: {where}: {error.message}")
    return _v2(data)


def _read(path: Path) -> ResultRecord:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
        raise ResultsError(f"{path}: not a regular file of at most {MAX_BYTES} bytes")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not UTF-8 JSON: {exc}") from None
    return parse_record(data, str(path))


def load_records(results_dir: Path | None) -> list[ResultRecord]:
    """Every record under results_dir (v2 in subfolders, v1 at the top), sorted; [] when absent."""
    if results_dir is None or not results_dir.is_dir():
        return []
    records = []
    for path in sorted([*results_dir.glob("*.json"), *results_dir.glob("*/*.json")]):
        record = _read(path)
        expected = path.stem if path.parent == results_dir else path.parent.name
        if record.environment != expected:
            raise ResultsError(f"{path}: environment is {record.environment!r} but the file is under {expected!r}")
        records.append(record)
    return sorted(records, key=lambda r: (r.environment, r.evaluated_at, r.run_id))


def comparable_key(record: ResultRecord) -> tuple:
    """Records with the same key were measured the same way and may be ranked together."""
    return (record.base_model, record.base_revision, record.suite, record.suite_version,
            tuple(d.domain for d in record.domains))
