"""Pins at import: a Python package a source's Dockerfile installs without an exact version is pinned to the newest
version that satisfies the source's constraint, for the base image's Python, by pip's own resolver (here against a
local index that pip reads as it reads PyPI); where no registry answers, a to-do names the package."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from interop import import_task
from interop.write.pins import base_python, unpinned_in
from tests.support.wheelhouse import Wheelhouse
from validators.static import run_static_checks

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
OPTIONS = {"github": "fixture-author", "license": "MIT"}


@pytest.fixture
def registry(pip_registry: Wheelhouse) -> Wheelhouse:
    for name, version, python in (("requests", "2.31.0", None), ("requests", "2.32.3", None),
                                  ("numpy", "1.26.4", ">=3.9"), ("numpy", "2.1.0", ">=3.10"),
                                  ("uvicorn", "0.30.0", None), ("pytest", "8.3.4", None), ("pytest", "8.4.1", None)):
        pip_registry.add(name, version, python)
    return pip_registry


def task_installing(tmp_path: Path, base: str, run: str) -> Path:
    task = tmp_path / "src" / "meter-drift"
    shutil.copytree(FIXTURES / "benchflow" / "meter-drift", task)
    (task / "environment" / "Dockerfile").write_text(f"FROM {base}\n{run}\nWORKDIR /root\n"
                                                     "COPY readings.csv /root/readings.csv\n")
    return task


def pin_findings(package: Path) -> list[tuple[int | None, str]]:
    return [(d.line, d.message) for d in run_static_checks(package).diagnostics if d.check_id == "ARENA403"]


@pytest.mark.slow  # pip's resolver, a second or more a run
def test_unpinned_packages_are_pinned_to_the_newest_that_fits(registry: Wheelhouse, tmp_path: Path) -> None:
    task = task_installing(tmp_path, "python:3.12-slim", "RUN pip install --no-cache-dir pytest==8.4.1 requests \\\n"
                           "    'numpy<2' \"uvicorn[standard]>=0.29\"")
    result = import_task(task, tmp_path / "out", **OPTIONS)
    dockerfile = (result.package_path / "environment" / "Dockerfile").read_text().split("\n")
    assert dockerfile[1:3] == ["RUN pip install --no-cache-dir pytest==8.4.1 requests==2.32.3 \\",
                               "    'numpy==1.26.4' \"uvicorn[standard]==0.30.0\""]
    assert "environment/Dockerfile:2: pip installs 'requests' without an exact version: pinned to requests==2.32.3, " \
           "the newest that satisfies it for Python 3.12 (the base image's) (pip's resolver, at import)" \
           in result.report.mapped
    assert pin_findings(result.package_path) == []


@pytest.mark.slow  # pip's resolver, a second or more a run
@pytest.mark.parametrize(("base", "numpy"), [("python:3.9-slim", "1.26.4"), ("python:3.12-slim", "2.1.0"),
                                             ("ubuntu:24.04", "2.1.0"), ("debian:bullseye-slim", "1.26.4")])
def test_the_base_images_python_decides(registry: Wheelhouse, tmp_path: Path, base: str, numpy: str) -> None:
    task = task_installing(tmp_path, base, "RUN python3 -m pip install numpy")
    package = import_task(task, tmp_path / "out", **OPTIONS).package_path
    assert (package / "environment" / "Dockerfile").read_text().split("\n")[1] == \
        f"RUN python3 -m pip install numpy=={numpy}"


@pytest.mark.slow  # pip's resolver, a second or more a run
def test_without_a_registry_the_package_is_a_todo_and_the_check_points_at_it(registry: Wheelhouse,
                                                                                tmp_path: Path) -> None:
    task = task_installing(tmp_path, "python:3.12-slim", "RUN pip install requests nowhere-to-be-found")
    result = import_task(task, tmp_path / "out", **OPTIONS)
    assert (result.package_path / "environment" / "Dockerfile").read_text().split("\n")[1] == \
        "RUN pip install requests==2.32.3 nowhere-to-be-found", "one missing package costs the others nothing"
    assert "environment/Dockerfile:2: pip installs 'nowhere-to-be-found' without an exact version, and pip's " \
           "resolver found none to pin it to (no registry answered, or no release fits): pin it (NAME==VERSION) so " \
           "rebuilds are identical" in result.report.todo
    assert pin_findings(result.package_path) == [
        (2, "Python package 'nowhere-to-be-found' is installed without an exact version")]


@pytest.mark.slow  # pip's resolver, a second or more a run
def test_a_tool_the_tests_installed_unpinned_is_baked_pinned(registry: Wheelhouse, tmp_path: Path) -> None:
    task = tmp_path / "src" / "memo-header"
    shutil.copytree(FIXTURES / "benchflow" / "memo-header", task)
    script = task / "verifier" / "test.sh"
    script.write_text(script.read_text().replace("uvx --with pytest==8.4.1 pytest", "uvx pytest"))
    package = import_task(task, tmp_path / "out", **OPTIONS).package_path
    assert "RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir pytest==8.4.1" in \
        (package / "environment" / "Dockerfile").read_text()


def test_what_the_pins_read() -> None:
    text = ("FROM python:3.11\nRUN pip install a==1 b 'c>=2' ./local.whl $EXTRA \\\n  && uv pip install --system d\n"
            "RUN <<EOF\npip install e\nEOF\n")
    assert unpinned_in(text) == [(2, 3, "b"), (2, 3, "c>=2"), (2, 3, "d"), (5, 5, "e")]
    assert [base_python(b) for b in ("python:3.10-slim", "docker.io/library/python:3.13", "ubuntu:22.04",
                                     "debian:bookworm-slim", "alpine:3.20", None)] == \
        ["3.10", "3.13", "3.10", "3.11", None, None]
