"""The answer-leak check: no byte-identical copy of the verifier, oracle, generator or verifier data in any layer
(verifier data the author shares with the image on purpose excepted: taskpkg/shared_files.py)."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import docker

from sandbox.engine import overlay_folders
from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules.dynamic import ARENA706
from taskpkg.shared_files import shared_data_files
from validators.registry import Needs, check

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MIN_SECRET_BYTES = 32  # smaller files (an empty __init__.py, "{}") match too much to mean anything


def hidden_files(package: TaskPackage) -> dict[tuple[int, str], str]:
    """(size, SHA-256) → package path of every file (of at least MIN_SECRET_BYTES) the agent must never see."""
    roots = [package.root / relative for relative in package.hidden_paths()]
    shared = shared_data_files(package)
    found: dict[tuple[int, str], str] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            if path.is_symlink() or "__pycache__" in path.parts:
                continue
            data = path.read_bytes()
            if len(data) >= MIN_SECRET_BYTES and path.relative_to(package.root).as_posix() not in shared:
                found[(len(data), hashlib.sha256(data).hexdigest())] = path.relative_to(package.root).as_posix()
    return found


@check(ARENA706, needs=Needs.ENGINE)
def scan_image(client: docker.DockerClient, tag: str, package: TaskPackage,
               read_storage: bool = True) -> list[Diagnostic]:
    """Report every file in any layer of the image that is identical to a hidden file.

    Where the engine runs on this machine with overlay2 and its layer folders are readable (root), they are read in
    place; otherwise (and always with read_storage=False) the engine streams the saved image, as `docker save` does.
    """
    secrets = hidden_files(package)
    if not secrets:
        return []
    sizes = {size for size, _ in secrets}
    folders = _layer_folders(client, tag) if read_storage else None
    files = (_files_in_layer_folders(folders, sizes) if folders is not None
             else _files_in_saved_image(client, tag, sizes))
    found: dict[tuple[int, str], Diagnostic] = {}
    for name, data in files:
        key = (len(data), hashlib.sha256(data).hexdigest())
        if key in secrets and key not in found:
            found[key] = ARENA706.found(secrets[key], name=name, source=secrets[key])
    return list(found.values())


def _layer_folders(client: docker.DockerClient, tag: str) -> list[Path] | None:
    """The image's overlay2 layer folders, when the engine is local and every one of them can be read here."""
    image = client.api.inspect_image(tag)
    folders = overlay_folders(image)
    if folders is None or len(folders) != len(image.get("RootFS", {}).get("Layers", [])):
        return None
    if not all(folder.is_dir() and os.access(folder, os.R_OK | os.X_OK) for folder in folders):
        return None
    return folders


def _files_in_layer_folders(folders: list[Path], sizes: set[int]) -> Iterator[tuple[str, bytes]]:
    """(path in the image, content) of every regular file of a wanted size in the layer folders."""
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(parent, name)
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode) and info.st_size in sizes:
                    yield os.path.relpath(path, folder), Path(path).read_bytes()


def _files_in_saved_image(client: docker.DockerClient, tag: str, sizes: set[int]) -> Iterator[tuple[str, bytes]]:
    """(path in the image, content) of every regular file of a wanted size in the engine's saved image stream."""
    reader = io.BufferedReader(_StreamReader(client.images.get(tag).save(named=False)), 1 << 20)
    with tarfile.open(fileobj=reader, mode="r|") as outer:
        for member in outer:
            layer = outer.extractfile(member) if member.isfile() and member.name.endswith(".tar") else None
            if layer is None:
                continue
            with tarfile.open(fileobj=layer, mode="r|") as inner:
                for entry in inner:
                    handle = inner.extractfile(entry) if entry.isfile() and entry.size in sizes else None
                    if handle is not None:
                        yield entry.name, handle.read()


class _StreamReader(io.RawIOBase):
    """A file-like view of the engine's chunked `docker save` stream."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        target = memoryview(buffer).cast("B")
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size

