"""A job's artifacts on object storage: the job works on local disk and mirrors finished files to the bucket.

A bucket mounted with FUSE (S3, GCS, R2) is not a disk: it refuses appends, writes anywhere but the end of a new
file, and renames of folders, and an object half-written when the machine was preempted is garbage. So the job
never works on the mount. It works in a local folder and `publish` copies what is finished to the mount using only
what every object-store mount supports: create a new file, write it from start to end, close it, delete a file.

    <bucket folder>/objects/<sha256>          each finished file's bytes, written once under its content hash
    <bucket folder>/manifest-<NNNNNNNN>.json  relative path -> {sha256, size, executable}; a new one per publish

An object is written before any manifest names it, and a manifest is complete before an older one is deleted, so a
preemption at any moment leaves the newest readable manifest naming only whole objects. `restore` (a recovered
job, on a new machine) reads that manifest back into the local folder, checking every hash.

Not published: names starting with "." (temporary files, staging folders), a training checkpoint until its
trainer state is written (training.trainer.latest_checkpoint's rule), and files changed in the last QUIET_S seconds
unless the caller says the work is finished (`final=True`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

OBJECTS = "objects"
MANIFEST = re.compile(r"^manifest-(\d{8})\.json$")
QUIET_S = 2.0
CHUNK = 1 << 20


class ArtifactError(OSError):
    """The bucket folder could not be read or written; the message names the file."""


@dataclass(frozen=True)
class Entry:
    """One published file."""

    sha256: str
    size: int
    executable: bool

    def to_dict(self) -> dict:
        return {"sha256": self.sha256, "size": self.size, "executable": self.executable}


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_new(source: Path, target: Path) -> None:
    """Copy source into a new file at target, start to end (the one way an object-store mount takes a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as reader, open(target, "xb") as writer:
        while chunk := reader.read(CHUNK):
            writer.write(chunk)


def _publishable(work: Path, now: float, final: bool) -> dict[str, Path]:
    """Finished files under work, by relative path."""
    found: dict[str, Path] = {}
    for current, dirnames, filenames in os.walk(work):
        folder = Path(current)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and _finished_folder(folder / d))
        for name in sorted(filenames):
            path = folder / name
            if name.startswith(".") or path.is_symlink():
                continue
            if not final and now - path.stat().st_mtime < QUIET_S:
                continue  # still being written: the next publish takes it
            found[path.relative_to(work).as_posix()] = path
    return found


def _finished_folder(folder: Path) -> bool:
    """A training checkpoint counts once its trainer state is written; every other folder always."""
    if folder.parent.name == "checkpoints" and folder.name.startswith("checkpoint-"):
        return (folder / "trainer_state.json").is_file()
    return True


class Mirror:
    """The local work folder and its copy in a bucket folder (a FUSE mount, or any folder)."""

    def __init__(self, work: Path, bucket: Path) -> None:
        self.work, self.bucket = work, bucket
        self._published: dict[str, tuple[int, int, Entry]] = {}  # path -> (size, mtime_ns, entry)

    def manifest(self) -> tuple[int, dict[str, Entry]]:
        """The newest readable manifest in the bucket folder: (its number, its entries); (0, {}) when none."""
        numbers = sorted((int(m[1]) for p in self._list(self.bucket) if (m := MANIFEST.match(p))), reverse=True)
        for number in numbers:
            try:
                data = json.loads((self.bucket / f"manifest-{number:08d}.json").read_text())
                return number, {path: Entry(e["sha256"], int(e["size"]), bool(e["executable"]))
                                for path, e in data["files"].items()}
            except (OSError, ValueError, KeyError, TypeError):
                continue  # cut short by a preemption: the one before is whole
        return 0, {}

    def publish(self, final: bool = False) -> int:
        """Copy finished files that changed since the last publish to the bucket folder; returns how many."""
        number, entries = self.manifest()
        files = _publishable(self.work, time.time(), final)
        changed = 0
        for relative, path in files.items():
            stat = path.stat()
            known = self._published.get(relative)
            if known and known[:2] == (stat.st_size, stat.st_mtime_ns):
                entries[relative] = known[2]
                continue
            entry = Entry(_hash(path), stat.st_size, os.access(path, os.X_OK))
            target = self.bucket / OBJECTS / entry.sha256
            if not target.is_file() or target.stat().st_size != entry.size:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()  # a copy cut short by a preemption
                self._copy(path, target)
            self._published[relative] = (stat.st_size, stat.st_mtime_ns, entry)
            changed += entries.get(relative) != entry
            entries[relative] = entry
        gone = [r for r in entries if r not in files and not (self.work / r).exists()]
        for relative in gone:
            del entries[relative]
        if changed or gone or number == 0:
            self._write_manifest(number + 1, entries)
        return changed

    def restore(self) -> int:
        """Bring the newest manifest's files into the local work folder (files already there with the same hash
        are kept); returns how many were copied. An object whose bytes do not match its hash is skipped."""
        _, entries = self.manifest()
        copied = 0
        for relative, entry in entries.items():
            target = self.work / relative
            if target.is_file() and target.stat().st_size == entry.size and _hash(target) == entry.sha256:
                continue
            source = self.bucket / OBJECTS / entry.sha256
            if not source.is_file() or _hash(source) != entry.sha256:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = target.with_name(f".{target.name}.restoring")
            staging.unlink(missing_ok=True)
            _write_new(source, staging)
            staging.chmod(0o755 if entry.executable else 0o644)
            os.replace(staging, target)  # local disk: a rename is fine here
            copied += 1
        return copied

    def _copy(self, source: Path, target: Path) -> None:
        try:
            _write_new(source, target)
        except OSError as exc:
            raise ArtifactError(f"{target}: could not write it to the artifact bucket ({exc.strerror or exc})"
                                ) from None

    def _write_manifest(self, number: int, entries: dict[str, Entry]) -> None:
        text = json.dumps({"files": {p: e.to_dict() for p, e in sorted(entries.items())}}, indent=1) + "\n"
        target = self.bucket / f"manifest-{number:08d}.json"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise ArtifactError(f"{target}: could not write the artifact manifest ({exc.strerror or exc})"
                                ) from None
        for name in self._list(self.bucket):
            match = MANIFEST.match(name)
            if match and int(match[1]) < number:
                with contextlib.suppress(OSError):
                    (self.bucket / name).unlink()
        used = {e.sha256 for e in entries.values()}
        for name in self._list(self.bucket / OBJECTS):
            if name not in used:
                with contextlib.suppress(OSError):
                    (self.bucket / OBJECTS / name).unlink()

    @staticmethod
    def _list(folder: Path) -> list[str]:
        try:
            return os.listdir(folder)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ArtifactError(f"{folder}: could not list the artifact bucket ({exc.strerror or exc})") from None


def read_published(bucket: Path, relative: str) -> bytes:
    """One published file's bytes, found through the bucket folder's newest manifest."""
    _, entries = Mirror(bucket, bucket).manifest()
    entry = entries.get(relative)
    if entry is None:
        raise ArtifactError(f"{bucket}: its newest manifest names no {relative}")
    try:
        return (bucket / OBJECTS / entry.sha256).read_bytes()
    except OSError as exc:
        raise ArtifactError(f"{bucket / OBJECTS / entry.sha256}: {exc.strerror or exc}") from None
