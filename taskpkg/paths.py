"""Path safety: resolve a package-relative path without ever leaving the package."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def resolve_inside(root: Path, relative: str) -> Path | None:
    """Return root/relative resolved, or None when it is absolute, climbs out with '..', or a link leads outside."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        return None
    real_root = root.resolve()
    candidate = (root / pure).resolve()
    if candidate != real_root and real_root not in candidate.parents:
        return None
    return candidate


def is_under(relative: str, folder: str) -> bool:
    """Whether a package-relative path lies in (or is) the given top-level folder."""
    parts = PurePosixPath(relative).parts
    return bool(parts) and parts[0] == folder
