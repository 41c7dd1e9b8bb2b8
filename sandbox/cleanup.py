"""`arena gc`: remove every container and snapshot labelled by the arena, whoever left them."""

from __future__ import annotations

import docker
from docker.errors import APIError, NotFound

from sandbox.engine import LABEL_KIND, LABEL_MANAGED, LABEL_OWNER, LABEL_SESSION

KEPT_KINDS = frozenset({"env-image"})  # cached builds, kept unless asked


def collect_garbage(client: docker.DockerClient, include_images: bool = False, owner: str | None = None,
                    session: str | None = None) -> dict[str, int]:
    """Force-remove arena containers, then arena images (snapshots always; cached builds with include_images).

    With `owner`, only what processes started with ARENA_OWNER=owner created; with `session`, only one Sandbox's.
    """
    removed = {"containers": 0, "images": 0, "failed": 0}
    label = [f"{LABEL_MANAGED}=true"] + ([f"{LABEL_OWNER}={owner}"] if owner else []) + (
        [f"{LABEL_SESSION}={session}"] if session else [])
    for container in client.containers.list(all=True, sparse=True, filters={"label": label}):
        try:
            client.api.remove_container(container.id, force=True, v=True)
            removed["containers"] += 1
        except NotFound:
            pass
        except APIError:
            removed["failed"] += 1
    for image in client.images.list(filters={"label": label}):
        if image.labels.get(LABEL_KIND) in KEPT_KINDS and not include_images:
            continue
        try:
            client.images.remove(image.id, force=True)
            removed["images"] += 1
        except NotFound:
            pass
        except APIError:  # still in use by a container another process is removing: the next gc gets it
            removed["failed"] += 1
    return removed
