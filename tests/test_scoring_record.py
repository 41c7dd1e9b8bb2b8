"""The record writer: per-item rewards of two arms in, a version-2 record and items file out, every number of which
this test recomputes on its own (plain Python loops, its own random numbers)."""

from __future__ import annotations

import json
import math
import random
import re
import statistics
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scipy import stats

from scoring.items import items_path
from scoring.record import build_run, write_run
from scoring.results import record_path
from tests.support.scoring import paired_items, run_info

WHEN = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def naive_bootstrap(items: list[dict], resamples: int, seed: int) -> tuple[list[float], dict[str, list[float]]]:
    """The stratified clustered bootstrap written the slow, obvious way: per domain, draw its units (clusters, or
    items where the domain has a single cluster) with replacement; rescale each domain's deviations by
    sqrt(m / (m − 1)); return the macro replicates and each domain's."""
    rng = random.Random(seed)
    units: dict[str, dict[object, list[float]]] = defaultdict(lambda: defaultdict(list))
    for n, item in enumerate(items):
        units[item["domain"]][item["cluster"] if item["cluster"] else n].append(item["trained"] - item["base"])
    for domain, clusters in units.items():
        if len(clusters) < 2:
            units[domain] = {n: [d] for n, d in enumerate(clusters[next(iter(clusters))])}
    observed = {d: sum(sum(u) for u in c.values()) / sum(len(u) for u in c.values()) for d, c in units.items()}
    macro, per_domain = [], defaultdict(list)
    for _ in range(resamples):
        values = []
        for domain, clusters in units.items():
            pool = list(clusters.values())
            drawn = [rng.choice(pool) for _ in pool]
            replicate = sum(sum(u) for u in drawn) / sum(len(u) for u in drawn)
            m = len(pool)
            rescaled = observed[domain] + (replicate - observed[domain]) * math.sqrt(m / (m - 1))
            per_domain[domain].append(rescaled)
            values.append(rescaled)
        macro.append(sum(values) / len(values))
    return macro, per_domain


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    return ordered[low] + (ordered[min(low + 1, len(ordered) - 1)] - ordered[low]) * (position - low)


def test_every_number_of_the_record_is_recomputed_independently(tmp_path: Path) -> None:
    items = paired_items(3, effect=0.12, clusters=4)
    items[5] = replace(items[5], base=(), trained=(), error="verifier_error")  # excluded from both arms
    info = run_info(resamples=4000, items=len(items) + 8)  # 8 suite items were never scored: a partial run
    record = write_run(tmp_path, items, info, WHEN)
    path = record_path(tmp_path, record.environment, record.run_id)
    data, listed = json.loads(path.read_text()), json.loads(items_path(path).read_text())
    assert data["complete"] is False and record.complete is False
    assert listed["excluded"] == [{"id": items[5].item, "domain": items[5].domain, "reason": "verifier_error"}]
    assert data["domains"][items[5].domain]["excluded"] == 1
    scored = [i for i in items if i.error is None]
    means = {i.item: (sum(i.base) / 4, sum(i.trained) / 4) for i in scored}
    assert {row["id"]: (row["base"], row["trained"]) for row in listed["items"]} == means  # quarters: exact
    by_domain: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for item in scored:
        by_domain[item.domain].append(means[item.item])
    for domain, pairs in by_domain.items():
        stated = data["domains"][domain]
        assert stated["items"] == len(pairs)
        assert stated["base"] == pytest.approx(sum(b for b, _ in pairs) / len(pairs))
        assert stated["trained"] == pytest.approx(sum(t for _, t in pairs) / len(pairs))
        assert stated["delta"] == pytest.approx(stated["trained"] - stated["base"])
    macro = data["macro"]
    assert macro["delta"] == pytest.approx(sum(d["delta"] for d in data["domains"].values()) / 8)
    assert macro["base"] == pytest.approx(sum(d["base"] for d in data["domains"].values()) / 8)
    assert macro["normalized_gain"] == pytest.approx(macro["delta"] / (1 - macro["base"]))
    replicates, per_domain = naive_bootstrap(listed["items"], 4000, seed=11)
    # intervals: Δ ± t · se, se the bootstrap's spread, t at the units' degrees of freedom (Satterthwaite's for the
    # macro: its own formula here, and scipy's t quantile)
    tolerance = 0.05  # relative Monte-Carlo error of two independent 4,000-resample standard errors, with room
    units = {d: len({r["cluster"] for r in listed["items"] if r["domain"] == d}) for d in per_domain}
    shares = {d: statistics.variance(values) / 64 for d, values in per_domain.items()}
    df = sum(shares.values()) ** 2 / sum(v**2 / (units[d] - 1) for d, v in shares.items())
    assert macro["df"] == pytest.approx(df, rel=2 * tolerance)
    assert macro["se"] == pytest.approx(statistics.stdev(replicates), rel=tolerance)
    half = stats.t.ppf(0.975, macro["df"]) * macro["se"]
    assert macro["interval"] == pytest.approx([macro["delta"] - half, macro["delta"] + half], abs=1e-12)
    for domain, values in per_domain.items():
        stated = data["domains"][domain]
        assert (stated["units"], stated["clustered"]) == (units[domain], True)
        assert stated["se"] == pytest.approx(statistics.stdev(values), rel=tolerance)
        half = stats.t.ppf(0.975, units[domain] - 1) * stated["se"]
        assert stated["interval"] == pytest.approx([max(-1, stated["delta"] - half), min(1, stated["delta"] + half)],
                                                   abs=1e-12)
    verdict = "improves" if macro["interval"][0] > 0 else "hurts" if macro["interval"][1] < 0 else \
        "no_detectable_change"
    assert data["verdict"] == verdict == "improves"
    assert 1 / 4001 <= macro["p_value"] < 0.01  # (the naive sign-flip comparison is the next test)


