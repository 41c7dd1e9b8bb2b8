"""The storage watch: where the engine cannot cap a container's writable layer (overlay2 on most filesystems), the
sandbox measures that layer while the agent acts and stops the container once it grows past the package's limit.

The file-size limit (an rlimit) already bounds each file; this bounds their sum, so no episode can fill the disk.
"""

from __future__ import annotations

import contextlib
import threading

import docker
from docker.errors import DockerException

POLL_INTERVAL_S = 1.0


def writable_layer_bytes(client: docker.DockerClient, container_id: str) -> int | None:
    """The bytes a container has written to its own layer, as the engine counts them; None if it cannot say."""
    with contextlib.suppress(DockerException):
        rows = client.api.containers(all=True, filters={"id": container_id}, size=True)
        if rows and isinstance(rows[0].get("SizeRw"), int):
            return int(rows[0]["SizeRw"])
    return None


class StorageWatch:
    """Measures one container every POLL_INTERVAL_S in the background (and on demand), and kills it once its layer
    holds more than `limit_bytes`. `exceeded_bytes` then says how much it held."""

    def __init__(self, client: docker.DockerClient, container_id: str, limit_bytes: int,
                 interval_s: float = POLL_INTERVAL_S) -> None:
        self.client = client
        self.container_id = container_id
        self.limit_bytes = limit_bytes
        self.exceeded_bytes: int | None = None
        self._interval_s = interval_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="arena-storage-watch", daemon=True)

    def __enter__(self) -> StorageWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._thread.join()

    def check(self) -> bool:
        """Measure now; past the limit, stop the container. True once the limit has been passed."""
        if self.exceeded_bytes is not None:
            return True
        held = writable_layer_bytes(self.client, self.container_id)
        if held is None or held <= self.limit_bytes:
            return False
        self.exceeded_bytes = held
        with contextlib.suppress(DockerException):
            self.client.api.kill(self.container_id)
        return True

    def _poll(self) -> None:
        while not self._stopped.wait(self._interval_s):
            if self.check():
                return
