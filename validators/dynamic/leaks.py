"""The answer-leak check: no byte-identical copy of the verifier, oracle, generator or verifier data in any layer."""

from __future__ import annotations

import hashlib
import io
import tarfile

import docker

from taskpkg.checks import check
from taskpkg.diagnostics import Diagnostic
from taskpkg.model import TaskPackage

MIN_SECRET_BYTES = 32  # smaller files (an empty __init__.py, "{}") match too much to mean anything
MAX_MEMBER_BYTES = 16 * 1024 * 1024


def hidden_files(package: TaskPackage) -> dict[str, str]:
    """SHA-256 → package path of every file the agent must never see."""
    roots = [package.root / relative for relative in package.hidden_paths()]
    found: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            if path.is_symlink() or "__pycache__" in path.parts:
                continue
            data = path.read_bytes()
            if len(data) >= MIN_SECRET_BYTES:
                found[hashlib.sha256(data).hexdigest()] = path.relative_to(package.root).as_posix()
    return found


def scan_image(client: docker.DockerClient, tag: str, package: TaskPackage) -> list[Diagnostic]:
    """Stream the saved image and report every layer file identical to a hidden file."""
    secrets = hidden_files(package)
    if not secrets:
        return []
    reader = io.BufferedReader(_StreamReader(client.images.get(tag).save(named=False)), 1 << 20)
    found: dict[str, Diagnostic] = {}
    with tarfile.open(fileobj=reader, mode="r|") as outer:
        for member in outer:
            if not member.isfile() or not member.name.endswith(".tar"):
                continue
            layer = outer.extractfile(member)
            if layer is None:
                continue
            with tarfile.open(fileobj=layer, mode="r|") as inner:
                for entry in inner:
                    if not entry.isfile() or entry.size < MIN_SECRET_BYTES or entry.size > MAX_MEMBER_BYTES:
                        continue
                    handle = inner.extractfile(entry)
                    digest = hashlib.sha256(handle.read()).hexdigest() if handle else ""
                    if digest in secrets and digest not in found:
                        found[digest] = check("ARENA706").found(
                            f"the image contains /{entry.name}, a copy of {secrets[digest]}: the agent could read it",
                            "Remove whatever copies it into environment/ or the image; hidden files are copied in "
                            "by the arena only when they are needed.", secrets[digest])
    return list(found.values())


class _StreamReader(io.RawIOBase):
    """A file-like view of the engine's chunked `docker save` stream."""

    def __init__(self, chunks: object) -> None:
        self._chunks = iter(chunks)  # type: ignore[call-overload]
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray) -> int:  # type: ignore[override]
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size

