"""Guarded install fallbacks resolved at import: where a source's test script installs its tools only behind a guard
it documents (BenchFlow's BENCHFLOW_SKIP_VERIFIER_DEPS, a `command -v` check), `arena import` installs those tools in
the image at build time, pinned, sets the switch for the verifier and comments the installing branch out; the tests
then run without a network. Unguarded installs stay errors, with the Dockerfile line to add in the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interop import import_task
from interop.map.guards import guarded_installs
from tests.fixtures.interop.episodes import native_episode, provide_pytest
from tests.fixtures.interop.minibox import Minibox, available
from tests.support.packages import edit
from tests.support.wheelhouse import Wheelhouse
from validators.static import run_static_checks

pytestmark = pytest.mark.usefixtures("pip_registry")
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
OPTIONS = {"github": "fixture-author", "license": "MIT"}
BLOCK = "# >>> arena import: the tools the tests installed at verification time"
needs_minibox = pytest.mark.skipif(available() is not None, reason=f"no minibox here: {available()}")


def copy(fixture: str, tmp_path: Path) -> Path:
    task = tmp_path / "src" / fixture.split("/")[1]
    shutil.copytree(FIXTURES / fixture, task)
    return task


def errors(package: Path) -> list[tuple[str, str | None, int | None]]:
    return [(d.check_id, d.file, d.line) for d in run_static_checks(package).diagnostics
            if d.severity.value == "error"]


def extra_env(package: Path) -> dict:
    text = (package / "verifier.py").read_text()
    return json.loads(text.split("\nEXTRA_ENV = ", 1)[1].split("\n", 1)[0])


def block(package: Path) -> list[str]:
    lines = (package / "environment" / "Dockerfile").read_text().split("\n")
    return lines[lines.index(next(line for line in lines if line.startswith(BLOCK))):] if any(
        line.startswith(BLOCK) for line in lines) else []


@pytest.mark.parametrize(("script", "expected"), [
    ('if [ "${BENCHFLOW_SKIP_VERIFIER_DEPS:-0}" = "1" ]; then\n  pytest -q\nelse\n  uvx --with pytest==8.4.1 pytest\n'
     'fi\n', (4, 4, "BENCHFLOW_SKIP_VERIFIER_DEPS", (), ("pytest==8.4.1", "pytest"))),
    ('P="${PYTEST:-pytest}"\nif [ "$SKIP_TEST_DEPS" == 1 ] || command -v "$P" >/dev/null 2>&1; then\n  "$P"\nelse\n'
     '  pip install pytest\nfi\n', (5, 5, "SKIP_TEST_DEPS", ("pytest",), ("pytest",))),
    ('if [ "${HARBOR_SKIP_INSTALL:-}" != "true" ]; then\n  apt-get install -y jq\nfi\njq . x\n',
     (2, 2, "HARBOR_SKIP_INSTALL", (), ())),
    ('if [ -z "$SKIP_DEPS" ]; then\n  pip3 install --break-system-packages pytest==8.4.1 numpy==2.2.6\nfi\n',
     (2, 2, "SKIP_DEPS", (), ("pytest==8.4.1", "numpy==2.2.6"))),
    ('if ! command -v pytest > /dev/null; then\n  python3 -m pip install pytest==8.3.4\nfi\n',
     (2, 2, None, ("pytest",), ("pytest==8.3.4",))),
    ('if python3 -c "import yaml" 2>/dev/null; then\n  :\nelse\n  uv pip install --system pyyaml==6.0.2\nfi\n',
     (4, 4, None, ("yaml",), ("pyyaml==6.0.2",))),
])
def test_guards_the_import_reads(script: str, expected: tuple) -> None:
    [found] = guarded_installs(script)
    assert (found.first, found.last, found.switch, found.tools, found.python) == expected
    assert found.resolvable


@pytest.mark.parametrize("script", [
    'if [ "$DEBUG" = "1" ]; then\n  pip install pytest\nfi\n',  # not a documented install switch
    'if [ "$SKIP_DEPS" = "1" ] || ! command -v pytest; then\n  pytest\nelse\n  pip install pytest\nfi\n',  # mixed
    'if command -v pytest; then\n  pytest\nelse\n  echo "no pytest" >&2\nfi\n',  # installs nothing
    'if command -v pytest; then\n  pytest\nfi\n',  # no fallback at all
])
def test_conditions_that_are_not_install_guards(script: str) -> None:
    assert guarded_installs(script) == []


def test_the_switch_is_set_the_tools_baked_pinned_and_the_branch_commented_out(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "benchflow" / "memo-header", tmp_path, **OPTIONS)
    package = result.package_path
    assert block(package) == [
        f"{BLOCK} (verifier_data/test.sh:10-13),", "# installed at build time: the verifier has no network.",
        "RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir pytest==8.4.1",
        "# <<< arena import", ""]
    assert extra_env(package)["BENCHFLOW_SKIP_VERIFIER_DEPS"] == "1"
    script = (package / "verifier_data" / "test.sh").read_text().split("\n")
    assert script[7] == '  "$PYTEST_BIN" -q "$VERIFIER_DIR/test_outputs.py"', "the branch that runs stays"
    assert all(line.lstrip().startswith(": # arena import, installed at build time instead:") for line in script[9:13])
    [entry] = [e for e in result.report.mapped if e.startswith("verifier_data/test.sh:10-13")]
    assert "environment/Dockerfile installs pytest==8.4.1 at build time" in entry
    assert "verifier.py sets BENCHFLOW_SKIP_VERIFIER_DEPS=1" in entry
    assert errors(package) == []


def test_a_switch_around_the_install_itself(tmp_path: Path, pip_registry: Wheelhouse) -> None:
    pip_registry.add("pandas", "2.3.3", ">=3.9")  # the image's own unpinned install is pinned in the same pass
    package = import_task(FIXTURES / "benchflow" / "stock-count", tmp_path, **OPTIONS).package_path
    script = (package / "verifier_data" / "test.sh").read_text().split("\n")
    assert script[6] == "  : # arena import, installed at build time instead: pip3 install --break-system-packages " \
                        "pytest==8.4.1"
    assert script[9] == '"$PYTEST_BIN" -q "${BENCHFLOW_VERIFIER_DIR:-/verifier}/test_outputs.py"'
    assert "RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir pytest==8.4.1" in block(package)
    assert "RUN pip3 install --break-system-packages pandas==2.3.3" in \
        (package / "environment" / "Dockerfile").read_text()
    assert extra_env(package)["BENCHFLOW_SKIP_VERIFIER_DEPS"] == "1"
    assert errors(package) == []


def test_tools_the_image_already_installs_are_not_installed_again(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "benchflow" / "meter-drift", tmp_path, **OPTIONS)
    assert block(result.package_path) == []
    assert extra_env(result.package_path)["BENCHFLOW_SKIP_VERIFIER_DEPS"] == "1"
    assert any("environment/Dockerfile already installs pytest" in e for e in result.report.mapped)
    assert not [e for e in errors(result.package_path) if e[0] in ("ARENA504", "ARENA407")]


def test_a_non_root_image_installs_as_root_and_gets_its_user_back(tmp_path: Path) -> None:
    task = copy("benchflow/memo-header", tmp_path)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "USER 1000\n")
    package = import_task(task, tmp_path / "out", **OPTIONS).package_path
    assert [line for line in block(package) if line.startswith("USER")] == ["USER root", "USER 1000"]


def test_an_image_without_pip_gets_it_from_apt(tmp_path: Path) -> None:
    task = copy("benchflow/memo-header", tmp_path)
    edit(task / "environment" / "Dockerfile", "python3 python3-pip", "python3")
    package = import_task(task, tmp_path / "out", **OPTIONS).package_path
    assert "RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf " \
           "/var/lib/apt/lists/*" in block(package)


def test_a_fallback_the_image_cannot_stand_in_for_stays_with_a_todo(tmp_path: Path) -> None:
    task = copy("benchflow/memo-header", tmp_path)
    edit(task / "verifier" / "test.sh", "curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh",
         "curl -LsSf https://example.org/get-checker.sh | sh")
    result = import_task(task, tmp_path / "out", **OPTIONS)
    assert block(result.package_path) == [] and "BENCHFLOW_SKIP_VERIFIER_DEPS" not in extra_env(result.package_path)
    assert any(e.startswith("verifier_data/test.sh:10-13: the install fallback") and "stays: line 11 pipes a "
               "download other than uv's installer into a shell" in e for e in result.report.todo)
    assert ("ARENA407", "verifier_data/test.sh", 11) in errors(result.package_path)


def test_a_tool_check_whose_branch_does_not_install_the_tool_stays(tmp_path: Path) -> None:
    task = copy("benchflow/ticket-triage", tmp_path)
    edit(task / "environment" / "Dockerfile", "RUN pip install --no-cache-dir pytest==8.3.4\n", "")
    edit(task / "verifier" / "test.sh", "uvx --with pytest==8.3.4 pytest", "uvx --with pytest-xdist==3.8.0 pyunit")
    result = import_task(task, tmp_path / "out")
    assert any("stays: it installs no pytest" in e for e in result.report.todo)
    assert [c for c, _, _ in errors(result.package_path)] == ["ARENA407", "ARENA504"]


def test_an_unguarded_install_stays_an_error_whose_fix_names_the_dockerfile_line(tmp_path: Path) -> None:
    package = import_task(FIXTURES / "harbor" / "port-audit", tmp_path).package_path
    fixes = {d.line: d.fix for d in run_static_checks(package).diagnostics if d.check_id == "ARENA504"}
    assert "`RUN python3 -m pip install --no-cache-dir pytest==8.4.1`" in fixes[5]
    assert "`RUN apt-get update && apt-get install -y curl`" in fixes[2]
    assert "delete this line" in fixes[6]


@pytest.mark.slow
@needs_minibox
@pytest.mark.parametrize("fixture", ["benchflow/memo-header", "benchflow/meter-drift", "benchflow/stock-count"])
def test_the_imported_tests_score_without_a_network(tmp_path: Path, fixture: str) -> None:
    """The minibox has no network: the verifier reaches its tests only through the branch that needs none."""
    package = import_task(FIXTURES / fixture, tmp_path / "packages", **OPTIONS).package_path
    for solve, reward in ((True, 1.0), (False, 0.0)):
        box = Minibox(tmp_path / f"box-{solve}")
        env = provide_pytest(box)
        runner = box.path("/opt/pytest-lib/bin/pytest")
        runner.parent.mkdir(parents=True)
        runner.write_text('#!/bin/sh\nexec python3 -m pytest -p no:cacheprovider "$@"\n')
        runner.chmod(0o755)
        outcome = native_episode(box, package, solve=solve,
                                 env={**env, "BENCHFLOW_PYTEST_BIN": "/opt/pytest-lib/bin/pytest"})
        assert outcome.reward == reward, outcome.output
