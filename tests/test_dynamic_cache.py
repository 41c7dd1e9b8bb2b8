"""The dynamic-results cache: reused only while every byte, the arena and the engine are unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskpkg.loader import load_package
from tests.support.packages import make_valid_package
from validators.dynamic.cache import cache_key, load, save

ARENA = str(Path(sys.executable).parent / "arena")


def test_key_changes_with_any_byte_the_engine_or_the_settings(tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    package = load_package(root).package
    assert package is not None
    key = cache_key(package, "20.10", {"instances": 3})
    assert key == cache_key(package, "20.10", {"instances": 3})
    assert key != cache_key(package, "24.0", {"instances": 3})
    assert key != cache_key(package, "20.10", {"instances": 2})
    (root / "instance" / "data.txt").write_text("x")
    assert key != cache_key(package, "20.10", {"instances": 3})
    before = cache_key(package, "20.10", {"instances": 3})
    os.chmod(root / "verifier.py", 0o755)
    assert cache_key(package, "20.10", {"instances": 3}) != before


def test_damaged_entries_count_as_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_CHECK_CACHE", str(tmp_path))
    assert load("missing") is None
    (tmp_path / "broken.json").write_text("{not json")
    assert load("broken") is None
    save("good", [], [{"check_id": "ARENA702"}])
    assert load("good")[1] == [{"check_id": "ARENA702"}]  # type: ignore[index]  # saved just above


def test_recheck_of_an_unchanged_package_reuses_results(engine: object, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")

    def check(*extra: str) -> dict:
        done = subprocess.run([ARENA, "check", "--format", "json", "--instances", "1", *extra, str(root)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)["packages"][0]

    first = check()
    assert first["dynamic_cached_at"] is None and first["trials"]
    again = check()
    assert again["dynamic_cached_at"] is not None and again["trials"] == first["trials"]
    assert again["duration_ms"] < first["duration_ms"] / 5
    forced = check("--no-cache")
    assert forced["dynamic_cached_at"] is None
    (root / "oracle" / "solve.py").write_text((root / "oracle" / "solve.py").read_text() + "\n# changed\n")
    assert check()["dynamic_cached_at"] is None
