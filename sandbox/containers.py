"""Containers with a package's limits and no network, files copied in as tar archives, and resource tracking."""

from __future__ import annotations

import io
import tarfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from docker.types import Ulimit

from sandbox.channel import SERVER_PATH, server_source
from sandbox.engine import labels
from taskpkg.model import Limits

ROOT_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER"]  # for root's setup; the agent (UID 1000) holds none
KEEP_ALIVE = ["sleep", "infinity"]
NETWORK_MODE = "none"  # loopback only; the one place the sandbox's isolation is decided


class SandboxClosed(RuntimeError):
    """Work was attempted after the sandbox began shutting down (Ctrl-C, SIGTERM, an error elsewhere)."""


class Tracker:
    """Every container and image a Sandbox created, so that every exit path can remove them."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._containers: set[str] = set()
        self._images: set[str] = set()
        self._closed = False
        self._reaper = ThreadPoolExecutor(max_workers=2, thread_name_prefix="arena-reaper")
        self._pending: list[Future] = []
        self.storage_opt_supported: bool | None = None

    def add_container(self, container_id: str) -> None:
        """Track a new container; once the tracker is closed, remove it at once and refuse."""
        with self._lock:
            closed = self._closed
            if not closed:
                self._containers.add(container_id)
        if closed:
            self.remove_container(container_id)
            raise SandboxClosed("the sandbox is shutting down")

    def add_image(self, image_id: str) -> None:
        """Track a new image; once the tracker is closed, remove it at once and refuse."""
        with self._lock:
            closed = self._closed
            if not closed:
                self._images.add(image_id)
        if closed:
            self.remove_image(image_id)
            raise SandboxClosed("the sandbox is shutting down")

    def remove_container(self, container_id: str) -> None:
        """Force-remove one container (gone already is fine; a busy engine gets a second try, then the sweep)."""
        _remove(lambda: self.client.api.remove_container(container_id, force=True, v=True))
        with self._lock:
            self._containers.discard(container_id)

    def remove_image(self, image_id: str) -> None:
        """Remove one image (gone already is fine; a busy engine gets a second try, then the sweep)."""
        _remove(lambda: self.client.api.remove_image(image_id, force=True, noprune=False))
        with self._lock:
            self._images.discard(image_id)

    def discard(self, containers: list[str], images: list[str]) -> None:
        """Remove these in the background, in order (containers before the images they were made from)."""

        def remove() -> None:
            for container_id in containers:
                self.remove_container(container_id)
            for image_id in images:
                self.remove_image(image_id)

        with self._lock:
            self._pending.append(self._reaper.submit(remove))

    def remove_all(self) -> None:
        """Finish background removals, then remove everything still tracked; later additions are refused."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for future in pending:
            future.exception()
        self._reaper.shutdown(wait=True)
        with self._lock:
            containers, images = list(self._containers), list(self._images)
        for container_id in containers:
            self.remove_container(container_id)
        for image_id in images:
            self.remove_image(image_id)


def _remove(call: Callable[[], object]) -> None:
    """Run a removal; NotFound means done. A conflict (a removal or commit in progress) is retried once; what still
    fails is left for the session sweep that ends every Sandbox.close()."""
    for attempt in range(2):
        try:
            call()
            return
        except NotFound:
            return
        except APIError:
            if attempt:
                return
            time.sleep(0.5)


def start_container(tracker: Tracker, image: str, limits: Limits, kind: str, session: str, package: str) -> Container:
    """Start a container that only waits, with the limits, no network and no privileges beyond setup's."""
    container = create_container(tracker, image, limits, kind, session, package)
    container.start()
    return container


def create_container(tracker: Tracker, image: str, limits: Limits, kind: str, session: str, package: str,
                     entrypoint: list[str] = KEEP_ALIVE, environment: dict[str, str] | None = None,
                     working_dir: str = "/") -> Container:
    """Create (not start) a tracked container with the limits, no network and no privileges beyond setup's."""
    options = dict(
        entrypoint=entrypoint, command=[], detach=True, init=True, user="0", working_dir=working_dir,
        hostname="arena", environment=environment or {},
        network_mode=NETWORK_MODE, cap_drop=["ALL"], cap_add=ROOT_CAPABILITIES, security_opt=["no-new-privileges"],
        nano_cpus=int(limits.cpus * 1e9), mem_limit=f"{limits.memory_mb}m", memswap_limit=f"{limits.memory_mb}m",
        pids_limit=limits.pids, labels=labels(kind, session, package),
        ulimits=[Ulimit(name="fsize", soft=limits.storage_mb * 1024 * 1024, hard=limits.storage_mb * 1024 * 1024)],
    )
    if tracker.storage_opt_supported is not False:
        try:
            container = tracker.client.containers.create(image, storage_opt={"size": f"{limits.storage_mb}m"},
                                                         **options)
            tracker.storage_opt_supported = True
        except APIError as exc:
            if "storage-opt" not in str(exc) and "storage_opt" not in str(exc):
                raise
            tracker.storage_opt_supported = False
    if tracker.storage_opt_supported is False:
        container = tracker.client.containers.create(image, **options)
    tracker.add_container(container.id)
    return container


def tar_of(entries: Iterable[tuple[str, bytes | None, int]], uid: int = 0) -> bytes:
    """A tar archive of (path, content or None for a folder, mode) entries, owned by uid."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, content, mode in entries:
            info = tarfile.TarInfo(path)
            info.uid = info.gid = uid
            info.mode = mode
            if content is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def folder_entries(source: Path, target: str) -> list[tuple[str, bytes | None, int]]:
    """Tar entries copying a package folder (or file) to target, read-only for others, links skipped."""
    if source.is_file():
        return [(target, source.read_bytes(), 0o644)]
    entries: list[tuple[str, bytes | None, int]] = [(target, None, 0o755)]
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or "__pycache__" in path.parts:
            continue
        relative = f"{target}/{path.relative_to(source).as_posix()}"
        entries.append((relative, None, 0o755) if path.is_dir() else (relative, path.read_bytes(), 0o644))
    return entries


def server_entries() -> list[tuple[str, bytes | None, int]]:
    """Tar entries putting the command server at SERVER_PATH, owned by root and read-only to everyone else."""
    return [("arena", None, 0o755), ("arena/shell", None, 0o755), (SERVER_PATH.lstrip("/"), server_source(), 0o644)]
