"""Which format a task folder is in."""

from __future__ import annotations

from pathlib import Path

import yaml

from interop.errors import InteropError

BENCHFLOW, HARBOR, NATIVE = "benchflow", "harbor", "native"


def task_root(src: Path) -> Path:
    """The task folder for SRC (a folder, or its task.md / task.toml)."""
    if src.is_file() and src.name in ("task.md", "task.toml"):
        return src.parent
    if not src.is_dir():
        raise InteropError(str(src), "is not a task folder", "Point at a folder holding task.md or task.toml.")
    return src


def detect_format(root: Path) -> str:
    """benchflow (task.md), harbor (task.toml + instruction.md or steps/), or native (an arena package)."""
    if (root / "task.md").is_file():
        return NATIVE if _is_native(root / "task.md") else BENCHFLOW
    if (root / "task.toml").is_file():
        return HARBOR
    raise InteropError(str(root), "holds neither task.md (BenchFlow) nor task.toml (Harbor)",
                       "Point at the folder of one task.")


def _is_native(path: Path) -> bool:
    """An arena package: schema_version 1 (an integer) with limits and instances."""
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    parts = text.split("\n---", 1)
    if not text.startswith("---") or len(parts) < 2:
        return False
    try:
        data = yaml.safe_load(parts[0][3:])
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and data.get("schema_version") == 1 and "limits" in data and "instances" in data
