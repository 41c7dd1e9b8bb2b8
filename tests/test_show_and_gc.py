"""`arena show` (the prompt and the files the agent starts with, made in the sandbox) and `arena gc --package NAME
--dry-run`, as a contributor runs them: the installed console script on the real engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from sandbox.containers import Tracker, start_container
from sandbox.engine import new_sandbox_id
from taskpkg.loader import load_package
from tests.support.packages import edit, make_valid_package

ARENA = shutil.which("arena", path=str(Path(sys.executable).parent)) or "arena"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "160"})


@pytest.fixture
def package_dir(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def test_show_renders_the_prompt_and_keeps_the_files(engine: object, package_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "instance-7"
    shown = arena("show", str(package_dir), "--instance", "7", "--out", str(out), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    view = json.loads(shown.stdout)
    numbers = (out / "numbers.txt").read_text().split()
    assert [f["path"] for f in view["files"]] == ["numbers.txt"] and view["files"][0]["size"] > 0
    assert view["prompt_values"] == {"count": len(numbers)}
    (scene,) = view["scenes"]
    assert f"holds {len(numbers)} integers" in scene["text"] and "{{" not in scene["text"]
    human = arena("show", str(package_dir), "--instance", "7")
    assert human.returncode == 0 and "numbers.txt" in human.stdout and f"holds {len(numbers)}" in human.stdout
    again = arena("show", str(package_dir), "--instance", "7", "--out", str(out))
    assert again.returncode == 2 and "is not empty" in again.stderr


def test_show_explains_an_unprinted_placeholder(engine: object, package_dir: Path) -> None:
    edit(package_dir / "task.md", "holds {{ instance.count }} integers", "holds {{ instance.total }} integers")
    shown = arena("show", str(package_dir))
    line = next(n for n, text in enumerate((package_dir / "task.md").read_text().split("\n"), 1) if "total" in text)
    assert shown.returncode == 1 and f"task.md:{line} uses {{{{ instance.total }}}}" in shown.stderr
    assert "it printed: count" in shown.stderr


def test_gc_is_limited_to_one_package_and_lists_first(engine: Any, tmp_path: Path) -> None:
    package = load_package(make_valid_package(tmp_path / "environments")).package
    assert package is not None
    limits = package.limits
    names = [f"gc-test-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    tracker = Tracker(engine)
    mine = {name: start_container(tracker, "debian:bookworm-slim", limits, "agent", new_sandbox_id(), name).id
            for name in names}
    try:
        listed = arena("gc", "--package", names[0], "--dry-run")
        assert listed.returncode == 0 and f"container {mine[names[0]][:12]} (agent, {names[0]})" in listed.stdout
        assert mine[names[1]][:12] not in listed.stdout and "nothing removed" in listed.stdout
        assert {c.id for c in engine.containers.list(all=True, sparse=True)} >= set(mine.values())
        removed = arena("gc", "--package", names[0])
        assert removed.returncode == 0 and "removed 1 container(s)" in removed.stdout
        left = {c.id for c in engine.containers.list(all=True, sparse=True)}
        assert mine[names[0]] not in left and mine[names[1]] in left
    finally:
        tracker.remove_all()
