"""Each data format's typed class is held to its JSON Schema: what the class writes validates, the schema's property
names are the class's fields (or the keys its writer emits), and reading what was written gives the object back."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields, replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from launch.job_status import JobStatus, PhaseRun, PhaseStatus, RunnerStatus, Segment
from launch.state import JobState
from scoring.items import ItemScores
from scoring.record import build_items, build_run
from scoring.results import parse_record
from taskpkg.atomic_files import write_json_atomic
from taskpkg.check_report import (
    CheckOutcome,
    CheckStatus,
    PackageReport,
    Report,
    ReportFormatError,
    Trial,
    TrialOutcome,
    read_check_report,
    report_schema,
)
from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.rules import RULES
from taskpkg.rules.dynamic import ARENA702
from taskpkg.run_manifest import RunStatus, TrainingManifest
from tests.support.scoring import paired_items, run_info
from training.recipe import SECTIONS, Generation, Vllm, load_recipe, recipe_names, recipe_schema

WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def _schema(package: str, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(resources.files(package).joinpath(f"schema/{name}").read_text())
    return loaded


def _node(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """The object schema at a path of property names (`[]` steps into an array's items), references followed."""
    node = schema
    for step in path:
        node = node["items"] if step == "[]" else node["properties"][step]
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _valid(schema: dict[str, Any], data: object) -> None:
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(data)]
    assert not errors, errors


def _held_to(schema: dict[str, Any], data: dict[str, Any], *path: str) -> None:
    """Every key written is a property of the schema, and every required property is written."""
    node = _node(schema, *path)
    assert set(data) <= set(node["properties"]), (path, set(data) - set(node["properties"]))
    assert set(node.get("required", ())) <= set(data), (path, set(node["required"]) - set(data))


def _fields_are_properties(kind: type, node: dict[str, Any], nullable_written: bool = False) -> None:
    """A class's fields are exactly the schema's properties; the required ones are those without a default (or,
    for a writer that writes every field, null included, all of them)."""
    names = {f.name for f in fields(kind)}
    required = names if nullable_written else {
        f.name for f in fields(kind) if f.default is MISSING and f.default_factory is MISSING}
    assert names == set(node["properties"]), (kind.__name__, names ^ set(node["properties"]))
    assert required == set(node.get("required", ())), (kind.__name__, required ^ set(node.get("required", ())))


def test_the_items_file_is_its_schema() -> None:
    schema = _schema("scoring", "items-v1.schema.json")
    items = paired_items(1)
    scores = build_items([*items[:-1], replace(items[-1], error="base_error")], run_info(items=len(items)))
    assert len(scores.excluded) == 1
    written = scores.to_json()
    _valid(schema, written)
    _held_to(schema, written)
    _held_to(schema, written["items"][0], "items", "[]")
    _held_to(schema, written["excluded"][0], "excluded", "[]")
    assert ItemScores.from_json(json.loads(json.dumps(written)), "items") == scores


def test_the_results_record_is_its_schema() -> None:
    schema = _schema("scoring", "results-v2.schema.json")
    info = run_info(items=len(paired_items(2)))
    record, items = build_run(paired_items(2), info, WHEN)
    _valid(schema, record)
    _held_to(schema, record)
    for block in ("base_model", "suite", "evaluation", "macro", "statistics", "training", "contamination"):
        _held_to(schema, record[block], block)
    assert parse_record(json.loads(json.dumps(record)), "record").raw == record
    assert ItemScores.from_json(items, "items", parse_record(record, "record")).run_id == record["run_id"]


def test_the_check_report_is_its_schema() -> None:
    schema = report_schema()
    finding = ARENA702.found("oracle/solve.sh", 3, case="storage", agent="oracle", instance=0, problem="bad")
    trial = {"check_id": "ARENA702", "agent": "oracle", "instance": 7, "outcome": "failed", "reward": 0.0,
             "duration_s": 1.25}
    package = PackageReport("environments/x", "x", "A title", "finance", 100,
                            [finding, Diagnostic("ARENA202", Severity.INFO, "note", "none")], ["ARENA702"], 12.0,
                            [trial], digest="sha256:" + "a" * 64)
    report = Report("full", [package], started_at=WHEN, duration_s=3.5)
    written = report.to_dict()
    _valid(schema, written)
    _held_to(schema, written)
    _held_to(schema, written["packages"][0], "packages", "[]")
    _fields_are_properties(Diagnostic, _node(schema, "packages", "[]", "diagnostics", "[]"), nullable_written=True)
    _fields_are_properties(CheckOutcome, _node(schema, "packages", "[]", "checks", "[]"))
    _fields_are_properties(Trial, _node(schema, "packages", "[]", "trials", "[]"))
    read = read_check_report(json.loads(json.dumps(written)))
    assert read.to_dict() == written and read == Report.from_dict(written)
    assert read.packages[0].diagnostics == package.diagnostics and not read.passed
    assert read.packages[0].trial_records() == [Trial("ARENA702", "oracle", 7, TrialOutcome.FAILED, 1.25, reward=0.0)]
    assert read.packages[0].check_records() == [
        CheckOutcome("ARENA202", RULES["ARENA202"].title, CheckStatus.NOTED),
        CheckOutcome("ARENA702", RULES["ARENA702"].title, CheckStatus.FAILED)]


