"""ARENA008: `arena check` runs the repository's own lint (ruff, pyproject.toml's settings) on a package's Python,
so a package that passes here passes the repository's CI."""

from __future__ import annotations

import os
import shutil
import stat
import tomllib
from pathlib import Path

import pytest

from taskpkg.rules import RULES, Category, Rule
from tests.support.packages import make_valid_package
from validators.static import run_static_checks, run_static_checks_many
from validators.static.files import walk
from validators.static.lint import NOT_LINTED, RUFF_SETTINGS, LintUnavailable, lint_packages

ROOT = Path(__file__).resolve().parent.parent


def lint_findings(package: Path) -> list[tuple[str, int, str]]:
    return [(d.file, d.line, d.message) for d in run_static_checks(package).diagnostics if d.check_id == "ARENA008"]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def test_the_settings_are_the_repositorys() -> None:
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    assert {k: v for k, v in ruff.items() if k != "extend-exclude"} == RUFF_SETTINGS
    assert ruff["extend-exclude"] == [f"environments/*/{NOT_LINTED.rstrip('/')}"]


def test_each_problem_is_found_at_its_line_with_the_way_to_fix_it(package: Path) -> None:
    helper = package / "instance" / "helpers.py"
    helper.write_text("import os\n\n\ndef f(x):\n    if x == None:\n        return 1\n    return 2\n")
    found = [(d.line, d.message, d.fix) for d in run_static_checks(package).diagnostics if d.check_id == "ARENA008"]
    assert [(line, message) for line, message, _ in found] == [
        (1, "ruff F401: `os` imported but unused"), (5, "ruff E711: Comparison to `None` should be `cond is None`")]
    assert "ruff check --fix instance/helpers.py" in found[0][2]
    assert "ruff rule E711" in found[1][2]


def test_a_broken_generator_is_one_syntax_finding_and_the_verifier_is_arena501s(package: Path) -> None:
    (package / "instance" / "generate.py").write_text("def main(:\n    pass\nx = (\n")
    (package / "verifier.py").write_text("def score(:\n")
    report = run_static_checks(package)
    assert [(d.check_id, d.file, d.line) for d in report.diagnostics if d.check_id in ("ARENA008", "ARENA501")] \
        == [("ARENA008", "instance/generate.py", 1), ("ARENA501", "verifier.py", 1)]


def test_the_images_own_files_are_not_linted(package: Path) -> None:
    (package / "environment" / "tool.py").write_text("import os\n")
    assert lint_findings(package) == []


def test_many_packages_are_linted_in_one_run_each_finding_in_its_own(tmp_path: Path) -> None:
    packages = [make_valid_package(tmp_path / "environments", f"task-{n}") for n in range(3)]
    (packages[1] / "oracle" / "solve.py").write_text((packages[1] / "oracle" / "solve.py").read_text() + "import re\n")
    reports = run_static_checks_many(packages)
    assert [[(d.check_id, d.file) for d in r.diagnostics if d.check_id == "ARENA008"] for r in reports] == [
        [], [("ARENA008", "oracle/solve.py"), ("ARENA008", "oracle/solve.py")], []]
    assert [r.passed for r in reports] == [True, False, True]


def test_a_package_outside_the_repository_is_judged_the_same(package: Path, tmp_path: Path) -> None:
    generator = package / "instance" / "generate.py"
    generator.write_text(generator.read_text() + "x = 1  # longer than the repository's 120 columns " + "." * 80 + "\n")
    elsewhere = tmp_path / "far" / "away"
    shutil.copytree(package, elsewhere / package.name)
    (elsewhere / "ruff.toml").write_text("line-length = 200\n")  # a config near a package changes nothing
    assert lint_findings(package) == lint_findings(elsewhere / package.name) != []


def test_a_broken_ruff_is_the_installations_fault(package: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "ruff"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'not json'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr("validators.static.lint._ruff", lambda: os.fspath(fake))
    with pytest.raises(LintUnavailable, match="reinstall the arena"):
        lint_packages([walk(package)])


DYNAMIC_EXAMPLES = [r for r in RULES.values() if r.category is Category.DYNAMIC and not r.failing.situation]


@pytest.mark.parametrize("rule", DYNAMIC_EXAMPLES, ids=lambda r: r.id)
def test_dynamic_examples_pass_the_lint_so_arena_check_reaches_them(tmp_path: Path, rule: Rule) -> None:
    package = make_valid_package(tmp_path / "environments")
    rule.failing.apply(package)
    assert lint_findings(package) == []
