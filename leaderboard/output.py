"""Writing the site incrementally: a content-hash manifest, pages skipped when their view is unchanged, files rewritten
only when their bytes change, and files of an earlier build that are no longer produced removed.

`build-manifest.json` in the output folder records, for every file the build wrote, the digest of what it was made
from and the digest of its bytes, plus a digest of all inputs: a rebuild whose inputs and generator are unchanged
stops after hashing them. The manifest holds no times or absolute paths, so the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

MANIFEST = "build-manifest.json"
MANIFEST_VERSION = 1


def digest(data: bytes) -> str:
    """sha256 of bytes, hex."""
    return hashlib.sha256(data).hexdigest()


def view_digest(view: object, salt: str) -> str:
    """The digest of a page's view (plain data) under a generator digest."""
    return digest(salt.encode() + json.dumps(view, sort_keys=True, separators=(",", ":"), default=str).encode())


def tree_digest(roots: Iterable[Path | None], salt: str = "", contents: Callable[[Path], bool] | None = None) -> str:
    """One digest over the files under roots: relative paths, sizes and (where contents(path)) the bytes."""
    hasher = hashlib.sha256(salt.encode())
    for index, root in enumerate(roots):
        hasher.update(f"\0root {index} {root is not None and root.is_dir()}\0".encode())
        if root is None or not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                path = Path(folder, name)
                try:
                    size = path.lstat().st_size
                    hasher.update(f"{path.relative_to(root)}\0{size}\0".encode())
                    if contents is None or contents(path):
                        hasher.update(path.read_bytes())
                except OSError:
                    hasher.update(f"{path.relative_to(root)}\0unreadable\0".encode())
    return hasher.hexdigest()


@dataclass
class WriteStats:
    """What a build did to the output folder."""

    written: int = 0
    unchanged: int = 0
    skipped: int = 0
    removed: int = 0
    files: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Files the site now holds (the manifest's own file aside)."""
        return len(self.files)


def read_manifest(out: Path) -> dict:
    """The previous build's manifest, or an empty one."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("manifest_version") == MANIFEST_VERSION else {}


def unchanged_build(out: Path, manifest: dict, inputs: str) -> bool:
    """True when the previous build used the same inputs and generator and all its files are still there."""
    files = manifest.get("files")
    if manifest.get("inputs") != inputs or not isinstance(files, dict):
        return False
    return all((out / path).is_file() for path in files)


class Writer(Protocol):
    """Where the renderer sends files: SiteWriter, or a bare writer that writes everything (the benchmark's)."""

    def put(self, path: str, data: bytes, source: str | None = None) -> None:
        """Write data at path."""

    def page(self, path: str, view: object, render: Callable[[], bytes], salt: str = "") -> None:
        """Write the page render() makes from view."""


class SiteWriter:
    """Writes files under out, skipping what the previous manifest says is already there."""

    def __init__(self, out: Path, previous: dict) -> None:
        self.out = out
        self.previous: dict = previous.get("files", {}) if isinstance(previous.get("files"), dict) else {}
        self.stats = WriteStats()

    def _keep(self, path: str, source: str) -> bool:
        old = self.previous.get(path)
        if isinstance(old, dict) and old.get("source") == source and (self.out / path).is_file():
            self.stats.files[path] = old
            self.stats.skipped += 1
            return True
        return False

    def put(self, path: str, data: bytes, source: str | None = None) -> None:
        """Write data at out/path unless the file already holds exactly these bytes."""
        output = digest(data)
        self.stats.files[path] = {"source": source or output, "output": output}
        target = self.out / path
        old = self.previous.get(path)
        if isinstance(old, dict) and old.get("output") == output and target.is_file():
            self.stats.unchanged += 1
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.stats.written += 1

    def page(self, path: str, view: object, render: Callable[[], bytes], salt: str = "") -> None:
        """A rendered page: render() runs only when its view (plain data) changed or its file is gone."""
        source = view_digest(view, salt)
        if not self._keep(path, source):
            self.put(path, render(), source)

    def finish(self, inputs: str) -> WriteStats:
        """Remove files only the previous build made, then write the manifest."""
        for path in sorted(set(self.previous) - set(self.stats.files)):
            if Path(path).is_absolute() or ".." in Path(path).parts:
                continue  # never outside the output folder, whatever an old manifest says
            target = self.out / path
            if target.is_file() and not target.is_symlink():
                target.unlink()
                self.stats.removed += 1
                for folder in target.parents:  # drop folders the removal emptied, never out itself
                    if folder == self.out or not folder.is_relative_to(self.out) or any(folder.iterdir()):
                        break
                    folder.rmdir()
        manifest = {"manifest_version": MANIFEST_VERSION, "inputs": inputs,
                    "files": dict(sorted(self.stats.files.items()))}
        (self.out / MANIFEST).write_text(json.dumps(manifest, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        return self.stats