@pytest.mark.parametrize(("change", "where"), [
    (lambda r: r.update(report_version=2), "report_version"),
    (lambda r: r.update(mode="quick"), "mode"),
    (lambda r: r["packages"][0]["trials"][0].update(outcome="exploded"), "packages/0/trials/0/outcome"),
    (lambda r: r["packages"][0].update(verdict="pass"), "packages/0"),
    (lambda r: r.update(verdict="pass"), "verdict"),
    (lambda r: r.update(started_at="yesterday"), "started_at"),
])
def test_the_check_report_reader_refuses_what_breaks_it_and_names_the_place(change: Any, where: str) -> None:
    finding = ARENA702.found("oracle/solve.sh", 3, case="storage", agent="oracle", instance=0, problem="bad")
    trial = {"check_id": "ARENA702", "agent": "oracle", "instance": 0, "outcome": "failed", "duration_s": 1.0}
    data = Report("full", [PackageReport("environments/x", "x", "t", "finance", 4, [finding], ["ARENA702"], 1.0,
                                         [trial])], started_at=WHEN).to_dict()
    data = json.loads(json.dumps(data))
    change(data)
    with pytest.raises(ReportFormatError) as refused:
        read_check_report(data)
    assert refused.value.where == where, refused.value


def test_every_recipe_section_is_its_schema() -> None:
    schema = recipe_schema()
    for name, kind in SECTIONS.items():
        _fields_are_properties(kind, _node(schema, name))
    _fields_are_properties(Vllm, _node(schema, "generation", "vllm"))
    typed = set(SECTIONS) | {"name"}
    assert set(schema["properties"]) - typed == {"recipe_version", "description"}  # kept in data, not sections


@pytest.mark.parametrize("name", recipe_names())
def test_a_shipped_recipe_reads_into_its_typed_sections(name: str) -> None:
    recipe = load_recipe(name)
    for section in SECTIONS:
        written = recipe.data.get(section, {})
        typed = getattr(recipe, section)
        for key, value in written.items():
            got = getattr(typed, key)
            if isinstance(value, list):
                assert got == tuple(value)
            elif isinstance(got, Vllm):
                assert {f.name: getattr(got, f.name) for f in fields(Vllm)} == value
            else:
                assert got == value, (name, section, key)
    assert isinstance(recipe.generation, Generation)
    assert recipe.grpo.steps == recipe.data["grpo"]["steps"] and load_recipe(name, steps=3).grpo.steps == 3


