"""Containers with a package's limits and no network, files copied in as tar archives, and resource tracking."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from docker.types import Ulimit

from sandbox.engine import labels
from taskpkg.package import Limits

ROOT_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER"]  # for root's setup; the agent (UID 1000) holds none
KEEP_ALIVE = ["sleep", "infinity"]
REMOVE_RETRY_WAITS_S = (0.05, 0.1, 0.2, 0.4, 0.8)
NETWORK_MODE = "none"  # loopback only; the one place the sandbox's isolation is decided
# With "none" the engine is also told to set up no network at all: the container gets a namespace of its own holding
# only loopback, as with "none", but the engine skips its network hook (a re-run of itself) on every start.


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
        self._pending: list[Future[None]] = []
        self.storage_opt_supported: bool | None = None
        self.storage_opt_probe = threading.Lock()  # the first create finds out; others wait for its answer

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
        # noprune: a snapshot's parent is another tracked image (an initial state others still start from), removed
        # on its own when released; never prune it with its child.
        _remove(lambda: self.client.api.remove_image(image_id, force=True, noprune=True))
        with self._lock:
            self._images.discard(image_id)

    def discard(self, containers: list[str], images: list[str]) -> None:
        """Remove these in the background, in order (containers before the images they were made from); once the
        tracker is closed, at once."""

        def remove() -> None:
            for container_id in containers:
                self.remove_container(container_id)
            for image_id in images:
                self.remove_image(image_id)

        with self._lock:
            if not self._closed:
                self._pending.append(self._reaper.submit(remove))
                return
        remove()  # after remove_all: nothing runs in the background any more

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
    """Run a removal; NotFound means done. A conflict (an image whose last container another thread is removing right
    now, a commit in progress) is retried a few times with short waits; what still fails is left for the label
    sweep that ends every Sandbox.close()."""
    for wait_s in (*REMOVE_RETRY_WAITS_S, None):
        try:
            call()
            return
        except NotFound:
            return
        except APIError:
            if wait_s is None:
                return
            time.sleep(wait_s)


def start_container(tracker: Tracker, image: str, limits: Limits, kind: str, sandbox_id: str,
                    package: str) -> Container:
    """Start a container that only waits, with the limits, no network and no privileges beyond setup's."""
    container = create_container(tracker, image, limits, kind, sandbox_id, package)
    container.start()
    return container


def create_container(tracker: Tracker, image: str, limits: Limits, kind: str, sandbox_id: str, package: str,
                     entrypoint: list[str] = KEEP_ALIVE, environment: dict[str, str] | None = None,
                     working_dir: str = "/", stdin: bool = False) -> Container:
    """Create (not start) a tracked container with the limits, no network and no privileges beyond setup's.

    With `stdin`, its main process reads what is sent on an attached socket, until that socket's write side closes.
    """
    api = tracker.client.api
    host = dict(
        init=True, network_mode=NETWORK_MODE, cap_drop=["ALL"], cap_add=ROOT_CAPABILITIES,
        security_opt=["no-new-privileges"], nano_cpus=int(limits.cpus * 1e9), mem_limit=f"{limits.memory_mb}m",
        memswap_limit=f"{limits.memory_mb}m", pids_limit=limits.pids,
        ulimits=[Ulimit(name="fsize", soft=limits.storage_mb * 1024 * 1024, hard=limits.storage_mb * 1024 * 1024)],
    )

    def create(**extra: object) -> str:
        return str(api.create_container(
            image, entrypoint=entrypoint, command=[], detach=not stdin, stdin_open=stdin, user="0",
            working_dir=working_dir, hostname="arena", environment=environment or {},
            network_disabled=NETWORK_MODE == "none", labels=labels(kind, sandbox_id, package),
            host_config=api.create_host_config(**host, **extra))["Id"])

    probing = tracker.storage_opt_supported is None
    with tracker.storage_opt_probe if probing else contextlib.nullcontext():
        if tracker.storage_opt_supported is not False:
            try:
                container_id = create(storage_opt={"size": f"{limits.storage_mb}m"})
                tracker.storage_opt_supported = True
            except APIError as exc:
                if not storage_opt_refused(exc):
                    raise
                tracker.storage_opt_supported = False
    if tracker.storage_opt_supported is False:
        container_id = create()
    tracker.add_container(container_id)
    return tracker.client.containers.prepare_model({"Id": container_id})  # no inspect round trip: only the id is used


def storage_opt_refused(error: APIError) -> bool:
    """Whether the engine refused a container only because its storage driver cannot cap a container's size."""
    message = str(error).lower()
    return any(sign in message for sign in ("storage-opt", "storage_opt", "storage opt", "quota"))


def folder_files(source: Path, target: str) -> list[tuple[str, bytes]]:
    """(path in the container, content) of every file of a package folder (or one file) copied to target; links and
    caches skipped."""
    if source.is_file():
        return [(target, source.read_bytes())]
    return [(f"{target}/{path.relative_to(source).as_posix()}", path.read_bytes())
            for path in sorted(source.rglob("*"))
            if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts]
