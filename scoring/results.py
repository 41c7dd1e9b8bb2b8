"""Results records: the files scoring writes and the leaderboard reads, both versions, as one typed record.

Layouts under a results folder:

- version 2, one file per scored run: `results/<environment>/<run_id>.json` (schema `results-v2.schema.json`),
  beside it `results/<environment>/<run_id>.items.json`, the per-item paired scores (`scoring.items`);
- version 1, one file per environment: `results/<environment>.json` (schema `results-v1.schema.json`), read only.

Every file is untrusted data: a symbolic link, an oversized or non-UTF-8 file, invalid JSON, a schema violation or
numbers that contradict each other is a `ResultsError` naming the file and the reason. The file names are
`taskpkg.layouts`'s; `scoring.record` writes records, `scoring.verify` accepts one a job wrote. Rewards and deltas are
fractions in [0, 1] and [-1, 1]; the leaderboard shows them as percentage points.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from scoring.statistics import CONFIDENCE, RESAMPLES
from taskpkg.domains import DOMAINS
from taskpkg.layouts import ITEMS_SUFFIX, record_path

__all__ = ["ITEMS_SUFFIX", "ArmErrors", "DomainResult", "ResultRecord", "ResultsError", "Settings", "SuiteInfo",
           "TrainingSummary", "load_record_file", "parse_record", "read_json", "record_path", "record_paths",
           "validate"]

MAX_BYTES = 1024 * 1024
CONSISTENCY_TOLERANCE = 1e-3  # a tenth of a point: room for numbers rounded to four decimals, none for edits


class ResultsError(Exception):
    """A results file cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class SuiteInfo:
    """The suite a run was scored on."""

    name: str
    version: str
    items: int
    public: bool
    digest: str  # scoring.suite.suite_digest: "sha256:<64 hex>" over items, instances and packages


@dataclass(frozen=True)
class TrainingSummary:
    """The training manifest, summarised for the record."""

    manifest_digest: str
    recipe: str
    recipe_hash: str
    steps: int
    gpu_hours: float
    wall_s: float
    hardware: str
    reward_curve: tuple[tuple[int, float], ...] = ()
    in_domain: dict[str, Any] | None = None  # the in-domain lift on the environment's held-out instances
    preflight: str | None = None  # the learnability pre-flight's one line (training/preflight.py)


@dataclass(frozen=True)
class Settings:
    """How the statistics were computed; part of the run id."""

    resamples: int = RESAMPLES
    confidence: float = CONFIDENCE
    seed: int = 0


@dataclass(frozen=True)
class ArmErrors:
    """One arm's episodes whose verifier (or setup) errored: at least once, and still after every retry."""

    retried: int = 0
    unresolved: int = 0


@dataclass(frozen=True)
class DomainResult:
    """One held-out domain of a run: items scored in both arms, mean rewards, and the delta's interval."""

    domain: str
    items: int  # 0 in version 1, which did not record it
    base: float
    trained: float
    delta: float
    interval: tuple[float, float] | None  # None in version 1
    units: int | None = None  # resampling units (clusters, or items of a one-family domain); None in version 1
    clustered: bool | None = None
    excluded: int = 0  # items excluded from both arms (version 2)


@dataclass(frozen=True)
class ResultRecord:
    """One scored run of one environment, whichever version its file is."""

    version: int
    run_id: str  # version 1: "v1-<environment>"
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
    suite_digest: str | None = None  # version 2 only, like the fields below
    samples_per_item: int | None = None
    harness_version: str | None = None
    macro_se: float | None = None
    macro_df: float | None = None
    adapter_digest: str | None = None
    suite_info: SuiteInfo | None = None
    sampling: dict[str, Any] | None = None  # the scoring profile (scoring.evaluation.Profile)
    libraries: dict[str, str] | None = None
    retries: int | None = None  # plays of an errored episode after the first
    errors: dict[str, ArmErrors] | None = None  # per arm: "base", "trained"
    settings: Settings | None = None  # the statistics settings (method: statistics_method)
    statistics_method: str | None = None
    training: TrainingSummary | None = None
    gate: dict[str, Any] | None = None  # the contamination gate's parameters

    @property
    def in_domain(self) -> dict[str, Any] | None:
        """The training run's in-domain lift (version 2 records that carry one)."""
        return self.training.in_domain if self.training else None

    @property
    def preflight(self) -> str | None:
        """The training run's pre-flight verdict in one line."""
        return self.training.preflight if self.training else None

    @property
    def evaluated(self) -> datetime:
        """evaluated_at as an aware date-time (a bare date or a time without zone counts as UTC)."""
        return parse_time(self.evaluated_at)


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or date-time from a results file, made timezone-aware (UTC when it names no zone)."""
    moment = datetime.fromisoformat(text.replace(" ", "T", 1))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def comparable_key(record: ResultRecord) -> tuple[object, ...]:
    """What two records must share to be compared: the suite (name, version and content digest), the base model and
    its revision, K, the harness version, the sampling settings and the confidence level."""
    sampling = json.dumps(record.sampling, sort_keys=True) if record.version == 2 else None
    confidence = record.settings.confidence if record.settings else None
    return (record.suite, record.suite_version, record.suite_digest, record.base_model, record.base_revision,
            record.samples_per_item, record.harness_version, sampling, confidence)


@cache
def schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped in scoring/schema/, by file name."""
    text = resources.files("scoring").joinpath(f"schema/{name}").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def fast_validator(name: str) -> jsonschema_rs.Draft202012Validator:
    """A compiled validator for one of scoring's schemas: about a hundred times faster than jsonschema's, which
    matters when the leaderboard reads tens of thousands of records."""
    return jsonschema_rs.Draft202012Validator(schema(name))


