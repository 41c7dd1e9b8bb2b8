"""Make instance 0 of a native package on this machine: run its generator in a temporary workspace.

`arena export` needs the prompt values and the files of one instance, because a Harbor task is one fixed instance.
This runs the package's own generator (as its tests do) with python3 in isolated mode, in a temporary folder that
stands in for /workspace, with ARENA_INSTANCE=0 and nothing else of this machine's environment but PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from interop.files import copy_tree_strict
from interop.source_task import InteropError
from taskpkg.package import TaskPackage

TIMEOUT_S = 120
MAX_VALUES_BYTES = 64 * 1024


def make_instance_zero(package: TaskPackage, scratch: Path) -> tuple[dict, Path]:
    """The generator's printed values and the workspace folder it filled (under scratch)."""
    generator = package.root / package.generator
    instance_dir = scratch / "instance"
    copy_tree_strict(generator.parent, instance_dir, package.root, "Replace the link with the file itself.")
    workspace = scratch / "workspace"
    workspace.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ARENA_INSTANCE": "0", "ARENA_WORKSPACE": str(workspace),
           "HOME": tempfile.gettempdir()}
    try:
        done = subprocess.run([sys.executable, "-I", str(instance_dir / generator.name)], cwd=workspace, env=env,
                              capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InteropError(package.generator, f"ran longer than {TIMEOUT_S} s for instance 0",
                           "Make the generator fast and deterministic.") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise InteropError(package.generator, f"failed for instance 0 (exit {done.returncode}): {' | '.join(tail)}",
                           "Fix the generator; `arena export` runs it here, with this machine's python3 and modules.")
    try:
        values = json.loads(done.stdout[:MAX_VALUES_BYTES].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        values = None
    if not isinstance(values, dict):
        raise InteropError(package.generator, "did not print one JSON object for instance 0",
                           "Print the prompt's values as a JSON object (at most 64 KiB).")
    return values, workspace
