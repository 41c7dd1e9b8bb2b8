"""`arena gc`: remove the containers and snapshots labelled by the arena (whoever left them), or list them first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.engine import LABEL_KIND, LABEL_MANAGED, LABEL_OWNER, LABEL_PACKAGE, LABEL_SANDBOX

KEPT_KINDS = frozenset({"env-image"})  # cached builds, kept unless asked


@dataclass(frozen=True)
class Leftover:
    """An arena container or image: what it is (`container` or `image`), its id, the arena's kind label (agent,
    snapshot, env-image, ...) and the package it belongs to."""

    what: str
    id: str
    kind: str
    package: str


def labelled_images(client: docker.DockerClient, label: list[str]) -> list[dict[str, Any]]:
    """The engine's listing of images with these labels, as one call: no inspect per image, so an image another
    process removes mid-listing cannot fail it (the SDK's `images.list` inspects each and raises)."""
    images: list[dict[str, Any]] = client.api.images(filters={"label": label})
    return images


def leftovers(client: docker.DockerClient, include_images: bool = False, owner: str | None = None,
              sandbox_id: str | None = None, package: str | None = None) -> list[Leftover]:
    """Arena containers, then arena images (snapshots always; cached builds with include_images), optionally only
    those of one owner (ARENA_OWNER), one Sandbox (by its id), or one package."""
    label = [f"{LABEL_MANAGED}=true"] + [f"{name}={value}" for name, value in
                                         ((LABEL_OWNER, owner), (LABEL_SANDBOX, sandbox_id), (LABEL_PACKAGE, package))
                                         if value]
    found = []
    for container in client.containers.list(all=True, sparse=True, filters={"label": label}):
        labels = container.attrs.get("Labels") or {}  # a sparse listing: no inspect per container
        found.append(Leftover("container", container.id, labels.get(LABEL_KIND, "?"), labels.get(LABEL_PACKAGE, "")))
    for image in labelled_images(client, label):
        labels = image.get("Labels") or {}
        kind = labels.get(LABEL_KIND, "?")
        if kind not in KEPT_KINDS or include_images:
            found.append(Leftover("image", image["Id"], kind, labels.get(LABEL_PACKAGE, "")))
    return found


def collect_garbage(client: docker.DockerClient, include_images: bool = False, owner: str | None = None,
                    sandbox_id: str | None = None, package: str | None = None) -> dict[str, int]:
    """Force-remove what `leftovers` finds (containers first, so their images are free). Returns the counts of
    containers and images removed, and of those that failed (still in use: the next run gets them)."""
    removed = {"containers": 0, "images": 0, "failed": 0}
    for leftover in leftovers(client, include_images, owner, sandbox_id, package):
        try:
            if leftover.what == "container":
                client.api.remove_container(leftover.id, force=True, v=True)
            else:
                client.images.remove(leftover.id, force=True)
            removed[f"{leftover.what}s"] += 1
        except NotFound:
            pass
        except APIError:
            removed["failed"] += 1
    return removed