def validate(data: object, schema_name: str, source: str) -> None:
    """Raise ResultsError naming source and the first offending field when data breaks the schema.

    Valid data passes the compiled validator alone; invalid data is explained by jsonschema's best match, so the
    message is the same whichever validator found the fault.
    """
    if fast_validator(schema_name).is_valid(data):
        return
    error = best_match(Draft202012Validator(schema(schema_name)).iter_errors(data))
    if error is None:  # the two validators disagree: trust the stricter verdict, say so
        raise ResultsError(f"{source}: does not match {schema_name}")
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    raise ResultsError(f"{source}: {where}: {error.message}")


def parse_record(data: object, source: str) -> ResultRecord:
    """A ResultRecord from a results file's JSON (version 1 or 2); raises ResultsError naming source."""
    if not isinstance(data, dict):
        validate(data, "results-v1.schema.json", source)  # raises: every version's record is an object
        raise ResultsError(f"{source}: a results record is a JSON object")
    version = data.get("results_version")
    if version == 2:
        return _parse_v2(data, source)
    if isinstance(version, int) and not isinstance(version, bool) and version > 2:
        raise ResultsError(f"{source}: results_version {version}: this arena reads versions 1 and 2; upgrade it")
    validate(data, "results-v1.schema.json", source)
    return _parse_v1(data, source)


def _parse_v1(data: dict[str, Any], source: str) -> ResultRecord:
    unknown = sorted(set(data["domains"]) - set(DOMAINS))
    if unknown:
        raise ResultsError(f"{source}: domains: not arena domains: {', '.join(unknown)} (one of {', '.join(DOMAINS)})")
    domains = tuple(DomainResult(name, 0, float(s["base"]), float(s["trained"]),
                                 float(s["trained"]) - float(s["base"]), None)
                    for name, s in _in_domain_order(data["domains"]))
    base, trained = _mean(d.base for d in domains), _mean(d.trained for d in domains)
    return ResultRecord(
        version=1, run_id=f"v1-{data['environment']}", environment=data["environment"], commit=data.get("commit"),
        pr=None, contributor=None, base_model=data["model"], base_revision=None, suite=None, suite_version=None,
        evaluated_at=data["evaluated_at"], complete=True, domains=domains, macro_base=base, macro_trained=trained,
        macro_delta=trained - base, macro_interval=None, p_value=None,
        normalized_gain=(trained - base) / (1 - base) if base < 1 else None, verdict=None, contamination=None,
        gpu_hours=None, steps=None, recipe=None, reward_curve=(), raw=data)


def _parse_v2(data: dict[str, Any], source: str) -> ResultRecord:
    validate(data, "results-v2.schema.json", source)
    domains = tuple(DomainResult(name, d["items"], d["base"], d["trained"], d["delta"], _interval(d["interval"]),
                                 d["units"], d["clustered"], d.get("excluded", 0))
                    for name, d in _in_domain_order(data["domains"]))
    macro, training, stats, suite = data["macro"], data["training"], data["statistics"], data["suite"]
    _check_consistency(domains, macro, data["suite"]["items"], source)
    return ResultRecord(
        version=2, run_id=data["run_id"], environment=data["environment"], commit=data["commit"], pr=data.get("pr"),
        contributor=data.get("contributor"), base_model=data["base_model"]["name"],
        base_revision=data["base_model"]["revision"], suite=data["suite"]["name"],
        suite_version=data["suite"]["version"], evaluated_at=data["evaluated_at"], complete=data["complete"],
        domains=domains, macro_base=macro["base"], macro_trained=macro["trained"], macro_delta=macro["delta"],
        macro_interval=_interval(macro["interval"]), p_value=macro["p_value"],
        normalized_gain=macro["normalized_gain"], verdict=data["verdict"],
        contamination=data["contamination"]["verdict"], gpu_hours=training["gpu_hours"], steps=training["steps"],
        recipe=training["recipe"], reward_curve=tuple((int(s), float(r)) for s, r in training.get("reward_curve", ())),
        raw=data, suite_digest=data["suite"]["digest"], samples_per_item=data["samples_per_item"],
        harness_version=data["harness_version"], macro_se=macro["se"], macro_df=macro["df"],
        adapter_digest=data["adapter_digest"],
        suite_info=SuiteInfo(suite["name"], suite["version"], suite["items"], suite["public"], suite["digest"]),
        sampling=data["sampling"], libraries=data["libraries"], retries=data["evaluation"]["retries"],
        errors={arm: ArmErrors(e["retried"], e["unresolved"]) for arm, e in data["evaluation"]["errors"].items()},
        settings=Settings(stats["resamples"], stats["confidence"], stats["seed"]), statistics_method=stats["method"],
        training=TrainingSummary(
            training["manifest_digest"], training["recipe"], training["recipe_hash"], training["steps"],
            training["gpu_hours"], training["wall_s"], training["hardware"],
            tuple((int(s), float(r)) for s, r in training.get("reward_curve", ())), training.get("in_domain"),
            training.get("preflight")),
        gate=data["contamination"]["parameters"])


