"""What the run manifest (taskpkg.run_manifest.TrainingManifest) records of the machine and the run: library versions,
hardware, digests, GPU-hours, times."""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from pathlib import Path

from taskpkg.digest import tree_digest

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
    """The content digest of a folder (taskpkg.digest, as scoring computes it for the adapter it scores)."""
    return "sha256:" + tree_digest(folder)


def gpu_hours(wall_s: float, gpus: int) -> float:
    """GPU-hours of a run: wall time times the GPUs it held."""
    return round(wall_s / 3600 * gpus, 4)


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