def test_the_p_value_matches_a_naive_sign_flip_test() -> None:
    items = paired_items(8, effect=0.03, clusters=3, per_domain=9)
    data, listed = build_run(items, run_info(resamples=4000, items=len(items)), WHEN)
    rng = random.Random(5)
    units: dict[tuple[str, object], float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for row in listed["items"]:
        units[(row["domain"], row["cluster"])] += row["trained"] - row["base"]
        counts[row["domain"]] += 1
    weights = [total / counts[domain] / len(counts) for (domain, _), total in units.items()]
    observed = abs(sum(weights))
    beyond = sum(abs(sum(w if rng.random() < 0.5 else -w for w in weights)) >= observed - 1e-12
                 for _ in range(4000))
    assert data["macro"]["p_value"] == pytest.approx((1 + beyond) / 4001, abs=0.03)
    assert 0.01 < data["macro"]["p_value"] < 0.99  # a p-value that says something


@pytest.mark.parametrize(("change", "message"), [
    (lambda items: [replace(items[0], trained=(1.0,) * 3), *items[1:]], "needs 4 rewards"),
    (lambda items: [replace(items[0], base=(1.5, 0, 0, 0)), *items[1:]], "needs 4 rewards in [0, 1]"),
    (lambda items: [items[0], *items], "given more than once"),
    (lambda items: [replace(items[0], domain="cooking"), *items[1:]], "not an arena domain"),
    (lambda items: [replace(i, error="verifier_error") for i in items], "nothing to summarise"),
])
def test_inconsistent_rewards_are_refused(change: callable, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_run(change(paired_items(1)), run_info(), WHEN)


def test_the_record_is_written_items_first_and_only_when_valid(tmp_path: Path) -> None:
    bad = run_info(adapter_digest="not a digest")
    with pytest.raises(Exception, match="adapter_digest"):
        write_run(tmp_path, paired_items(1), bad, WHEN)
    assert not list(tmp_path.rglob("*.json"))
    record = write_run(tmp_path, paired_items(1), run_info(), WHEN)
    folder = tmp_path / record.environment
    assert sorted(p.name for p in folder.iterdir()) == [f"{record.run_id}.items.json", f"{record.run_id}.json"]
    text = (folder / f"{record.run_id}.items.json").read_text()
    assert "finance/" not in text  # item ids are hashes, not the names they came from


def test_the_in_domain_lift_travels_from_the_manifest_to_the_record_and_the_pr_comment(tmp_path: Path) -> None:
    from bot.job_comments import results_body
    from launch.state import JobRecord
    from scoring.score_run import in_domain_summary

    manifest_lift = {"instances": [4, 9, 12], "excluded": [], "samples": 2, "lift": 0.1667, "interval": [0.0, 0.3333],
                     "base_mean": 0.3333, "trained_mean": 0.5, "confidence": 0.95, "line": "in-domain lift …"}
    summary = in_domain_summary(manifest_lift)
    assert summary == {"lift": 0.1667, "interval": [0.0, 0.3333], "samples": 2, "base_mean": 0.3333,
                       "trained_mean": 0.5, "confidence": 0.95, "instances": 3, "excluded": 0}
    info = run_info()
    info = replace(info, training=replace(info.training, in_domain=summary, preflight="go: 5/8 groups of 8 carry "
                                          "signal (share 0.24–0.91, threshold 0.10), 64 samples"))
    record = write_run(tmp_path, paired_items(1), info, WHEN)
    assert record.in_domain == summary and record.preflight.startswith("go: 5/8")
    job = JobRecord("ledger-reconciliation", "a" * 40, "succeeded", "local", "maintainer", "x", "x", 1, "arena-job")
    body = results_body(record, None, job, {})
    assert "In-domain lift **+16.7 points** (95% interval [+0.0, +33.3]) on 3 held-out instance(s)" in body
    assert "Pre-flight: go: 5/8 groups" in body
    plain = write_run(tmp_path / "plain", paired_items(1), run_info(), WHEN)
    assert plain.in_domain is None and "In-domain" not in results_body(plain, None, job, {})
