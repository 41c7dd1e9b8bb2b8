"""Every accepted number recomputed: a record whose numbers its items file does not give is refused, naming the
field, wherever a record someone else wrote is accepted (a job's result, a results folder)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scoring.items import items_path
from scoring.record import build_run, write_run
from scoring.results import ResultsError, record_path
from scoring.verify import accept_job_result, check_numbers, load_checked
from tests.support.scoring import paired_items, run_info

WHEN = datetime(2026, 12, 1, tzinfo=UTC)
COMMIT = "a" * 40


@pytest.fixture(scope="module")
def honest() -> tuple[dict, dict]:
    record, items = build_run(paired_items(5, effect=0.05), run_info("refund-desk"), WHEN)
    return record, items


def test_an_honest_record_is_recomputed_exactly(honest: tuple[dict, dict]) -> None:
    record, items = honest
    check_numbers(record, items, "job")
    data, listed, parsed = accept_job_result({"record": record, "items": items}, "refund-desk", COMMIT, "job")
    assert (data, listed, parsed.run_id) == (record, items, record["run_id"])


FORGERIES = [
    ("macro/interval/0", lambda r, i: r["macro"].update(interval=[r["macro"]["interval"][0] + 0.01,
                                                                  r["macro"]["interval"][1]])),
    ("macro/p_value", lambda r, i: r["macro"].update(p_value=r["macro"]["p_value"] / 3)),
    ("macro/se", lambda r, i: r["macro"].update(se=r["macro"]["se"] * 0.5)),
    ("macro/df", lambda r, i: r["macro"].update(df=r["macro"]["df"] + 40)),
    ("verdict", lambda r, i: r.update(verdict="improves" if r["verdict"] != "improves" else "hurts")),
    ("domains/healthcare/se", lambda r, i: r["domains"]["healthcare"].update(se=0.001)),
    ("domains/finance/units", lambda r, i: r["domains"]["finance"].update(units=2)),
    ("domains/finance/se", lambda r, i: r["statistics"].update(seed=r["statistics"]["seed"] + 1)),  # another seed
    ("domains/finance/base", lambda r, i: i["items"][0].update(base=1.0 - i["items"][0]["base"])),  # items edited
]


@pytest.mark.parametrize(("field", "forge"), FORGERIES)
def test_a_forged_record_is_refused_naming_the_field(honest: tuple[dict, dict], field: str, forge: callable) -> None:
    record, items = copy.deepcopy(honest)
    forge(record, items)
    with pytest.raises(ResultsError) as refused:
        accept_job_result({"record": record, "items": items}, "refund-desk", COMMIT, "job log")
    message = str(refused.value)
    assert message.startswith("job log"), message
    # an edited item: its domain's means disagree with the record's before any recomputation
    assert f": {field}: the record says" in message or f"domain {field.split('/')[1]}:" in message, message


def test_a_job_result_without_its_items_is_refused(honest: tuple[dict, dict]) -> None:
    with pytest.raises(ResultsError, match="no items file"):
        accept_job_result({"record": honest[0]}, "refund-desk", COMMIT, "job")


def test_a_complete_record_that_excludes_items_is_refused(tmp_path: Path) -> None:
    items = paired_items(6)
    items[3] = type(items[3])(items[3].item, items[3].domain, items[3].cluster, error="base_error")
    written = write_run(tmp_path, items, run_info(items=len(items)), WHEN)
    assert not written.complete
    path = record_path(tmp_path, written.environment, written.run_id)
    data = json.loads(path.read_text())
    data["complete"] = True
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="complete: the record says true but its items file excludes 1 item"):
        load_checked(tmp_path)


def test_a_results_folder_is_read_with_every_number_checked(tmp_path: Path) -> None:
    first = write_run(tmp_path, paired_items(1), run_info("aa-env"), WHEN)
    write_run(tmp_path, paired_items(2), run_info("bb-env"), WHEN)
    runs = load_checked(tmp_path)
    assert [r.record.environment for r in runs] == ["aa-env", "bb-env"] and all(r.items for r in runs)
    path = record_path(tmp_path, "aa-env", first.run_id)
    data = json.loads(path.read_text())
    data["macro"]["p_value"] = 0.0123
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"aa-env/[0-9a-f]+\.json: macro/p_value: the record says 0\.0123"):
        load_checked(tmp_path)
    items_path(path).unlink()
    with pytest.raises(ResultsError, match="no items file"):
        load_checked(tmp_path)
