"""Run a package's generator, an agent script and its verifier directly on the host.

This exercises the logic of a bundled environment (generator, oracle, verifier) without Docker, following the
runtime contract in docs/SPEC.md with a temporary folder standing in for /workspace. The real episode runs in the
sandbox; this is for fast, many-seed tests of the environment's own code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass
class HostEpisode:
    """The outcome of one host-run episode."""

    prompt_values: dict
    reward: dict | None
    verifier_stderr: str


def frontmatter(package: Path) -> dict:
    """Return the frontmatter of a package's task.md (plain YAML load; the strict parser lives in taskpkg)."""
    text = (package / "task.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])


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
