"""`arena gc`: remove every container and snapshot labelled by the arena, whoever left them."""

from __future__ import annotations

import docker
from docker.errors import NotFound

from sandbox.engine import LABEL_KIND, LABEL_MANAGED, LABEL_OWNER

KEPT_KINDS = frozenset({"env-image"})  # cached builds, kept unless asked


def collect_garbage(client: docker.DockerClient, include_images: bool = False,
                    owner: str | None = None) -> dict[str, int]:
    """Force-remove arena containers, then arena images (snapshots always; cached builds with include_images).

    With `owner`, only what processes started with ARENA_OWNER=owner created.
    """
    removed = {"containers": 0, "images": 0}
    label = [f"{LABEL_MANAGED}=true"] + ([f"{LABEL_OWNER}={owner}"] if owner else [])
    for container in client.containers.list(all=True, filters={"label": label}):
        try:
            container.remove(force=True, v=True)
            removed["containers"] += 1
        except NotFound:
            pass
    for image in client.images.list(filters={"label": label}):
        if image.labels.get(LABEL_KIND) in KEPT_KINDS and not include_images:
            continue
        try:
            client.images.remove(image.id, force=True)
            removed["images"] += 1
        except NotFound:
            pass
    return removed
