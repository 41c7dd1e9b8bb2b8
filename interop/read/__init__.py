"""Read a foreign task into a SourceTask: which format a folder is in, and one reader per format.

BenchFlow (`task.md` with YAML frontmatter), Harbor (`task.toml`) and Terminal-Bench's older format (`task.yaml`,
`run-tests.sh`, `solution.sh`). A `task.md` that is already an arena package is recognised and refused by the import.
"""

from __future__ import annotations

from pathlib import Path

from interop.read.benchflow import frontmatter, read_benchflow
from interop.read.harbor import read_harbor
from interop.read.terminal_bench import read_terminal_bench
from interop.source_task import BENCHFLOW, HARBOR, NATIVE, TERMINAL_BENCH, InteropError, SourceTask

READERS = {BENCHFLOW: read_benchflow, HARBOR: read_harbor, TERMINAL_BENCH: read_terminal_bench}
CONFIG_FILES = ("task.md", "task.toml", "task.yaml")


def task_root(src: Path) -> Path:
    """The task folder for SRC (a folder, or its task.md / task.toml / task.yaml)."""
    if src.is_file() and src.name in CONFIG_FILES:
        return src.parent
    if not src.is_dir():
        raise InteropError(str(src), "is not a task folder",
                           "Point at a folder holding task.md, task.toml or task.yaml.")
    return src


def detect_format(root: Path) -> str:
    """benchflow (task.md), harbor (task.toml), terminal-bench (task.yaml), or native (an arena package)."""
    if (root / "task.md").is_file():
        return NATIVE if _is_native(root) else BENCHFLOW
    if (root / "task.toml").is_file():
        return HARBOR
    if (root / "task.yaml").is_file():
        return TERMINAL_BENCH
    nested = sorted(p.parent.name for name in CONFIG_FILES for p in root.glob(f"*/{name}"))[:3]
    hint = f" (its sub-folders {', '.join(nested)} are tasks: import them one at a time)" if nested else ""
    raise InteropError(str(root), f"holds none of task.md (BenchFlow), task.toml (Harbor) or task.yaml "
                       f"(Terminal-Bench's older format){hint}", "Point at the folder of one task.")


def read_source(root: Path, fmt: str) -> SourceTask:
    """Read the task at root, in the given format."""
    return READERS[fmt](root)


def _is_native(root: Path) -> bool:
    """An arena package: schema_version 1 (an integer) with limits and instances, read by the strict reader."""
    try:
        data = frontmatter(root).data
    except InteropError:
        return False
    return data.get("schema_version") == 1 and "limits" in data and "instances" in data
