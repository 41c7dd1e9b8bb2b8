"""Find packages from command-line paths: a package folder, or a folder of packages such as environments/."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_MARKERS = ("task.md", "environment", "verifier.py", "oracle")
DEFAULT_ROOT = Path("environments")


def looks_like_package(path: Path) -> bool:
    """Whether a folder holds any of a package's parts (so a broken package is still checked as one)."""
    return any((path / marker).exists() or (path / marker).is_symlink() for marker in PACKAGE_MARKERS)


def find_packages(paths: list[Path]) -> list[Path]:
    """Expand each path into package folders, in order, without duplicates. Missing paths are kept as given."""
    found: list[Path] = []
    for path in paths or [DEFAULT_ROOT]:
        if path.is_dir() and not looks_like_package(path):
            found.extend(sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def display_path(path: Path) -> str:
    """A path as the user would type it from here."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