def _check_consistency(domains: tuple[DomainResult, ...], macro: dict[str, Any], suite_items: int, source: str) -> None:
    """Numbers the schema cannot relate: intervals in order, deltas that are differences, macro the domains' mean."""
    for where, low_high in [(f"domains/{d.domain}/interval", d.interval) for d in domains] + [
            ("macro/interval", _interval(macro["interval"]))]:
        assert low_high is not None
        if low_high[0] > low_high[1]:
            raise ResultsError(f"{source}: {where}: low {low_high[0]} is above high {low_high[1]}")
    checks = [(f"domains/{d.domain}/delta", d.delta, d.trained - d.base) for d in domains]
    checks += [("macro/base", macro["base"], _mean(d.base for d in domains)),
               ("macro/trained", macro["trained"], _mean(d.trained for d in domains)),
               ("macro/delta", macro["delta"], _mean(d.delta for d in domains))]
    for where, stated, expected in checks:
        if abs(stated - expected) > CONSISTENCY_TOLERANCE:
            raise ResultsError(f"{source}: {where}: is {stated} but the other numbers give {expected:.6f}")
    scored = sum(d.items for d in domains)
    if scored > suite_items:
        raise ResultsError(f"{source}: domains: {scored} items scored but the suite has {suite_items}")


def _interval(pair: list[float]) -> tuple[float, float]:
    return (float(pair[0]), float(pair[1]))


def _mean(values: Iterable[float]) -> float:
    numbers = list(values)
    return sum(numbers) / len(numbers)


def _in_domain_order(domains: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    order = {name: i for i, name in enumerate(DOMAINS)}
    return sorted(domains.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def read_json(path: Path, max_bytes: int = MAX_BYTES) -> object:
    """A regular file's JSON, never following a link; ResultsError for a link, an oversized or non-UTF-8 file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO must not block
    except OSError as exc:
        reason = "a symbolic link" if path.is_symlink() else exc.strerror
        raise ResultsError(f"{path}: cannot be read ({reason}); results must be regular files") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            raise ResultsError(f"{path}: not a regular file of at most {max_bytes} bytes")
        raw = handle.read(info.st_size + 1)  # no bigger buffer than the file: the cap is checked above
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not UTF-8 JSON: {exc}") from None


def record_paths(results_dir: Path) -> Iterator[tuple[Path, int]]:
    """Every record file with the version its place implies: <env>.json is 1, <env>/<run_id>.json is 2."""
    for path in sorted(results_dir.iterdir()):
        if path.is_symlink():
            raise ResultsError(f"{path}: a symbolic link; results must be regular files and folders")
        if path.is_dir():
            for inner in sorted(path.glob("*.json")):
                if not inner.name.endswith(ITEMS_SUFFIX):
                    yield inner, 2
        elif path.suffix == ".json":
            yield path, 1  # read_json refuses anything but a regular file


def load_record_file(path: Path, version: int) -> ResultRecord:
    """One record file, checked against the place it lies in (`version` is what the layout implies)."""
    data = read_json(path)
    stated = data.get("results_version") if isinstance(data, dict) else None
    if stated in (1, 2) and stated != version:
        wanted = "results/<environment>.json" if stated == 1 else "results/<environment>/<run_id>.json"
        raise ResultsError(f"{path}: results_version {stated} belongs at {wanted}")
    record = parse_record(data, str(path))
    if version == 1 and record.environment != path.stem:
        raise ResultsError(f"{path}: environment is {record.environment!r} but the file is named {path.name}")
    if version == 2 and (record.environment != path.parent.name or record.run_id != path.stem):
        raise ResultsError(f"{path}: holds run {record.run_id} of {record.environment!r}; it belongs at "
                           f"{record.environment}/{record.run_id}.json")
    return record
