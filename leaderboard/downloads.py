"""The site's data downloads, at stable URLs:

- `leaderboard.json` (schema: `schema/leaderboard-v1.schema.json`, also published) and `leaderboard.csv`: every
  comparison group's current runs with their standings;
- `e/<name>/results.json`: one environment's runs, each with its full results record;
- `history/<suite version>.json`: every run on that suite version, superseded ones included.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from functools import cache
from importlib import resources

from leaderboard.catalog import Catalog, Entry, Group
from taskpkg.domains import DOMAINS

LEADERBOARD_VERSION = 1
SCHEMA_PATH = "schema/leaderboard-v1.schema.json"
UNVERSIONED = "unversioned"
CSV_COLUMNS = ("group", "rank", "rank_low", "rank_high", "environment", "verdict", "q_value", "macro_delta",
               "interval_low", "interval_high", "normalized_gain", "p_value", *(f"delta_{d}" for d in DOMAINS),
               "contamination", "complete", "contributor", "pr", "commit", "evaluated_at", "gpu_hours", "run_id")


@cache
def leaderboard_schema_text() -> str:
    """The published JSON Schema of leaderboard.json, history snapshots and per-environment files."""
    return resources.files("leaderboard").joinpath(SCHEMA_PATH).read_text(encoding="utf-8")


def to_json(data: object) -> bytes:
    """Canonical JSON: sorted keys, no spaces, one trailing newline (same data, same bytes)."""
    return (json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _pair(pair: tuple | None) -> list | None:
    return None if pair is None else list(pair)


def entry_data(entry: Entry, group_slug: str) -> dict:
    """One run as the downloads describe it."""
    record, standing = entry.record, entry.standing
    return {
        "environment": record.environment, "run_id": record.run_id, "group": group_slug, "commit": record.commit,
        "pr": record.pr, "contributor": record.contributor, "evaluated_at": record.evaluated_at,
        "rank": standing.rank, "rank_interval": _pair(standing.rank_interval), "verdict": standing.verdict,
        "q_value": standing.q_value, "superseded": standing.superseded, "complete": record.complete,
        "macro_delta": record.macro_delta, "macro_interval": _pair(record.macro_interval),
        "p_value": record.p_value, "normalized_gain": record.normalized_gain,
        "domains": {d.domain: {"delta": d.delta, "interval": _pair(d.interval)} for d in record.domains},
        "contamination": record.contamination, "gpu_hours": record.gpu_hours,
        "page": f"e/{record.environment}/",
    }


def group_data(group: Group) -> dict:
    """A comparison group's description."""
    record = group.everyone[0].record if group.everyone else None
    return {"slug": group.slug, "label": group.label, "suite": record.suite if record else None,
            "suite_version": group.suite_version, "base_model": record.base_model if record else None,
            "base_revision": record.base_revision if record else None, "entries": len(group.everyone)}


def _slugs(catalog: Catalog) -> dict[tuple, str]:
    return {group.key: group.slug for group in catalog.groups}


def leaderboard_json(catalog: Catalog) -> bytes:
    """leaderboard.json: every group's current runs in rank order."""
    return to_json({"leaderboard_version": LEADERBOARD_VERSION, "schema": SCHEMA_PATH,
                    "groups": [group_data(g) for g in catalog.groups],
                    "entries": [entry_data(e, g.slug) for g in catalog.groups for e in g.everyone]})


def _cell(value: object) -> object:
    return "" if value is None else value


def leaderboard_csv(catalog: Catalog) -> bytes:
    """leaderboard.csv: the same runs as leaderboard.json, one per line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for group in catalog.groups:
        for entry in group.everyone:
            record, standing = entry.record, entry.standing
            low, high = standing.rank_interval or (None, None)
            i_low, i_high = record.macro_interval or (None, None)
            deltas = {d.domain: d.delta for d in record.domains}
            writer.writerow([_cell(v) for v in (
                group.slug, standing.rank, low, high, record.environment, standing.verdict, standing.q_value,
                record.macro_delta, i_low, i_high, record.normalized_gain, record.p_value,
                *(deltas.get(d) for d in DOMAINS), record.contamination, record.complete, record.contributor,
                record.pr, record.commit, record.evaluated_at, record.gpu_hours, record.run_id)])
    return out.getvalue().encode("utf-8")


def environment_json(name: str, catalog: Catalog) -> dict:
    """e/<name>/results.json as data: each run with its standing and full record."""
    slugs = _slugs(catalog)
    runs = [{**entry_data(e, slugs[e.standing.group]), "record": e.record.raw} for e in catalog.entries.get(name, [])]
    return {"leaderboard_version": LEADERBOARD_VERSION, "environment": name, "runs": runs}


def history_snapshots(catalog: Catalog) -> dict[str, bytes]:
    """history/<suite version>.json for every suite version seen (version-1 results under "unversioned")."""
    slugs = _slugs(catalog)
    by_version: dict[str, list[dict]] = defaultdict(list)
    for entries in catalog.entries.values():
        for entry in entries:
            version = entry.record.suite_version or UNVERSIONED
            by_version[version].append(entry_data(entry, slugs[entry.standing.group]))
    return {version: to_json({"leaderboard_version": LEADERBOARD_VERSION, "suite_version": version,
                              "entries": sorted(runs, key=lambda r: (r["environment"], r["evaluated_at"],
                                                                     r["run_id"]))})
            for version, runs in sorted(by_version.items())}
