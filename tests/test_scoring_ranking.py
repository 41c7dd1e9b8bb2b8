"""Standings: current versus superseded runs, comparable groups only, Benjamini–Hochberg verdicts, ranks with ties,
and rank intervals (joint bootstrap over shared items, or the conservative fallback)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from scoring.items import items_path
from scoring.ranking import standings
from scoring.record import build_run, write_run
from scoring.results import ResultRecord, load_records, parse_record, record_path
from scoring.statistics import benjamini_hochberg
from tests.support.scoring import hex_id, paired_items, run_info

WHEN = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def template() -> ResultRecord:
    data, _ = build_run(paired_items(0), run_info(), WHEN)
    return parse_record(data, "template")


def entry(template: ResultRecord, environment: str, interval: tuple[float, float], p: float,
          when: str = "2026-12-01T00:00:00Z", **changes: object) -> ResultRecord:
    delta = (interval[0] + interval[1]) / 2
    return replace(template, run_id=hex_id(environment + when), environment=environment, macro_delta=delta,
                   macro_interval=interval, p_value=p, evaluated_at=when, **changes)  # type: ignore[arg-type]


def test_the_newest_record_of_an_environment_is_current(template: ResultRecord) -> None:
    old = entry(template, "refund-desk", (0.1, 0.2), 0.001, "2026-11-01T00:00:00Z")
    new = entry(template, "refund-desk", (-0.05, 0.05), 0.9, "2026-12-01T00:00:00+01:00")
    places = standings([new, old])
    assert places[old.run_id].superseded and places[old.run_id].rank is None
    assert places[old.run_id].verdict == "improves"  # its own verdict, kept for the history
    assert not places[new.run_id].superseded and places[new.run_id].verdict == "no_detectable_change"


def test_verdicts_are_controlled_with_benjamini_hochberg(template: ResultRecord) -> None:
    p_values = [0.01, 0.04, 0.045, 0.3, 0.6]  # alone, three are below 0.05
    records = [entry(template, f"env-{i}", (0.01, 0.1), p) for i, p in enumerate(p_values)]
    records.append(entry(template, "env-neg", (-0.2, -0.1), 0.0001))
    places = standings(records)
    q = [places[r.run_id].q_value for r in records]
    # sorted p: .0001 .01 .04 .045 .3 .6 → p·n/rank: .0006 .03 .08 .0675 .36 .6 → running minimum from the top
    assert q == pytest.approx([0.03, 0.0675, 0.0675, 0.36, 0.6, 0.0006])
    verdicts = [places[r.run_id].verdict for r in records]
    assert verdicts == ["improves"] + ["no_detectable_change"] * 4 + ["hurts"]


def test_bh_matches_its_definition_on_random_p_values() -> None:
    p = np.random.default_rng(3).random(60) ** 3
    n = p.size
    expected = [min(1.0, min(p[j] * n / (np.sum(p <= p[j])) for j in range(n) if p[j] >= p[i])) for i in range(n)]
    assert benjamini_hochberg(p) == pytest.approx(expected)


def test_ranks_count_entries_significantly_better_and_ties_share_a_rank(template: ResultRecord) -> None:
    intervals = {"aa-best": (0.10, 0.20), "bb-tied": (0.11, 0.19), "cc-third": (0.02, 0.08),
                 "dd-none": (-0.01, 0.03), "ee-hurts": (-0.2, -0.1)}
    records = [entry(template, name, low_high, 0.5 if name == "dd-none" else 0.001)
               for name, low_high in intervals.items()]
    computed = standings(records)
    places = {r.environment: computed[r.run_id] for r in records}
    assert {n: p.rank for n, p in places.items()} == {"aa-best": 1, "bb-tied": 1, "cc-third": 3, "dd-none": None,
                                                      "ee-hurts": 5}
    assert places["dd-none"].verdict == "no_detectable_change" and places["ee-hurts"].verdict == "hurts"
    # fallback intervals: 1 + certainly better .. n − certainly worse
    assert {n: p.rank_interval for n, p in places.items()} == {
        "aa-best": (1, 2), "bb-tied": (1, 2), "cc-third": (3, 4), "dd-none": (3, 4), "ee-hurts": (5, 5)}


def test_ranks_and_intervals_agree_with_pairwise_counting(template: ResultRecord) -> None:
    rng = np.random.default_rng(5)
    centres = rng.normal(0.05, 0.05, 300)
    widths = rng.uniform(0.01, 0.08, 300)
    records = [entry(template, f"env-{i}", (float(c - w), float(c + w)), 0.0001 if abs(c) > w else 0.5)
               for i, (c, w) in enumerate(zip(centres, widths, strict=True))]
    places = standings(records)
    lows, highs = centres - widths, centres + widths
    for i, record in enumerate(records):
        better = int(np.sum(lows > highs[i]))
        worse = int(np.sum(highs < lows[i]))
        place = places[record.run_id]
        assert place.rank_interval == (1 + better, 300 - worse)
        assert place.rank == (None if place.verdict == "no_detectable_change" else 1 + better)


def test_only_comparable_complete_tested_records_are_ranked_together(template: ResultRecord) -> None:
    a = entry(template, "aa-env", (0.1, 0.2), 0.001)
    b = entry(template, "bb-env", (0.3, 0.4), 0.001, base_revision="c" * 40)  # another base revision
    c = entry(template, "cc-env", (0.5, 0.6), 0.001, suite_version="2.0.0")  # another suite version
    partial = entry(template, "dd-env", (0.5, 0.6), 0.001, complete=False)
    old = replace(entry(template, "ee-env", (0.5, 0.6), 0.001), version=1, macro_interval=None, p_value=None)
    places = standings([a, b, c, partial, old])
    assert [places[r.run_id].rank for r in (a, b, c)] == [1, 1, 1]  # each alone in its group
    assert len({places[r.run_id].group for r in (a, b, c)}) == 3
    assert places[partial.run_id].verdict == "incomplete" and places[partial.run_id].rank is None
    assert places[old.run_id].verdict == "untested" and places[old.run_id].rank_interval is None


def _dominating(items: list, share: float, seed: int) -> list:
    """The same items, with a share of them one more success in the trained arm: better item by item."""
    rng = np.random.default_rng(seed)
    better = []
    for item in items:
        trained = list(item.trained)
        if rng.random() < share and 0.0 in trained:
            trained[trained.index(0.0)] = 1.0
        better.append(replace(item, trained=tuple(trained)))
    return better


def test_the_joint_bootstrap_sees_what_overlapping_intervals_hide(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    base = paired_items(11, effect=0.1)
    write_run(folder, base, run_info("aa-env"), WHEN)
    write_run(folder, _dominating(base, 0.25, 1), run_info("bb-env"), WHEN)
    write_run(folder, paired_items(12, effect=-0.3), run_info("cc-env"), WHEN)
    records = load_records(folder)
    by_name = {r.environment: r for r in records}
    # the intervals overlap: alone they cannot tell a from b
    assert by_name["bb-env"].macro_interval[0] < by_name["aa-env"].macro_interval[1]
    joint = standings(records, folder)
    assert joint[by_name["bb-env"].run_id].rank_interval == (1, 1)
    assert joint[by_name["aa-env"].run_id].rank_interval == (2, 2)
    assert joint[by_name["cc-env"].run_id].rank_interval == (3, 3)
    items_path(record_path(folder, "aa-env", by_name["aa-env"].run_id)).unlink()
    fallback = standings(load_records(folder), folder)
    assert fallback[by_name["bb-env"].run_id].rank_interval == (1, 2)
    assert fallback[by_name["aa-env"].run_id].rank_interval == (1, 2)


def test_runs_whose_items_disagree_fall_back_to_intervals(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    base = paired_items(11, effect=0.1)
    first = write_run(folder, base, run_info("aa-env"), WHEN)
    second = write_run(folder, _dominating(base, 0.25, 1), run_info("bb-env"), WHEN)
    path = items_path(record_path(folder, "bb-env", second.run_id))
    data = json.loads(path.read_text())
    data["items"][0]["cluster"] = None  # one item placed in another cluster than the other run says
    path.write_text(json.dumps(data))
    places = standings(load_records(folder), folder)
    assert places[first.run_id].rank_interval == places[second.run_id].rank_interval == (1, 2)
