"""Harbor's own loader accepts what `arena export` writes.

Harbor needs Python >= 3.12, so it is installed with pip into a virtualenv cached under
~/.cache/posttrain-arena/harbor-venv (or $POSTTRAIN_ARENA_CACHE/harbor-venv) and driven there as a subprocess.
The test is skipped only when PyPI cannot be reached (or no Python >= 3.12 exists here).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from interop import export_harbor, import_task
from taskpkg.loader import load_package
from tests.support.packages import make_valid_package
from tests.test_interop_roundtrip import multi_scene

HARBOR = "harbor==0.26.0"
ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("POSTTRAIN_ARENA_CACHE", Path.home() / ".cache" / "posttrain-arena")) / "harbor-venv"
LOADER = r"""
import json, sys, warnings
from pathlib import Path
from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task

out = {}
for folder in sys.argv[1:]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Written on purpose beside network_mode, for releases before 0.13 that read only allow_internet.
        warnings.filterwarnings("ignore", "The 'allow_internet' field is deprecated", DeprecationWarning)
        task = Task(folder)
        TaskConfig.model_validate_toml((Path(folder) / "task.toml").read_text())
    c = task.config
    steps = [s.name for s in c.steps or []]
    out[Path(folder).name] = {
        "name": task.name, "valid": Task.is_valid_dir(folder), "agent_timeout": c.agent.timeout_sec,
        "agent_user": c.agent.user, "verifier_timeout": c.verifier.timeout_sec,
        "build": c.environment.build_timeout_sec,
        "cpus": c.environment.cpus, "memory_mb": c.environment.memory_mb, "storage_mb": c.environment.storage_mb,
        "network": c.environment.network_mode.value, "schema": c.schema_version, "workdir": c.environment.workdir,
        "steps": steps,
        "strategy": c.multi_step_reward_strategy.value if c.multi_step_reward_strategy else None,
        "instructions": [task.step_instruction(s) for s in steps] if steps else [task.instruction],
        "category": c.metadata.get("category"), "arena": c.metadata.get("arena", {}).get("name"),
        "tests": task.paths.discovered_test_path.name, "solve": (task.paths.discovered_solve_path or Path("-")).name,
    }
print(json.dumps(out))
"""


def python_312() -> str | None:
    """A working Python >= 3.12 on this machine (harbor requires it); version shims that fail are passed over."""
    candidates = [sys.executable, *sorted(glob.glob(str(Path.home() / ".pyenv" / "versions" / "3.1[2-9]*" / "bin" /
                                                   "python3"))),
                  *sorted(glob.glob("/root/.pyenv/versions/3.1[2-9]*/bin/python3")),
                  *(shutil.which(f"python3.{minor}") for minor in range(12, 16)), shutil.which("python3")]
    for candidate in dict.fromkeys(c for c in candidates if c):
        probe = subprocess.run([candidate, "-c", "import sys, venv; sys.exit(sys.version_info < (3, 12))"],
                               capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
        return True
    except OSError:
        return False


def harbor_installed(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('harbor'))"],
                           capture_output=True, text=True)
    return probe.returncode == 0 and probe.stdout.strip() == HARBOR.split("==")[1]


@pytest.fixture(scope="module")
def harbor_python() -> Path:
    python = CACHE / "bin" / "python"
    if harbor_installed(python):
        return python
    base = python_312()
    if base is None:
        pytest.skip("harbor needs Python >= 3.12 and none is installed here")
    if not pypi_reachable():
        pytest.skip("PyPI (pypi.org:443) is unreachable, so harbor cannot be installed")
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="harbor-venv.", dir=CACHE.parent))
    try:
        subprocess.run([base, "-m", "venv", str(staging)], check=True, capture_output=True)
        done = subprocess.run([str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", HARBOR], capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            if not pypi_reachable():
                pytest.skip("PyPI became unreachable while installing harbor")
            pytest.fail(f"pip install {HARBOR} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        shutil.rmtree(CACHE, ignore_errors=True)
        staging.rename(CACHE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    assert harbor_installed(python)
    return python


def load_with_harbor(python: Path, tasks: list[Path]) -> dict:
    done = subprocess.run([str(python), "-c", LOADER, *map(str, tasks)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.mark.timeout(1800)
def test_harbor_loads_exported_tasks(harbor_python: Path, tmp_path: Path) -> None:
    sources = [make_valid_package(tmp_path / "made", "sum-numbers"), multi_scene(tmp_path / "made"),
               import_task(ROOT / "tests" / "fixtures" / "interop" / "harbor" / "invoice-total",
                           tmp_path / "made").package_path,
               *(p for p in sorted((ROOT / "environments").glob("*")) if load_package(p).package is not None)]
    exported = [export_harbor(p, tmp_path / "harbor") for p in sources]
    loaded = load_with_harbor(harbor_python, exported)
    for source in sources:
        package = load_package(source).package
        assert package is not None
        seen = loaded[package.name]
        limits = package.limits
        assert seen["valid"] and seen["name"] == f"arena/{package.name}" and seen["arena"] == package.name
        assert (seen["agent_timeout"], seen["verifier_timeout"], seen["build"]) == (
            limits.agent_timeout_s, limits.verifier_timeout_s, limits.build_timeout_s)
        assert (seen["cpus"], seen["memory_mb"], seen["storage_mb"]) == (limits.cpus, limits.memory_mb,
                                                                        limits.storage_mb)
        assert (seen["network"], seen["workdir"], seen["agent_user"]) == ("no-network", "/workspace", 1000)
        assert seen["schema"] == "1.1"
        assert seen["category"] == package.domain and (seen["tests"], seen["solve"]) == ("test.sh", "solve.sh"
                                                                                        if not package.scenes else "-")
        assert seen["steps"] == [s.name for s in package.scenes]
        assert seen["strategy"] == ("final" if package.scenes else None)
        assert all("canary" not in text and text.strip() for text in seen["instructions"]), \
            "Harbor strips the canary comment; the instruction is the rendered prompt"
    assert loaded["sum-dialogue"]["instructions"][1].startswith("Write only the integer")
