"""Every number of a results record someone else wrote, recomputed before it is accepted.

A version-2 record states numbers (per-domain counts, means, deltas, standard errors and intervals; the macro Δ, its
standard error, degrees of freedom, interval, p-value and normalised gain; the verdict) that follow from its items
file and its statistics settings (resamples, confidence, seed) alone. `check_numbers` recomputes them with the same
code scoring wrote them with (`scoring.record.statistics_fields`) and refuses a record whose numbers differ, naming
the first field that does. The bot (a job's result), `arena site build` and every other reader of a results folder
(`load_checked`) go through it, so a forged interval, p-value or verdict is never published.

The bootstrap depends on the seed only (never on threads), so a recomputation is exact up to floating-point
rounding of one numpy build against another; TOLERANCE allows that and nothing a reader could see.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from scoring.items import MAX_ITEMS_BYTES, ItemScores
from scoring.record import Settings, statistics_fields
from scoring.results import (
    MAX_BYTES,
    ResultRecord,
    ResultsError,
    load_record_file,
    parse_record,
    read_json,
    record_paths,
)
from taskpkg.layouts import items_path

TOLERANCE = 1e-9
PARALLEL_RECORDS = 200  # below this many records per worker, starting processes costs more than it saves
BATCH = 100  # records a worker checks per task


@dataclass(frozen=True)
class CheckedRun:
    """A record whose numbers were recomputed from its items file (version 1: no items, nothing to recompute)."""

    record: ResultRecord
    items: ItemScores | None


def _differences(stated: object, expected: object, where: str) -> Iterator[tuple[str, object, object]]:
    """(field, stated, expected) for every leaf of expected that the stated data does not match."""
    if isinstance(expected, dict):
        if not isinstance(stated, dict) or set(stated) != set(expected):
            yield where, stated, expected
            return
        for key, value in expected.items():
            yield from _differences(stated[key], value, f"{where}/{key}" if where else key)
    elif isinstance(expected, list):
        if not isinstance(stated, list) or len(stated) != len(expected):
            yield where, stated, expected
            return
        for index, (ours, theirs) in enumerate(zip(stated, expected, strict=True)):
            yield from _differences(ours, theirs, f"{where}/{index}")
    elif isinstance(expected, float) and isinstance(stated, int | float) and not isinstance(stated, bool):
        if not math.isclose(stated, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            yield where, stated, expected
    elif stated != expected or type(stated) is bool is not type(expected):
        yield where, stated, expected


def check_numbers(data: dict[str, Any], items: dict[str, Any] | ItemScores, source: str) -> None:
    """Recompute a version-2 record's numbers from its items (file JSON or read) with its stored settings;
    ResultsError naming the first field that differs (and the numpy versions, when they differ)."""
    scores = items if isinstance(items, ItemScores) else ItemScores.from_json(items, f"{source} (items)")
    stated = data["statistics"]
    settings = Settings(resamples=stated["resamples"], confidence=stated["confidence"], seed=stated["seed"])
    expected = statistics_fields(scores, settings)
    if scores.excluded and data.get("complete"):
        raise ResultsError(f"{source}: complete: the record says true but its items file excludes "
                           f"{len(scores.excluded)} item(s)")
    for where, ours, theirs in _differences({key: data.get(key) for key in expected}, expected, ""):
        numpy_here, numpy_there = metadata.version("numpy"), data.get("libraries", {}).get("numpy")
        note = (f" (the record was written with numpy {numpy_there}, this is numpy {numpy_here})"
                if numpy_there and numpy_there != numpy_here else "")
        raise ResultsError(f"{source}: {where}: the record says {ours!r} but its items file gives {theirs!r} "
                           f"(recomputed with seed {settings.seed}, {settings.resamples} resamples){note}; a record "
                           "is accepted only with the numbers its items yield")


def check_record(record: ResultRecord, items: object, source: str) -> ItemScores | None:
    """A parsed record checked against its items file's JSON: consistent, and every number recomputed. Version 2
    needs its items file; version 1 has none to check (it is never ranked)."""
    if record.version != 2:
        return None
    if items is None:
        raise ResultsError(f"{source}: no items file: a version-2 record is accepted only with its "
                           "<run_id>.items.json, from which its numbers are recomputed")
    scores = ItemScores.from_json(items, f"{source} (items)", record)
    check_numbers(record.raw, scores, source)
    return scores


def accept_job_result(payload: object, environment: str, commit: str, source: str,
                      max_bytes: int = MAX_BYTES) -> tuple[dict[str, Any], dict[str, Any], ResultRecord]:
    """The trust boundary for a job's result block (launch.result_block): a complete version-2 record for exactly
    this environment and commit, within size, with its items file, every number of the record recomputed from the
    items. Returns (record data, items data, parsed record), ready for scoring.record.write_record; raises
    ResultsError naming source and what is wrong (the field, for numbers that do not follow from the items)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("record"), dict):
        raise ResultsError(f"{source}: the result holds no results record")
    data, items = payload["record"], payload.get("items")
    if len(json.dumps(data)) > max_bytes or (items is not None and len(json.dumps(items)) > 16 * max_bytes):
        raise ResultsError(f"{source}: the results record is larger than the {max_bytes} bytes a record may hold")
    record = parse_record(data, source)
    if record.version != 2:
        raise ResultsError(f"{source}: a job must write a version 2 record, not version {record.version}")
    if (record.environment, record.commit) != (environment, commit):
        raise ResultsError(f"{source}: the record is for {record.environment} at {record.commit}, not the job's "
                           f"{environment} at {commit}")
    if not record.complete:
        raise ResultsError(f"{source}: the record says the run is incomplete; nothing is published from a partial "
                           "run")
    check_record(record, items, source)
    assert isinstance(items, dict)
    return data, items, record


def check_file(path: Path, version: int) -> CheckedRun:
    """One record file and the items file beside it, every number checked."""
    record = load_record_file(path, version)
    beside = items_path(path)
    raw_items = read_json(beside, MAX_ITEMS_BYTES) if version == 2 and (
        beside.exists() or beside.is_symlink()) else None
    return CheckedRun(record, check_record(record, raw_items, str(path)))


def _check_files(paths: list[tuple[Path, int]]) -> list[CheckedRun]:
    return [check_file(path, version) for path, version in paths]


def load_checked(results_dir: Path | None, progress: Callable[[int, int], None] | None = None) -> list[CheckedRun]:
    """Every record under results_dir with its items file, each version-2 record's numbers recomputed, by
    environment then time. [] when the folder is absent; ResultsError for the first file that cannot be used.

    Many records are checked in worker processes, a batch each (the recomputation is CPU-bound numpy work)."""
    if results_dir is None or not results_dir.is_dir():
        return []
    paths = list(record_paths(results_dir))
    workers = min(os.cpu_count() or 1, len(paths) // PARALLEL_RECORDS)
    batches = [paths[i:i + BATCH] for i in range(0, len(paths), BATCH)]
    runs: list[CheckedRun] = []
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for done in pool.map(_check_files, batches):
                runs += done
                if progress is not None:
                    progress(len(runs), len(paths))
    else:
        for chunk in batches:
            runs += _check_files(chunk)
            if progress is not None:
                progress(len(runs), len(paths))
    return sorted(runs, key=lambda r: (r.record.environment, r.record.evaluated, r.record.run_id))


def load_records(results_dir: Path | None) -> list[ResultRecord]:
    """The records of load_checked (each version-2 record's numbers recomputed), without their items."""
    return [run.record for run in load_checked(results_dir)]
