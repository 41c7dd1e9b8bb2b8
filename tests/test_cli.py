"""The `arena` command as a contributor and CI use it: a real subprocess of the installed console script."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from taskpkg.check_report import report_schema
from taskpkg.rules import RULES
from taskpkg.rules.render import BEGIN, END, table_markdown
from tests.support.packages import fill_in

ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"


def arena(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    merged = {**os.environ, "COLUMNS": "160", **(env or {})}
    return subprocess.run([ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=merged)


@pytest.mark.slow
def test_new_fill_in_check_as_a_contributor_would(tmp_path: Path) -> None:
    created = arena("new", "invoice-matching", "--domain", "finance", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    package = tmp_path / "environments" / "invoice-matching"
    first = arena("check", "--static", "environments/invoice-matching", cwd=tmp_path)
    assert first.returncode == 1
    assert first.stdout.count("ARENA202") >= 5 and "your GitHub handle" in first.stdout
    fill_in(package)
    second = arena("check", "--static", cwd=tmp_path)
    assert second.returncode == 0, second.stdout
    assert "PASS" in second.stdout and "invoice-matching" in second.stdout
    listed = json.loads(arena("list", "--format", "json", cwd=tmp_path).stdout)
    assert listed == [{"name": "invoice-matching", "domain": "finance", "instances": 1000, "status": "ok",
                       "title": "Total the figures in a generated file", "path": "environments/invoice-matching"}]


@pytest.mark.slow
def test_new_refuses_bad_names_domains_and_existing_folders(tmp_path: Path) -> None:
    assert arena("new", "Bad_Name", "--domain", "finance", cwd=tmp_path).returncode == 2
    bad_domain = arena("new", "good-name", "--domain", "coding", cwd=tmp_path)
    assert bad_domain.returncode == 2 and "finance" in bad_domain.stderr
    assert arena("new", "good-name", "--domain", "finance", cwd=tmp_path).returncode == 0
    again = arena("new", "good-name", "--domain", "finance", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_json_report_validates_against_its_schema(tmp_path: Path) -> None:
    arena("new", "demo-task", "--domain", "healthcare", cwd=tmp_path)
    done = arena("check", "--static", "--format", "json", "-o", "report.json", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    Draft202012Validator(report_schema()).validate(report)
    assert report == json.loads((tmp_path / "report.json").read_text())
    (package,) = report["packages"]
    assert package["verdict"] == "fail" and package["counts"]["error"] >= 5
    statuses = {c["check_id"]: c["status"] for c in package["checks"]}
    assert statuses["ARENA202"] == "failed" and statuses["ARENA501"] == "passed"


def test_github_format_annotates_lines_and_writes_the_job_summary(tmp_path: Path) -> None:
    arena("new", "demo-task", "--domain", "healthcare", cwd=tmp_path)
    summary = tmp_path / "summary.md"
    done = arena("check", "--static", "--format", "github", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 1
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=environments/demo-task/task.md,line=4,title=ARENA202") for line in errors)
    text = summary.read_text()
    assert "❌ fail" in text and "Reproduce locally: `arena check --static environments/demo-task`" in text


def test_missing_path_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    done = arena("check", "--static", "nowhere", cwd=tmp_path)
    assert done.returncode == 1 and "ARENA001" in done.stdout and "Traceback" not in done.stderr


def test_schema_command_prints_the_published_schemas(tmp_path: Path) -> None:
    task = json.loads(arena("schema", cwd=tmp_path).stdout)
    Draft202012Validator.check_schema(task)
    assert len(task["properties"]["domain"]["enum"]) == 8
    assert "coding" not in task["properties"]["domain"]["enum"]
    assert task["properties"]["network"]["properties"]["agent"]["const"] == "none"
    Draft202012Validator.check_schema(json.loads(arena("schema", "--report", cwd=tmp_path).stdout))


@pytest.mark.parametrize("command", ["--help", "new --help", "check --help", "list --help", "schema --help",
                                     "explain --help"])
def test_help_documents_exit_codes(tmp_path: Path, command: str) -> None:
    done = arena(*command.split(), cwd=tmp_path)
    assert done.returncode == 0 and "Exit codes" in done.stdout


@pytest.mark.slow
def test_help_lists_every_command_with_its_own_summary_without_importing_the_heavy_ones(tmp_path: Path) -> None:
    import importlib

    from arena.cli import LAZY_COMMANDS

    listing = arena("--help", cwd=tmp_path).stdout
    for name, (module, attribute, summary) in LAZY_COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert summary == command.get_short_help_str(limit=400), f"LAZY_COMMANDS[{name!r}] is not its own summary"
        assert re.search(rf"^  {name} +{re.escape(summary[:30])}", listing, re.MULTILINE), listing
    probe = ("import sys; from arena.cli import cli; from click.testing import CliRunner; "
             "CliRunner().invoke(cli, ['--help']); print(sorted({'scipy', 'torch', 'numpy'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.slow
def test_without_an_engine_dynamic_checks_are_skipped_or_required(tmp_path: Path) -> None:
    arena("new", "demo-task", "--domain", "finance", cwd=tmp_path)
    fill_in(tmp_path / "environments" / "demo-task")
    no_engine = {"ARENA_NO_DOCKER": "1"}
    skipped = arena("check", "--format", "json", cwd=tmp_path, env=no_engine)
    (package,) = json.loads(skipped.stdout)["packages"]
    assert skipped.returncode == 0 and json.loads(skipped.stdout)["mode"] == "static"
    assert [d["check_id"] for d in package["diagnostics"] if d["severity"] == "warning"] == ["ARENA700"]
    required = arena("check", "--dynamic", cwd=tmp_path, env=no_engine)
    assert required.returncode == 3 and "scripts/ensure-engine" in required.stderr


def test_explain_prints_a_rules_doc_examples_and_fix(tmp_path: Path) -> None:
    done = arena("explain", "arena702", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rule = RULES["ARENA702"]
    assert done.stdout.startswith(f"# ARENA702: {rule.title}\n") and rule.advice in done.stdout
    assert "## Failing example" in done.stdout and 'f"{total + 1}\\n"' in done.stdout
    assert "## Passing example" in done.stdout and "dynamic check" in done.stdout


@pytest.mark.slow
def test_explain_refuses_unknown_ids_with_the_nearest_one(tmp_path: Path) -> None:
    done = arena("explain", "ARENA117", cwd=tmp_path)
    assert done.returncode == 2 and "did you mean ARENA116?" in done.stderr and "--list" in done.stderr
    assert arena("explain", cwd=tmp_path).returncode == 2
    assert arena("explain", "--write", "x.md", cwd=tmp_path).returncode == 2


@pytest.mark.slow
def test_explain_lists_every_rule_and_writes_the_contributing_table(tmp_path: Path) -> None:
    listed = arena("explain", "--list", cwd=tmp_path).stdout.splitlines()
    assert [line.split()[:3] for line in listed] == [[r.id, r.category.value, r.severity.value] for r in RULES.values()]
    assert arena("explain", "--markdown", cwd=tmp_path).stdout == table_markdown() + "\n"
    document = tmp_path / "CONTRIBUTING.md"
    document.write_text(f"# Checks\n\n{BEGIN}\n| stale |\n{END}\n\nMore.\n")
    written = arena("explain", "--markdown", "--write", str(document), cwd=tmp_path)
    assert written.returncode == 0 and "updated" in written.stdout
    assert document.read_text() == f"# Checks\n\n{BEGIN}\n{table_markdown()}\n{END}\n\nMore.\n"
    assert "up to date" in arena("explain", "--markdown", "--write", str(document), cwd=tmp_path).stdout
    document.write_text("no markers\n")
    refused = arena("explain", "--markdown", "--write", str(document), cwd=tmp_path)
    assert refused.returncode == 2 and "CONTRIBUTING.md" in refused.stderr and BEGIN in refused.stderr
