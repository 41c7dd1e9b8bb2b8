"""Results records: version 2 written and read back, version 1 still read, untrusted files refused by name."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scoring.items import items_path, load_items
from scoring.record import write_record, write_run
from scoring.results import ResultsError, comparable_key, parse_record
from scoring.verify import load_records
from tests.support.scoring import LIBRARIES, SAMPLING, SUITE_DIGEST, paired_items, run_info

WHEN = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def v1(environment: str, **extra: object) -> dict:
    return {"results_version": 1, "environment": environment, "model": "Qwen/Qwen3-8B", "evaluated_at": "2026-11-30",
            "domains": {"finance": {"base": 0.4, "trained": 0.5}, "healthcare": {"base": 0.2, "trained": 0.1}},
            **extra}


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, Path]:
    """A results folder holding one version-2 run; returns (folder, record file)."""
    record = write_run(tmp_path / "results", paired_items(1, effect=0.2), run_info(), WHEN)
    return tmp_path / "results", tmp_path / "results" / record.environment / f"{record.run_id}.json"


def test_a_written_run_reads_back_with_every_field(written: tuple[Path, Path]) -> None:
    folder, path = written
    [record] = load_records(folder)
    info = run_info()
    assert record.version == 2 and path.stem == record.run_id and path.parent.name == "ledger-reconciliation"
    assert (record.base_model, record.base_revision, record.suite, record.suite_version) == (
        "Qwen/Qwen3-8B", "b" * 40, "sample", "1.0.0")
    assert comparable_key(record) == ("sample", "1.0.0", SUITE_DIGEST, "Qwen/Qwen3-8B", "b" * 40, 4,
                                      "full/agents-chat-1", json.dumps(SAMPLING, sort_keys=True), 0.95)
    assert (record.suite_digest, record.harness_version, record.raw["libraries"]) == (
        SUITE_DIGEST, "full/agents-chat-1", LIBRARIES)
    assert record.raw["evaluation"] == {"retries": 2, "errors": {"base": {"retried": 0, "unresolved": 0},
                                                                 "trained": {"retried": 0, "unresolved": 0}}}
    assert record.commit == "a" * 40 and record.evaluated_at == "2026-12-01T12:00:00Z" and record.complete
    assert [d.items for d in record.domains] == [24] * 8 and record.domains[0].domain == "finance"
    assert record.macro_interval is not None and record.macro_interval[0] <= record.macro_delta
    assert record.contamination == "pass" and record.steps == info.training.steps
    assert record.reward_curve == ((0, 0.2), (100, 0.5), (200, 0.7)) and record.recipe == "grpo-lora"
    assert record.raw == json.loads(path.read_text())
    assert items_path(path).is_file()


def test_the_run_id_is_reproducible_and_changes_with_its_inputs(tmp_path: Path) -> None:
    items = paired_items(2)
    first = write_run(tmp_path / "a", items, run_info(), WHEN)
    again = write_run(tmp_path / "b", items, run_info(), datetime(2027, 1, 1, tzinfo=UTC))
    other = write_run(tmp_path / "c", items, run_info(commit="c" * 40), WHEN)
    assert first.run_id == again.run_id and first.run_id != other.run_id
    assert first.macro_interval == again.macro_interval and first.p_value == again.p_value


def test_version_1_files_are_still_read_beside_version_2(written: tuple[Path, Path]) -> None:
    folder, _ = written
    (folder / "refund-desk.json").write_text(json.dumps(v1("refund-desk")))
    records = {r.environment: r for r in load_records(folder)}
    old = records["refund-desk"]
    assert (old.version, old.run_id, old.macro_interval, old.p_value, old.suite) == (1, "v1-refund-desk", None, None,
                                                                                    None)
    assert old.macro_delta == pytest.approx(0.0) and old.macro_base == pytest.approx(0.3)
    assert [d.domain for d in old.domains] == ["finance", "healthcare"] and old.domains[1].delta == pytest.approx(-0.1)
    assert comparable_key(old) == (None, None, None, "Qwen/Qwen3-8B", None, None, None, None, None)


def test_no_folder_means_no_records(tmp_path: Path) -> None:
    assert load_records(tmp_path / "absent") == [] and load_records(None) == []


def _edit(path: Path, change: callable) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["domains"]["finance"].update(delta=0.5), "domains/finance/delta: is 0.5"),
    (lambda d: d["macro"].update(interval=[0.2, 0.1]), "macro/interval: low 0.2 is above high 0.1"),
    (lambda d: d["macro"].update(delta=d["macro"]["delta"] + 0.01), "macro/delta"),
    (lambda d: d.update(verdict="great"), "verdict"),
    (lambda d: d["suite"].update(items=10), "192 items scored but the suite has 10"),
    (lambda d: d.update(run_id="0" * 16), "belongs at ledger-reconciliation/0000000000000000.json"),
    (lambda d: d.update(environment="refund-desk"), "belongs at refund-desk/"),
    (lambda d: d.update(results_version=1), "results_version 1 belongs at results/<environment>.json"),
    (lambda d: d["domains"].update(cooking=d["domains"]["finance"]), "domains"),
])
def test_an_edited_record_is_refused_naming_the_file_and_field(written: tuple[Path, Path], change: callable,
                                                                message: str) -> None:
    folder, path = written
    _edit(path, change)
    with pytest.raises(ResultsError, match=path.name) as caught:
        load_records(folder)
    assert message in str(caught.value)


@pytest.mark.parametrize("kind", ["symlink", "oversized", "not utf-8", "not json", "fifo"])
def test_files_that_are_not_plain_json_records_are_refused(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    path = folder / "refund-desk.json"
    if kind == "symlink":
        (tmp_path / "elsewhere.json").write_text(json.dumps(v1("refund-desk")))
        path.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "oversized":
        path.write_text(json.dumps(v1("refund-desk")) + " " * (1024 * 1024))
    elif kind == "not utf-8":
        path.write_bytes(b"\xff\xfe{}")
    elif kind == "not json":
        path.write_text("{results_version: 1")
    else:
        os.mkfifo(path)
    with pytest.raises(ResultsError, match=r"refund-desk\.json"):
        load_records(folder)


def test_a_symlinked_environment_folder_is_refused(written: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = written
    (folder / "refund-desk").symlink_to(folder / "ledger-reconciliation")
    with pytest.raises(ResultsError, match="symbolic link"):
        load_records(folder)


def test_a_version_2_record_at_the_top_level_is_refused(written: tuple[Path, Path]) -> None:
    folder, path = written
    (folder / "ledger-reconciliation.json").write_text(path.read_text())
    message = "results_version 2 belongs at results/<environment>/<run_id>.json"
    with pytest.raises(ResultsError, match=re.escape(message)):
        load_records(folder)


def test_write_record_refuses_invalid_data_and_writes_nothing(written: tuple[Path, Path], tmp_path: Path) -> None:
    _, path = written
    data = json.loads(path.read_text())
    items = json.loads(items_path(path).read_text())
    data["macro"]["p_value"] = 2
    with pytest.raises(ResultsError, match="macro/p_value"):
        write_record(tmp_path / "fresh", data, items)
    assert not (tmp_path / "fresh").exists()
    data["macro"]["p_value"] = 0.5
    items["items"][0]["trained"] = 1 - items["items"][0]["trained"]  # now the means disagree with the record
    with pytest.raises(ResultsError, match="domain finance"):
        write_record(tmp_path / "fresh", data, items)
    assert not list((tmp_path / "fresh").rglob("*.json")) if (tmp_path / "fresh").exists() else True


def test_the_items_file_is_checked_against_its_record(written: tuple[Path, Path]) -> None:
    folder, path = written
    [record] = load_records(folder)
    scores = load_items(folder, record)
    assert scores is not None and len(scores.ids) == 192 and scores.samples_per_item == 4
    assert all(len(i) == 16 for i in scores.ids) and scores.excluded == ()
    _edit(items_path(path), lambda d: d.update(run_id="f" * 16))
    with pytest.raises(ResultsError, match="run_id differ"):
        load_items(folder, record)
    _edit(items_path(path), lambda d: (d.update(run_id=record.run_id), d["items"].append(d["items"][0])))
    with pytest.raises(ResultsError, match="appears twice"):
        load_items(folder, record)
    items_path(path).unlink()
    assert load_items(folder, record) is None


def test_parse_record_names_the_source_for_non_objects() -> None:
    with pytest.raises(ResultsError, match=r"^here: \(top level\)"):
        parse_record([1, 2], "here")
