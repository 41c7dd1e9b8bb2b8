"""A results cache for dynamic checks: an unchanged package on an unchanged arena and engine is not run again.

The key covers every byte of the package, the arena's own sandbox and validation code, the engine's version and the
check settings, so any change to any of them runs the trials afresh. `arena check --no-cache` ignores the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.digest import tree_digest
from taskpkg.package import TaskPackage

CACHE_VERSION = 1
CACHE_VARIABLE = "ARENA_CHECK_CACHE"  # this cache only (scripts/ensure-engine's rootfs cache is ARENA_ROOTFS_CACHE)
_CODE_PACKAGES = ("sandbox", "validators", "taskpkg")


def cache_dir() -> Path:
    """Where results are kept: $ARENA_CHECK_CACHE, else $XDG_CACHE_HOME/posttrain-arena/checks."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "posttrain-arena" / "checks"


@cache
def _code_digest() -> str:
    """The arena's own code that decides dynamic results."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def package_digest(package: TaskPackage) -> str:
    """SHA-256 over every file of the package (path, executable bit, bytes), byte-code caches left out."""
    return tree_digest(package.root, frozenset({"__pycache__"}))


def cache_key(package: TaskPackage, engine_version: str, settings: dict[str, Any]) -> str:
    """The key of one package's dynamic results."""
    material = json.dumps({"v": CACHE_VERSION, "package": package_digest(package), "code": _code_digest(),
                           "engine": engine_version, "settings": settings}, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def load(key: str) -> tuple[list[Diagnostic], list[dict[str, Any]], str] | None:
    """Cached (diagnostics, trials, when) for a key, or None. A damaged entry counts as absent."""
    path = cache_dir() / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        diagnostics = [Diagnostic(d["check_id"], Severity(d["severity"]), d["message"], d["fix"], d["file"],
                                  d["line"], d["column"]) for d in data["diagnostics"]]
        return diagnostics, list(data["trials"]), str(data["created"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(key: str, diagnostics: list[Diagnostic], trials: list[dict[str, Any]]) -> None:
    """Keep results for later re-checks (best effort: an unwritable cache only costs time)."""
    folder = cache_dir()
    entry = {"diagnostics": [d.to_dict() for d in diagnostics], "trials": trials,
             "created": datetime.now(UTC).isoformat(timespec="seconds")}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{key}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(entry), encoding="utf-8")
        temporary.replace(folder / f"{key}.json")
    except OSError:
        pass
