"""Reading and copying task files safely: UTF-8 text, canary GUIDs, and trees that never leave the task.

A symbolic link is followed only while it resolves inside the task's folder; a folder of the task that is itself a
link out of it (or a configured path such as `verifier: ../elsewhere`) is refused by `task_folder`, and `copy_tree`
reports, never copies, anything that resolves outside.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from interop.source_task import InteropError, Sourced

SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv"})
GUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
CANARY = re.compile(rf"canary[^\n]{{0,200}}?\b({GUID})\b", re.IGNORECASE)
_CANARY_LINE = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
_SCAN_BYTES = 256 * 1024


def inside(path: Path, root: Path) -> bool:
    """Whether path, with every link resolved, lies inside root."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root + os.sep)


def outside_why(path: Path) -> str:
    """How a path that resolves outside the task gets there (for messages)."""
    if path.is_symlink():
        return f"a symbolic link to {os.readlink(path)}, outside the task"
    return f"resolves to {os.path.realpath(path)}, outside the task"


def task_folder(root: Path, relative: str) -> Path:
    """root/relative, refused when it resolves outside the task (a linked folder, or `..` in a configured path)."""
    path = root / relative
    if (path.exists() or path.is_symlink()) and not inside(path, root):
        raise InteropError(relative.rstrip("/") + "/", outside_why(path),
                           "Copy the folder into the task instead of linking to it; nothing outside the task is read.")
    return path


def read_text(path: Path, root: Path) -> str:
    """A source file as text (UTF-8, BOM and CRLF tolerated); never through a link that leaves the task."""
    relative = relative_to(path, root)
    if not inside(path, root):
        raise InteropError(relative, "is a symbolic link to a file outside the task",
                           "Replace the link with the file itself.")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InteropError(relative, f"cannot be read ({exc.strerror or exc})", "Check the path and permissions.") \
            from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InteropError(relative, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x})", "Save it as UTF-8.",
                           line) from None
    return text.replace("\r\n", "\n")


def relative_to(path: Path, root: Path) -> str:
    """POSIX path of path relative to root (or path itself when outside)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def strip_canary(text: str) -> tuple[str, bool]:
    """Remove leading canary comment lines (and the blank lines after them), as Harbor does before the agent."""
    lines = text.split("\n")
    index = 0
    while index < len(lines) and _CANARY_LINE.match(lines[index].strip()):
        index += 1
    if index == 0:
        return text, False
    while index < len(lines) and not lines[index].strip():
        index += 1
    return "\n".join(lines[index:]), True


def find_canary(root: Path, candidates: list[Path]) -> Sourced | None:
    """The first canary GUID in the given files or folders (in order), with where it was found."""
    for candidate in candidates:
        for path in walk_files(candidate, root) if candidate.is_dir() else [candidate]:
            if not path.is_file() or path.is_symlink() or not inside(path, root):
                continue
            with path.open("rb") as handle:
                text = handle.read(_SCAN_BYTES).decode("utf-8", errors="replace")
            match = CANARY.search(text)
            if match:
                line = text.count("\n", 0, match.start(1)) + 1
                return Sourced(match.group(1).lower(), f"{relative_to(path, root)}:{line}")
    return None


def walk_files(folder: Path, root: Path) -> Iterator[Path]:
    """Regular files under folder (sorted, no links followed, caches skipped); nothing when folder leaves root."""
    if not folder.is_dir() or not inside(folder, root):
        return
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.is_symlink():
            continue
        if entry.is_dir():
            if entry.name not in SKIPPED_DIRS:
                yield from walk_files(entry, root)
        elif entry.is_file():
            yield entry


def copy_tree(source: Path, target: Path, root: Path, skipped: list[str], exclude: frozenset[str] = frozenset()) \
        -> None:
    """Copy a folder of the task; what resolves outside root, special files and excluded paths are not copied, and
    the first two are reported in `skipped` as `path: why`. The folder itself leaving root is reported too."""
    if not inside(source, root):
        skipped.append(f"{relative_to(source, root)}: {outside_why(source)}; not copied (copy the files themselves "
                       "into the task if they are needed)")
        return
    _copy(source, target, root, os.path.realpath(root), skipped, exclude, {os.path.realpath(source)})


def copy_tree_strict(source: Path, target: Path, root: Path, fix: str) -> None:
    """Copy a tree of a package (or of instance 0's files) for export: anything that leaves root is an error."""
    skipped: list[str] = []
    copy_tree(source, target, root, skipped)
    if skipped:
        where, _, problem = skipped[0].partition(": ")
        raise InteropError(where, problem.split(";")[0], fix)


def copy_file(source: Path, target: Path, root: Path, skipped: list[str]) -> None:
    """Copy one file of the task (executable bit kept); one that resolves outside root is reported instead."""
    if not inside(source, root):
        skipped.append(f"{relative_to(source, root)}: {outside_why(source)}; not copied")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _copy_file(source, target)


def _copy_file(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    if os.access(source, os.X_OK):
        target.chmod(0o755)


def _copy(source: Path, target: Path, root: Path, real_root: str, skipped: list[str], exclude: frozenset[str],
          seen: set[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir(), key=lambda p: p.name):
        relative = relative_to(entry, root)
        if entry.name in SKIPPED_DIRS or relative in exclude:
            continue
        resolved = os.path.realpath(entry)
        if resolved != real_root and not resolved.startswith(real_root + os.sep):
            skipped.append(f"{relative}: {outside_why(entry)}; not copied (copy the file itself into the task if it "
                           "is needed)")
        elif entry.is_dir():
            if resolved in seen:
                skipped.append(f"{relative}: a link back to a folder already copied; not copied again")
                continue
            _copy(entry, target / entry.name, root, real_root, skipped, exclude, seen | {resolved})
        elif entry.is_file():
            _copy_file(entry, target / entry.name)
        else:
            skipped.append(f"{relative}: not a regular file (a device, pipe or socket); not copied")
