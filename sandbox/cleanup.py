"""`arena gc`: remove every container and snapshot labelled by the arena, whoever left them."""

from __future__ import annotations

import docker
from docker.errors import NotFound

from sandbox.engine import LABEL_KIND, LABEL_MANAGED

KEPT_KINDS = frozenset({"env-image"})  # cached builds, kept unless asked


def collect_garbage(client: docker.DockerClient, include_images: bool = False) -> dict[str, int]:
    """Force-remove arena containers, then arena images (snapshots always; cached builds with include_images)."""
    removed = {"containers": 0, "images": 0}
    for container in client.containers.list(all=True, filters={"label": f"{LABEL_MANAGED}=true"}):
        try:
            container.remove(force=True, v=True)
            removed["containers"] += 1
        except NotFound:
            pass
    for image in client.images.list(filters={"label": f"{LABEL_MANAGED}=true"}):
        if image.labels.get(LABEL_KIND) in KEPT_KINDS and not include_images:
            continue
        try:
            client.images.remove(image.id, force=True)
            removed["images"] += 1
        except NotFound:
            pass
    return removed