def test_the_results_modules_import_one_way() -> None:
    """results ← items ← record ← verify, with no import back up (not even inside a function)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "scoring"
    order = ["results", "items", "record", "verify"]
    for at, name in enumerate(order):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = {node.module.removeprefix("scoring.") for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scoring.")}
        assert not imported & set(order[at:]), (name, imported & set(order[at:]))


def _finished_manifest(adapter: bool) -> TrainingManifest:
    """A manifest as training.run fills it in, to the end of a run that trained (with or without an adapter)."""
    manifest = TrainingManifest(
        environment="x", package_digest="sha256:" + "b" * 64, commit=None,
        recipe={"name": "cpu-small", "source": "training/recipes/cpu-small.yaml", "digest": "c" * 16,
                "overrides": {"grpo.steps": 3}, "data": {"grpo": {"steps": 3}}},
        base_model={"name": "m", "revision": "r", "path": "/m", "source": "hub"},
        seeds={"shuffle_seed": 1, "train_instances": 8, "heldout": [3, 9]}, libraries={"python": "3.11.9"},
        hardware={"machine": "x86_64", "cpus": 2, "gpus": []}, started_at="2026-12-01T00:00:00Z", image="img:1",
        preflight={"skipped": True})
    manifest.resumed_from_step = 2
    manifest.steps, manifest.trainer_summary, manifest.reward_curve = 3, {"train_loss": 0.1}, [(1, 0.5), (3, 0.75)]
    manifest.update_evidence = {"effective": adapter}
    if adapter:
        manifest.adapter, manifest.in_domain = {"path": "adapter", "digest": "sha256:" + "d" * 64}, None
    manifest.finished_at, manifest.wall_s, manifest.gpus = "2026-12-01T01:00:00Z", 60.5, 0
    manifest.total_wall_s, manifest.gpu_hours, manifest.segments = 61.0, 0.0, 2
    manifest.status = RunStatus.COMPLETED if adapter else RunStatus.NO_EFFECTIVE_UPDATE
    manifest.reason = None if adapter else "no effective update"
    return manifest


@pytest.mark.parametrize("adapter", [True, False])
def test_the_training_manifest_is_its_schema(adapter: bool, tmp_path: Path) -> None:
    schema = _schema("taskpkg", "training-manifest-v1.schema.json")
    manifest = _finished_manifest(adapter)
    written = manifest.to_json()
    assert ("in_domain" in written) == adapter and written["commit"] is None and "reason" in written
    _valid(schema, json.loads(json.dumps(written)))
    _held_to(schema, written)
    assert {f.name for f in fields(TrainingManifest)} == set(schema["properties"])
    manifest.write(tmp_path / "manifest.json")
    assert TrainingManifest.read(tmp_path / "manifest.json") == replace(
        manifest, reward_curve=[list(pair) for pair in manifest.reward_curve or []])
    write_json_atomic(tmp_path / "as-a-dict.json", written, sort_keys=True)  # the bytes the dict writer gave
    assert (tmp_path / "manifest.json").read_bytes() == (tmp_path / "as-a-dict.json").read_bytes()


def test_a_partial_or_broken_manifest_reads_as_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text(json.dumps({"status": "stopped", "reason": "guard", "extra": 1}))
    read = TrainingManifest.read(tmp_path / "m.json")
    assert read is not None and read.status is RunStatus.STOPPED and read.reason == "guard" and read.steps is None
    (tmp_path / "m.json").write_text("[1]")
    assert TrainingManifest.read(tmp_path / "m.json") is None and TrainingManifest.read(tmp_path / "no.json") is None


def test_the_job_status_file_is_its_schema(tmp_path: Path) -> None:
    schema = _schema("launch", "job-status-v1.schema.json")
    status = JobStatus(segments=[Segment("2026-12-01T00:00:00Z", 12.5), Segment("2026-12-01T01:00:00Z", 3.0)])
    status.status, status.spec, status.restarts, status.started_at = RunnerStatus.RUNNING, "{}", 1, "t0"
    status.phases["gate"] = PhaseRun(PhaseStatus.DONE, 4.0, 0)
    status.phases["train"] = PhaseRun(PhaseStatus.STOPPED, 8.0, -1)
    status.gpu_hours, status.updated_at = 0.0, "t1"
    assert "reason" in status.to_json() and "finished_at" not in status.to_json()  # cleared at the start: null
    status.status, status.reason, status.finished_at = RunnerStatus.STOPPED, "over its wall-clock ceiling", "t2"
    written = status.to_json()
    _valid(schema, json.loads(json.dumps(written)))
    _held_to(schema, written)
    phase = schema["$defs"]["phase"]
    assert set(written["phases"]["train"]) == set(phase["properties"]) == set(phase["required"])
    assert {f.name for f in fields(JobStatus)} == set(schema["properties"])
    assert {f.name for f in fields(PhaseRun)} == set(schema["$defs"]["phase"]["properties"])
    assert {f.name for f in fields(Segment)} == set(schema["$defs"]["segment"]["properties"])
    status.write(tmp_path / "job.json")
    assert JobStatus.read(tmp_path / "job.json") == status and status.wall_s == 15.5
    assert RunnerStatus.STOPPED.job_state is JobState.FAILED and JobStatus().to_json() == {"phases": {}}
    (tmp_path / "job.json").write_text(json.dumps({"phases": {"gate": {"status": "unknown"}}}))
    assert JobStatus.read(tmp_path / "job.json") is None  # unreadable: the runner starts afresh, as before
