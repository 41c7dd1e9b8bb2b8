"""What identifies a folder's contents: one content digest (image tags and the dynamic-results cache are keyed on it)
and, for a clean git checkout, its commit."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path


def tree_digest(folder: Path, skip_dirs: frozenset[str] = frozenset(), known: Mapping[str, bytes] | None = None) -> str:
    """SHA-256 over every file's relative path, executable bit and bytes (a link by its target), in sorted order.
    known: the bytes of files the caller has read already, by relative path (they are not read again)."""
    known = known or {}
    digest = hashlib.sha256()
    top = os.fspath(folder)
    for current, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        inside = current[len(top):].lstrip(os.sep).replace(os.sep, "/")  # plain strings: no pathlib per file
        for name in sorted(filenames):
            path = os.path.join(current, name)
            relative = f"{inside}/{name}" if inside else name
            digest.update(relative.encode() + b"\0")
            if os.path.islink(path):
                digest.update(b"link:" + os.readlink(path).encode())
            else:
                digest.update(b"x" if os.access(path, os.X_OK) else b"-")
                data = known.get(relative)
                if data is None:
                    with open(path, "rb") as handle:
                        data = handle.read()
                digest.update(data)
            digest.update(b"\0")
    return digest.hexdigest()


CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})  # tools' caches, not content


def package_digest(folder: Path, known: Mapping[str, bytes] | None = None) -> str:
    """What a verdict is about and what training must match: "sha256:" + the tree digest of the package's files,
    tools' cache folders left out (running the package's Python may add them; the checks ignore them too). known:
    files' bytes the caller has read already, by package-relative path."""
    return "sha256:" + tree_digest(folder, CACHE_DIRS, known)


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
