"""The run manifest: everything needed to reproduce a training run and to judge what it cost."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path

LIBRARIES = ("torch", "transformers", "trl", "peft", "vllm", "datasets", "docker")


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries that shape a run (absent ones omitted)."""
    found = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def hardware() -> dict:
    """CPU and GPU of this machine."""
    info: dict = {"machine": platform.machine(), "cpus": os.cpu_count() or 1, "gpus": []}
    try:
        import torch

        if torch.cuda.is_available():
            info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except ImportError:
        pass
    return info


def folder_digest(folder: Path) -> str:
    """sha256 over a folder's files (relative path and bytes, sorted)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def git_commit(folder: Path) -> str | None:
    """The commit checked out where `folder` lives, when it is a clean git checkout of it; else None."""
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head if len(head) == 40 and not dirty else None


def write_json_atomically(path: Path, data: dict) -> None:
    """Write JSON beside the target, then rename: a reader never sees half a file."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    staging.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    staging.replace(path)


def gpu_hours(wall_s: float, gpus: int) -> float:
    """GPU-hours of a run: wall time times the GPUs it held."""
    return round(wall_s / 3600 * gpus, 4)


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
