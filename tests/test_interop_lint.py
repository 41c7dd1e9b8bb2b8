"""The import writes lint-clean packages: what `arena import` copies or writes goes through ruff's safe fixes and
formatter with the repository's settings; what no fix removes is a to-do at its line, shown once by `arena import`
(the check reports the same place: ARENA010 a warning, ARENA008 an error)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.interop_commands import import_command
from interop import import_task
from taskpkg.python_lint import lint
from validators.static import run_static_checks

pytestmark = pytest.mark.usefixtures("pip_registry")
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
OPTIONS = {"github": "fixture-author", "license": "MIT"}


def copy(fixture: str, tmp_path: Path) -> Path:
    task = tmp_path / "src" / fixture.split("/")[1]
    shutil.copytree(FIXTURES / fixture, task)
    return task


def test_copied_tests_get_the_fixes_and_formatter_and_the_rest_is_a_todo_at_its_line(tmp_path: Path) -> None:
    source = FIXTURES / "benchflow" / "meter-drift" / "verifier" / "test_outputs.py"
    before = {item.code for item in lint([str(source)])}
    assert {"I001", "F541", "RUF012", "E711", "UP031", "E501"} <= before, "the fixture shows what the import fixes"
    result = import_task(FIXTURES / "benchflow" / "meter-drift", tmp_path, **OPTIONS)
    tests = result.package_path / "verifier_data" / "test_outputs.py"
    text = tests.read_text()
    assert text.startswith("import csv\nimport json\nimport os\nfrom pathlib import Path\n\nANSWER = Path(")
    assert 'assert ANSWER.is_file(), "the agent wrote no drift.json"' in text, "the f-string without fields is fixed"
    left = [(d.line, d.message) for d in run_static_checks(result.package_path).diagnostics if d.check_id == "ARENA010"]
    assert {message.split(":")[0] for _, message in left} == {"ruff RUF012", "ruff SIM115", "ruff E711", "ruff UP031"}
    todo = {entry.split(": ", 1)[0]: entry for entry in result.report.todo if entry.startswith("verifier_data/test_o")}
    assert set(todo) == {f"verifier_data/test_outputs.py:{line}" for line, _ in left}
    assert all("house style, a warning (ARENA010) that no automatic fix removes" in e for e in todo.values())
    assert "verifier_data/test_outputs.py: ruff's safe fixes and formatter applied with the repository's settings " \
           "(what `arena fix` does)" in result.report.mapped, "only the copied file: what the import writes is clean"


def test_code_that_is_wrong_stays_an_error_and_a_todo(tmp_path: Path) -> None:
    task = copy("benchflow/memo-header", tmp_path)
    tests = task / "verifier" / "test_outputs.py"
    tests.write_text(tests.read_text() + "\n\ndef test_footer():\n    assert footer == EXPECTED\n")
    result = import_task(task, tmp_path / "out", **OPTIONS)
    [error] = [d for d in run_static_checks(result.package_path).diagnostics if d.severity.value == "error"]
    assert (error.check_id, error.file, error.message) == ("ARENA008", "verifier_data/test_outputs.py",
                                                           "ruff F821: Undefined name `footer`")
    assert f"verifier_data/test_outputs.py:{error.line}: ruff F821: Undefined name `footer`: an error (ARENA008) " \
           "that no automatic fix removes; change it by hand" in result.report.todo


def test_a_file_shared_with_the_image_is_left_byte_for_byte(tmp_path: Path) -> None:
    """Reformatting the verifier's copy of a file the image also holds would hide that they are one file (a leak,
    or an input shared on purpose) from the check that compares them."""
    task = copy("benchflow/memo-header", tmp_path)
    shutil.copy(task / "verifier" / "test_outputs.py", task / "environment" / "test_outputs.py")
    package = import_task(task, tmp_path / "out", **OPTIONS).package_path
    assert (package / "verifier_data" / "test_outputs.py").read_bytes() == \
        (FIXTURES / "benchflow" / "memo-header" / "verifier" / "test_outputs.py").read_bytes()
    assert "ARENA406" in {d.check_id for d in run_static_checks(package).diagnostics}


def test_arena_import_shows_each_leftover_once(tmp_path: Path) -> None:
    done = CliRunner().invoke(import_command, [str(FIXTURES / "benchflow" / "meter-drift"), "--out", str(tmp_path),
                                               "--github", "fixture-author", "--license", "MIT"],
                              env={"COLUMNS": "200"})
    places = [d.location().rsplit(":", 1)[0] for d in run_static_checks(tmp_path / "meter-drift").diagnostics
              if d.check_id == "ARENA010"]
    assert places and all(done.output.count(place) == 1 for place in places), done.output
