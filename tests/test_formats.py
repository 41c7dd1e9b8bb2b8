"""Each data format's typed class is held to its JSON Schema: what the class writes validates, the schema's property
names are the class's fields (or the keys its writer emits), and reading what was written gives the object back."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields, replace
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from scoring.items import ItemScores
from scoring.record import build_items, build_run
from scoring.results import parse_record
from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.rules.dynamic import ARENA702
from tests.support.scoring import paired_items, run_info
from training.recipe import SECTIONS, Generation, Vllm, load_recipe, recipe_names, recipe_schema
from validators.report import PackageReport, Report, report_schema

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
    read = Report.from_dict(json.loads(json.dumps(written)))
    assert read.to_dict() == written
    assert read.packages[0].diagnostics == package.diagnostics and not read.passed


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
    assert recipe.grpo.steps == recipe["grpo"]["steps"] and load_recipe(name, steps=3).grpo.steps == 3


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
