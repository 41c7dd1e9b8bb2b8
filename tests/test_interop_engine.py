"""An imported task passes `arena check` end to end on the real engine, as a contributor would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.packages import edit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
ARENA = str(Path(sys.executable).parent / "arena")
# The fixtures' base image is what their authors use; this machine has no registry, so the test swaps it for the
# locally made Debian image with the same interpreter installed. On a machine that can pull, nothing else changes.
LOCAL_BASE = ("FROM debian:bookworm-slim\nRUN apt-get update && apt-get install -y --no-install-recommends python3 "
              "&& rm -rf /var/lib/apt/lists/*")


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "160"})


@pytest.mark.parametrize("source", ["harbor/invoice-total", "benchflow/dose-check"])
def test_imported_task_passes_arena_check(engine: object, tmp_path: Path, source: str) -> None:
    imported = arena("import", str(FIXTURES / source), "--out", "environments", "--github", "octocat",
                     "--license", "MIT", cwd=tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    package = tmp_path / "environments" / source.split("/")[1]
    edit(package / "environment" / "Dockerfile", "FROM python:3.12-slim", LOCAL_BASE)
    checked = arena("check", "--format", "json", str(package), cwd=tmp_path)
    report = json.loads(checked.stdout)
    (result,) = report["packages"]
    errors = [d for d in result["diagnostics"] if d["severity"] == "error"]
    assert checked.returncode == 0 and errors == [], errors
    assert {d["check_id"] for d in result["diagnostics"] if d["severity"] == "warning"} == {"ARENA119"}
    assert report["mode"] == "full" and all(t["outcome"] in ("ok", "skipped") for t in result["trials"])
    assert [t["reward"] for t in result["trials"] if t["agent"] == "oracle"] == [1.0, 1.0]


def test_export_makes_instance_zero_in_the_sandbox(engine: object, tmp_path: Path) -> None:
    """With an engine, `arena export` runs the generator in a container; the result equals a host-side export."""
    from interop import export_harbor

    package = Path(__file__).resolve().parent.parent / "environments" / "ledger-reconciliation"
    done = arena("export", str(package), "--format", "harbor", "--out", str(tmp_path / "sandboxed"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runs on this machine" not in done.stderr
    host = export_harbor(package, tmp_path / "host")
    sandboxed = tmp_path / "sandboxed" / host.name
    files = sorted(p.relative_to(host) for p in host.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(sandboxed) for p in sandboxed.rglob("*") if p.is_file())
    assert all((host / f).read_bytes() == (sandboxed / f).read_bytes() for f in files)
    assert any(f.parts[0] == "environment" and f.name.endswith(".csv") for f in files)


def test_a_separate_verifier_image_gives_the_verifier_its_tools(engine: object, tmp_path: Path) -> None:
    """The tools Harbor's separate verifier image installs are built into the agent's image, so `arena check` (no
    network at verification) finds pytest there and the oracle scores 1. As above, the base image is swapped for the
    local Debian one, whose pytest comes from Debian rather than from PyPI."""
    imported = arena("import", str(FIXTURES / "harbor" / "sensor-drift"), "--out", "environments", cwd=tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    package = tmp_path / "environments" / "sensor-drift"
    dockerfile = package / "environment" / "Dockerfile"
    edit(dockerfile, "FROM python:3.12-slim", LOCAL_BASE)
    edit(dockerfile, "RUN pip install --no-cache-dir pytest==8.3.4", "RUN apt-get update && apt-get install -y "
         "--no-install-recommends python3-pytest && rm -rf /var/lib/apt/lists/*")
    checked = arena("check", "--format", "json", str(package), cwd=tmp_path)
    (result,) = json.loads(checked.stdout)["packages"]
    assert [d for d in result["diagnostics"] if d["severity"] == "error"] == [], checked.stdout[-3000:]
    assert [t["reward"] for t in result["trials"] if t["agent"] == "oracle"] == [1.0, 1.0]
    assert [t["reward"] for t in result["trials"] if t["agent"] == "nop"] == [0.0]
