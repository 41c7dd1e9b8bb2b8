"""Per-item paired scores: `results/<environment>/<run_id>.items.json` (schema `items-v1.schema.json`).

The file behind a version-2 record: for every item scored in both arms its opaque id (a hash, never the item's
text), domain, hashed cluster id and the mean reward of each arm over K samples; and the items excluded from both
arms with the reason. Reading one checks it against its record: same run, suite and per-domain counts and means.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.results import CONSISTENCY_TOLERANCE, ResultRecord, ResultsError, read_json, validate
from taskpkg.layouts import items_path, record_path

__all__ = ["MAX_ITEMS_BYTES", "ItemScores", "items_path", "load_items", "parse_items"]

MAX_ITEMS_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class ItemScores:
    """The paired per-item scores of one run."""

    run_id: str
    environment: str
    suite: tuple[str, str]  # name, version
    samples_per_item: int
    ids: tuple[str, ...]
    domains: tuple[str, ...]
    clusters: tuple[str | None, ...]
    base: tuple[float, ...]
    trained: tuple[float, ...]
    excluded: tuple[tuple[str, str, str], ...]  # (id, domain, reason)

    @classmethod
    def from_json(cls, data: object, source: str, record: ResultRecord | None = None) -> ItemScores:
        """The trust boundary: an items file's JSON, validated (schema, unique ids, and against its record when
        given) into ItemScores. Raises ResultsError naming source and the field."""
        validate(data, "items-v1.schema.json", source)
        assert isinstance(data, dict)
        rows = data["items"]
        scores = cls(
            run_id=data["run_id"], environment=data["environment"],
            suite=(data["suite"]["name"], data["suite"]["version"]), samples_per_item=data["samples_per_item"],
            ids=tuple(r["id"] for r in rows), domains=tuple(r["domain"] for r in rows),
            clusters=tuple(r["cluster"] for r in rows), base=tuple(float(r["base"]) for r in rows),
            trained=tuple(float(r["trained"]) for r in rows),
            excluded=tuple((r["id"], r["domain"], r["reason"]) for r in data["excluded"]))
        every_id = list(scores.ids) + [e[0] for e in scores.excluded]
        if len(set(every_id)) != len(every_id):
            raise ResultsError(f"{source}: items: an item id appears twice")
        if record is not None:
            scores.check_against(record, source)
        return scores

    def check_against(self, record: ResultRecord, source: str) -> None:
        """ResultsError unless these are the record's items: same run, suite and K, its per-domain counts and means."""
        _check_against(self, record, source)

    def to_json(self) -> dict[str, Any]:
        """The items file's JSON (schema items-v1.schema.json)."""
        rows = zip(self.ids, self.domains, self.clusters, self.base, self.trained, strict=True)
        return {
            "items_version": 1, "run_id": self.run_id, "environment": self.environment,
            "suite": {"name": self.suite[0], "version": self.suite[1]}, "samples_per_item": self.samples_per_item,
            "items": [{"id": i, "domain": d, "cluster": c, "base": b, "trained": t} for i, d, c, b, t in rows],
            "excluded": [{"id": i, "domain": d, "reason": r} for i, d, r in self.excluded],
        }


def parse_items(data: object, source: str, record: ResultRecord | None = None) -> ItemScores:
    """ItemScores from an items file's JSON, checked against its record when given (ItemScores.from_json)."""
    return ItemScores.from_json(data, source, record)


def _check_against(scores: ItemScores, record: ResultRecord, source: str) -> None:
    mismatched = [name for name, ours, theirs in (
        ("run_id", scores.run_id, record.run_id), ("environment", scores.environment, record.environment),
        ("suite", scores.suite, (record.suite, record.suite_version)),
        ("samples_per_item", scores.samples_per_item, record.samples_per_item)) if ours != theirs]
    if mismatched:
        raise ResultsError(f"{source}: {', '.join(mismatched)} differ from the record's")
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for domain, base, trained in zip(scores.domains, scores.base, scores.trained, strict=True):
        entry = sums[domain]
        entry[0] += 1
        entry[1] += base
        entry[2] += trained
    stated = {d.domain: d for d in record.domains}
    if set(sums) != set(stated):
        raise ResultsError(f"{source}: items cover domains {sorted(sums)} but the record has {sorted(stated)}")
    for name, (count, base, trained) in sums.items():
        said = stated[name]
        if count != said.items or abs(base / count - said.base) > CONSISTENCY_TOLERANCE or \
                abs(trained / count - said.trained) > CONSISTENCY_TOLERANCE:
            raise ResultsError(f"{source}: domain {name}: {int(count)} items with means {base / count:.4f} / "
                               f"{trained / count:.4f}, but the record says {said.items} items with "
                               f"{said.base:.4f} / {said.trained:.4f}")


def load_items(results_dir: Path, record: ResultRecord) -> ItemScores | None:
    """The items file of a version-2 record, checked against it; None when the run has none."""
    if record.version != 2:
        return None
    path = items_path(record_path(results_dir, record.environment, record.run_id))
    if not path.exists() and not path.is_symlink():
        return None
    return parse_items(read_json(path, MAX_ITEMS_BYTES), str(path), record)
