"""Static checks beyond each rule's own examples (those run in tests/test_rules.py): where findings point, and
scripts in verifier data."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskpkg.paths import AGENT_LOG_PATHS, find_agent_log_path
from taskpkg.rules import rule
from tests.support.packages import make_valid_package
from validators.static import run_static_checks
from validators.static.oracle_source import PYTHON_LOGIC, has_logic_in_code

TASK = "task.md"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def test_valid_package_passes_every_check(package: Path) -> None:
    report = run_static_checks(package)
    assert report.passed, [d.to_dict() for d in report.diagnostics]
    assert {d.check_id for d in report.diagnostics} == {"ARENA402", "ARENA404"}  # notes: tag-only, apt unpinned
    assert {c["status"] for c in report.check_outcomes()} == {"passed", "noted"}


def test_lines_point_at_the_problem(package: Path) -> None:
    rule("ARENA110").failing.apply(package)
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA110"]
    line = (package / TASK).read_text().split("\n")[finding.line - 1]
    assert line.startswith("dificulty:")
    assert "Did you mean 'difficulty'" in finding.fix


def test_scene_errors_point_at_the_scene_line(package: Path) -> None:
    rule("ARENA205").failing.apply(package)
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA205"]
    assert "section: Openin}" in (package / TASK).read_text().split("\n")[finding.line - 1]
    assert "Did you mean 'Opening'" in finding.fix


def test_each_placeholder_is_reported_once_with_its_line(tmp_path: Path) -> None:
    from taskpkg.scaffold import scaffold

    package = scaffold("fresh-task", "healthcare", tmp_path)
    placeholders = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA202"]
    expected = sum(
        text.count("TODO(arena)") for path in package.rglob("*") if path.is_file() for text in [path.read_text()]
    )
    assert len(placeholders) == expected >= 5
    for finding in placeholders:
        assert "TODO(arena)" in (package / finding.file).read_text().split("\n")[finding.line - 1]
    assert {d.check_id for d in run_static_checks(package).diagnostics if d.severity.value == "error"} == {"ARENA202"}


@pytest.mark.parametrize(("line", "check_id"), [
    ("curl -fsSL https://example.com/x.sh | bash", "ARENA407"),
    ("pip install pytest==8.0.0", "ARENA504"),
    ("uvx pytest /tests", "ARENA504"),
])
def test_scripts_in_verifier_data_are_checked(package: Path, line: str, check_id: str) -> None:
    script = package / "instance" / "run_tests.sh"
    script.write_text(f"#!/bin/sh\n# a comment: pip install is fine here\n{line}\n")
    found = [d for d in run_static_checks(package).diagnostics if d.check_id == check_id]
    assert [(d.file, d.line) for d in found] == [("instance/run_tests.sh", 3)]


@pytest.mark.parametrize(("base", "case"), [
    ("FROM debian", "untagged"), ("FROM debian:latest", "latest"), ("ARG BASE\nFROM $BASE", "argument"),
])
def test_each_way_of_not_pinning_the_base_image_is_named(package: Path, base: str, case: str) -> None:
    dockerfile = package / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM debian:bookworm-slim", base))
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA401"]
    template = rule("ARENA401").messages[case].text
    assert finding.message == template.format(image=base.split()[-1])


def test_unpinned_requirements_file_names_its_line(package: Path) -> None:
    (package / "environment" / "requirements.txt").write_text("numpy==2.1.3\n# pinned above\npandas\n")
    dockerfile = package / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("WORKDIR", "RUN pip install -r requirements.txt\nWORKDIR"))
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA403"]
    assert finding.message == "environment/requirements.txt:3: 'pandas' has no exact version"
    assert finding.file == "environment/Dockerfile"


# --- the textual pre-checks that spare a syntax tree never disagree with it ------------------------------------------


def _python_sources() -> list[Path]:
    """Real Python to try the pre-checks on: the arena's own and the standard library's."""
    stdlib = Path(ast.__file__).parent
    return sorted(ROOT.glob("[a-z]*/**/*.py")) + sorted(stdlib.glob("*.py"))


@pytest.mark.slow  # parses some 500 files
def test_logic_found_in_code_is_logic_in_the_syntax_tree() -> None:
    checked = decided = 0
    for path in _python_sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        checked += 1
        if has_logic_in_code(text):
            decided += 1
            assert any(isinstance(node, PYTHON_LOGIC) for node in ast.walk(tree)), path
    assert checked > 300 and decided > checked // 2, (checked, decided)


def test_logic_in_strings_and_comments_is_not_logic() -> None:
    for text, logic in [('print("for x in y")  # if x == 1', False), ("'''for\nx'''\nprint(1)", False),
                        ('x = "a\\\n if b"\nprint(x)', False), ("fortune = tries_ + x.if_", False),
                        ("async def main(): pass", True), ("x = [a for a in b]", True), ("y = a >= b", True)]:
        assert has_logic_in_code(text) is logic, text


@settings(max_examples=120, deadline=None)
@given(st.lists(st.sampled_from(["agent", "/logs/agent", "/logs/agent/x", "agent_trajectory.json", "agent-log",
                                 "xagent_trajectory.jsonl", "/agent_logs", "/agent-log", ".bash_history", "agent.log",
                                 "my-agent.log", "agent.logger", " ", "/", ".", "-", "_", "x", "\n", "logs"]),
                max_size=14))
def test_the_fast_agent_log_search_finds_what_the_pattern_finds(parts: list[str]) -> None:
    text = "".join(parts)
    slow, fast = AGENT_LOG_PATHS.search(text), find_agent_log_path(text)
    assert (slow and slow.span()) == (fast and fast.span())


def test_a_verifier_that_only_names_a_network_module_is_not_parsed_for_it(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path)
    verifier = package / "verifier.py"
    verifier.write_text(verifier.read_text() + '\nNOTE = "refund requests and http status words"\n')
    assert not [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA503"]
    verifier.write_text(verifier.read_text() + "import os, \\\n    requests  # noqa: F401\n")
    assert [d.line for d in run_static_checks(package).diagnostics if d.check_id == "ARENA503"] != []
