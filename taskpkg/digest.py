"""What identifies a folder's contents: one content digest (image tags and the dynamic-results cache are keyed on it)
and, for a clean git checkout, its commit."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


def tree_digest(folder: Path, skip_dirs: frozenset[str] = frozenset()) -> str:
    """SHA-256 over every file's relative path, executable bit and bytes (a link by its target), in sorted order."""
    digest = hashlib.sha256()
    for current, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        for name in sorted(filenames):
            path = Path(current, name)
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode())
            else:
                digest.update(b"x" if os.access(path, os.X_OK) else b"-")
                digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})  # tools' caches, not content


def package_digest(folder: Path) -> str:
    """What a verdict is about and what training must match: "sha256:" + the tree digest of the package's files,
    tools' cache folders left out (running the package's Python may add them; the checks ignore them too)."""
    return "sha256:" + tree_digest(folder, CACHE_DIRS)


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
