"""Run a package's generator, an agent script and its verifier directly on the host.

This exercises the logic of a bundled environment (generator, oracle, verifier) without Docker, following the
runtime contract in docs/SPEC.md with a temporary folder standing in for /workspace. The real episode runs in the
sandbox; this is for fast, many-seed tests of the environment's own code.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from taskpkg.frontmatter import read_frontmatter

ORACLE_SECONDS = 10.0


@dataclass
class HostEpisode:
    """The outcome of one host-run episode."""

    prompt_values: dict
    reward: dict | None
    verifier_stderr: str


def frontmatter(package: Path) -> dict:
    """Return the frontmatter of a package's task.md (read by the arena's one frontmatter reader)."""
    return read_frontmatter((package / "task.md").read_text(encoding="utf-8")).data


def _contract_env(workspace: Path, instance: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_INSTANCE=str(instance), ARENA_WORKSPACE=str(workspace), **extra)
    return env


def generate(package: Path, instance: int, workspace: Path) -> dict:
    """Run the generator for one instance into workspace and return its prompt values."""
    meta = frontmatter(package)
    workspace.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-I", str(package / meta["instances"]["generator"])],
        cwd=workspace, env=_contract_env(workspace, instance), capture_output=True, text=True, timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def run_oracle(package: Path, workspace: Path) -> None:
    """Run the oracle's entrypoint in workspace, as the oracle agent would (no ARENA_INSTANCE)."""
    meta = frontmatter(package)
    entry = package / "oracle" / meta["oracle"]["entrypoint"]
    interpreter = ["sh"] if entry.suffix == ".sh" else [sys.executable]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    subprocess.run([*interpreter, str(entry)], cwd=workspace, env=env, check=True, timeout=120, capture_output=True)


def verify(package: Path, instance: int, workspace: Path) -> HostEpisode:
    """Run verifier.py on the final state in workspace and return what it wrote."""
    output = workspace.parent / "reward.json"
    if output.exists():
        output.unlink()
    done = subprocess.run(
        [sys.executable, "-I", str(package / "verifier.py")],
        cwd=package, env=_contract_env(workspace, instance, ARENA_OUTPUT=str(output)),
        capture_output=True, text=True, timeout=120,
    )
    reward = json.loads(output.read_text()) if done.returncode == 0 and output.exists() else None
    return HostEpisode(prompt_values={}, reward=reward, verifier_stderr=done.stderr)


def load_generator(package: Path) -> ModuleType:
    """Import a package's generator module under a name of its own (every package's is called generate.py)."""
    name = f"_gen_{package.name.replace('-', '_')}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, package / frontmatter(package)["instances"]["generator"])
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def snapshot(workspace: Path) -> dict[str, bytes]:
    """Every regular file below workspace, by relative path, with its bytes."""
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


def scored(package: Path, instance: int, workspace: Path) -> dict[str, Any]:
    """The verifier's reward object; fails the test on a verifier error (crash, no output, bad output)."""
    episode = verify(package, instance, workspace)
    result = episode.reward
    assert result is not None, f"verifier error: {episode.verifier_stderr[-2000:]}"
    assert set(result) <= {"reward", "details"} and result["reward"] in (0.0, 1.0), result
    assert len(json.dumps(result.get("details", {}))) < 64 * 1024
    return result


def reward_of(package: Path, instance: int, workspace: Path) -> float:
    """The verifier's reward (0.0 or 1.0); fails the test on a verifier error, as scored does."""
    return float(scored(package, instance, workspace)["reward"])


def solved(package: Path, instance: int, tmp_path: Path) -> Path:
    """Generate an instance under tmp_path, run the oracle on it (within ORACLE_SECONDS) and return the workspace."""
    workspace = tmp_path / "oracle" / "workspace"
    generate(package, instance, workspace)
    started = time.monotonic()
    run_oracle(package, workspace)
    assert time.monotonic() - started < ORACLE_SECONDS
    return workspace


def variant(source: Path, tmp_path: Path, name: str) -> Path:
    """A copy of a workspace to forge, in its own folder (the verifier writes reward.json beside it)."""
    target = tmp_path / name / "workspace"
    shutil.copytree(source, target, symlinks=True)
    return target


def write_json(path: Path, data: Any) -> None:
    """Write data to path as indented JSON."""
    path.write_text(json.dumps(data, indent=2))
