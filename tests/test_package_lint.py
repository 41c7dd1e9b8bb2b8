"""ARENA008 and ARENA010: `arena check` runs the repository's own lint (ruff, pyproject.toml's settings) on a package's
Python. Correctness is an error, house style a warning that `arena fix` fixes; the repository's `ruff check .` agrees
on packages under environments/."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from taskpkg.digest import package_digest
from taskpkg.python_lint import PACKAGES_GLOB, RUFF_SETTINGS, STYLE_RULES, ruff_binary
from taskpkg.rules import RULES, Category, Rule
from tests.support.packages import make_valid_package
from validators.static import run_static_checks, run_static_checks_many
from validators.static.files import walk
from validators.static.lint import NOT_LINTED, LintUnavailable, fix_package, lint_packages

ROOT = Path(__file__).resolve().parent.parent
# What the lint finds in each, and whether it is an error (correctness) or a warning (house style).
WRONG = "def total(values):\n    unused = len(values)\n    return sum(values) + missing\n"
STYLISH = "import os\nimport sys\n\n\ndef f(x):\n    if x == None:\n        return 1\n    return 2\n"


def lint_findings(package: Path, rule: str = "ARENA008") -> list[tuple[str, int, str]]:
    return [(d.file, d.line, d.message) for d in run_static_checks(package).diagnostics if d.check_id == rule]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def test_the_settings_are_the_repositorys() -> None:
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    lint = dict(ruff["lint"])
    per_path = lint.pop("per-file-ignores")
    assert {**{k: v for k, v in ruff.items() if k not in ("extend-exclude", "lint")}, "lint": lint} == RUFF_SETTINGS
    assert ruff["extend-exclude"] == [f"environments/*/{NOT_LINTED.rstrip('/')}"]
    assert PACKAGES_GLOB in per_path and all(ignored == list(STYLE_RULES) for ignored in per_path.values())


def test_correctness_is_an_error_at_its_line(package: Path) -> None:
    (package / "instance" / "helpers.py").write_text(WRONG)
    report = run_static_checks(package)
    found = [(d.line, d.severity.value, d.message) for d in report.diagnostics if d.check_id == "ARENA008"]
    assert found == [(2, "error", "ruff F841: Local variable `unused` is assigned to but never used"),
                     (3, "error", "ruff F821: Undefined name `missing`")]
    assert not report.passed


def test_house_style_is_a_warning_with_arena_fix_as_the_fix(package: Path) -> None:
    (package / "instance" / "helpers.py").write_text(STYLISH)
    report = run_static_checks(package, "environments/sample-task")
    found = [(d.line, d.severity.value, d.message, d.fix) for d in report.diagnostics if d.check_id == "ARENA010"]
    assert [(line, severity, message) for line, severity, message, _ in found] == [
        (1, "warning", "ruff F401: `os` imported but unused"), (2, "warning", "ruff F401: `sys` imported but unused"),
        (6, "warning", "ruff E711: Comparison to `None` should be `cond is None`")]
    assert "arena fix environments/sample-task" in found[0][3]
    assert "ruff rule E711" in found[2][3]
    assert report.passed


def test_a_broken_generator_is_one_syntax_finding_and_the_verifier_is_arena501s(package: Path) -> None:
    (package / "instance" / "generate.py").write_text("def main(:\n    pass\nx = (\n")
    (package / "verifier.py").write_text("def score(:\n")
    report = run_static_checks(package)
    assert [(d.check_id, d.file, d.line) for d in report.diagnostics if d.check_id in ("ARENA008", "ARENA501")] \
        == [("ARENA008", "instance/generate.py", 1), ("ARENA501", "verifier.py", 1)]


def test_the_images_own_files_are_not_linted(package: Path) -> None:
    (package / "environment" / "tool.py").write_text("import os\nprint(missing)\n")
    assert lint_findings(package) == lint_findings(package, "ARENA010") == []


def test_many_packages_are_linted_in_one_run_each_finding_in_its_own(tmp_path: Path) -> None:
    packages = [make_valid_package(tmp_path / "environments", f"task-{n}") for n in range(3)]
    (packages[1] / "oracle" / "solve.py").write_text((packages[1] / "oracle" / "solve.py").read_text() + "print(y)\n")
    (packages[2] / "oracle" / "solve.py").write_text((packages[2] / "oracle" / "solve.py").read_text() + "import re\n")
    reports = run_static_checks_many(packages)
    lint = ("ARENA008", "ARENA010")
    assert [[(d.check_id, d.file) for d in r.diagnostics if d.check_id in lint] for r in reports] == [
        [], [("ARENA008", "oracle/solve.py")], [("ARENA010", "oracle/solve.py"), ("ARENA010", "oracle/solve.py")]]
    assert [r.passed for r in reports] == [True, False, True]


def test_a_package_outside_the_repository_is_judged_the_same(package: Path, tmp_path: Path) -> None:
    generator = package / "instance" / "generate.py"
    generator.write_text(generator.read_text() + "x = 1  # longer than the repository's 120 columns " + "." * 80 + "\n")
    elsewhere = tmp_path / "far" / "away"
    shutil.copytree(package, elsewhere / package.name)
    (elsewhere / "ruff.toml").write_text("line-length = 200\n")  # a config near a package changes nothing
    assert lint_findings(package, "ARENA010") == lint_findings(elsewhere / package.name, "ARENA010") != []


def _repository_ruff(repo: Path) -> subprocess.CompletedProcess[str]:
    """The repository's CI lint (`ruff check .` with pyproject.toml) in a copy of the repository's settings."""
    return subprocess.run([ruff_binary(), "check", "--no-cache", "."], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize(("text", "arena_passes"), [(STYLISH, True), (WRONG, False)], ids=["style", "correctness"])
def test_the_repositorys_ruff_rejects_a_package_exactly_when_arena_check_does(tmp_path: Path, text: str,
                                                                               arena_passes: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    package = make_valid_package(repo / "environments")
    (package / "instance" / "helpers.py").write_text(text)
    (package / "environment" / "tool.py").write_text(WRONG)  # the image's files: neither lints them
    assert run_static_checks(package).passed is arena_passes
    assert (_repository_ruff(repo).returncode == 0) is arena_passes


def test_arena_fix_applies_the_safe_fixes_and_formatter_and_reports_what_is_left(package: Path) -> None:
    fix_package(package)  # the filled-in scaffold's generator keeps an empty docstring line the formatter joins
    helper = package / "instance" / "helpers.py"
    helper.write_text("import sys\nimport os\nclass Table:\n    rows = []\n    def size(self):\n"
                      "        return len( self.rows )\n")
    untouched = (package / "verifier.py").read_bytes()
    outcome = fix_package(package, "environments/sample-task")
    assert outcome.changed == ["instance/helpers.py"]
    assert helper.read_text() == ("class Table:\n    rows = []\n\n    def size(self):\n"
                                  "        return len(self.rows)\n")
    assert [(d.check_id, d.file, d.line, d.message) for d in outcome.left] == [
        ("ARENA010", "instance/helpers.py", 2, "ruff RUF012: Mutable default value for class attribute")]
    assert (package / "verifier.py").read_bytes() == untouched
    assert fix_package(package).changed == []  # a second run changes nothing


def test_arena_fix_command_exit_codes(package: Path) -> None:
    (package / "instance" / "helpers.py").write_text(STYLISH)
    runner = CliRunner()
    fixed = runner.invoke(cli, ["fix", str(package)])
    assert fixed.exit_code == 0, fixed.output
    assert "instance/helpers.py" in fixed.output and "1 finding(s) left" in fixed.output
    assert "warning ARENA010  instance/helpers.py:2:13  ruff E711" in fixed.output  # an unsafe fix: not applied
    (package / "instance" / "helpers.py").write_text(WRONG)
    broken = runner.invoke(cli, ["fix", str(package)])
    assert broken.exit_code == 1
    assert "instance/helpers.py:3:26" in broken.output and "ARENA008" in broken.output
    assert runner.invoke(cli, ["fix", str(package.parent / "nothing-here")]).exit_code == 2


def test_a_broken_ruff_is_the_installations_fault(package: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "ruff"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'not json'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr("taskpkg.python_lint.ruff_binary", lambda: os.fspath(fake))
    with pytest.raises(LintUnavailable, match="reinstall the arena"):
        lint_packages([walk(package)])


DYNAMIC_EXAMPLES = [r for r in RULES.values() if r.category is Category.DYNAMIC and not r.failing.situation]


@pytest.mark.parametrize("rule", DYNAMIC_EXAMPLES, ids=lambda r: r.id)
def test_dynamic_examples_pass_the_lint_so_arena_check_reaches_them(tmp_path: Path, rule: Rule) -> None:
    package = make_valid_package(tmp_path / "environments")
    rule.failing.apply(package)
    assert lint_findings(package) == []


def test_a_large_batch_spread_over_processes_is_reported_as_a_small_one(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    packages = [make_valid_package(tmp_path / "environments", f"task-{n}") for n in range(4)]
    (packages[1] / "instance" / "helpers.py").write_text(WRONG)
    (packages[2] / "instance" / "helpers.py").write_text(STYLISH)
    (packages[3] / "verifier.py").write_text("def score(:\n")
    one_by_one = run_static_checks_many(packages, workers=1)
    monkeypatch.setattr("validators.static.PARALLEL_FROM", 2)  # a pool of two processes, the lint after them
    spread = run_static_checks_many(packages, workers=2)
    untimed = [[{**r.to_dict(), "duration_ms": 0} for r in reports] for reports in (spread, one_by_one)]
    assert untimed[0] == untimed[1]
    assert [r.passed for r in spread] == [True, False, True, False]
    assert [d.check_id for d in spread[3].diagnostics if d.severity.value == "error"] == ["ARENA501", "ARENA505"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})


def test_git_is_asked_once_for_a_batch_and_says_what_it_says_for_each(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    packages = [make_valid_package(repo / "environments", f"task-{n}") for n in range(3)]
    (repo / ".gitattributes").write_text("environments/task-1/**/*.py text eol=crlf\n")
    (packages[2] / ".gitattributes").write_text("*.md export-ignore\n")
    _git(repo, "init", "-q")
    one_by_one = [run_static_checks(package) for package in packages]
    calls = []
    real = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda command, *a, **k: calls.append(command[:4]) or real(command, *a, **k))
    batch = run_static_checks_many(packages, workers=1)
    assert [c for c in calls if c[:1] == ["git"]] == [["git", "-C", str(repo / "environments"), "check-attr"]]
    found = [[(d.check_id, d.file) for d in r.diagnostics if d.check_id == "ARENA009"] for r in batch]
    assert found == [[(d.check_id, d.file) for d in r.diagnostics if d.check_id == "ARENA009"] for r in one_by_one]
    assert found[0] == [] and found[2] == [("ARENA009", ".gitattributes")]
    assert found[1] and all(file.endswith(".py") and not file.startswith("task-1") for _, file in found[1])
    monkeypatch.setattr("validators.static.PARALLEL_FROM", 2)  # the same from a pool of processes
    spread = run_static_checks_many(packages, workers=2)
    assert [[(d.check_id, d.file) for d in r.diagnostics if d.check_id == "ARENA009"] for r in spread] == found


def test_the_reports_digest_is_the_package_digest_without_reading_twice(package: Path) -> None:
    (package / "instance" / "notes").mkdir()
    (package / "instance" / "notes" / "a.txt").write_text("a\n")
    (package / "instance" / "run.sh").write_text("#!/bin/sh\necho\n")
    (package / "instance" / "run.sh").chmod(0o755)
    (package / "instance" / "latest.txt").symlink_to("notes/a.txt")
    (package / "instance" / "notes-link").symlink_to("notes")
    (package / "instance" / "stale.pyc").write_bytes(b"\x00compiled")
    (package / "instance" / "__pycache__").mkdir()
    (package / "instance" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert run_static_checks(package).digest == package_digest(package)
