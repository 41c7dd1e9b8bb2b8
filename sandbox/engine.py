"""Connecting to the Docker engine, and labelling everything the arena creates."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException

LABEL_MANAGED = "org.posttrain-arena.managed"
LABEL_KIND = "org.posttrain-arena.kind"
LABEL_PACKAGE = "org.posttrain-arena.package"
LABEL_SANDBOX = "org.posttrain-arena.session"  # the key keeps its first name: `arena gc` finds old leftovers
LABEL_OWNER = "org.posttrain-arena.owner"
OWNER_VARIABLE = "ARENA_OWNER"  # optional: who started this process tree (e.g. one test run), for scoped cleanup
API_TIMEOUT_S = 120


class EngineUnavailable(RuntimeError):
    """No Docker engine answers; the message says how to start one."""


def connect() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (default: the local socket). Raises EngineUnavailable."""
    try:
        client = docker.from_env(timeout=API_TIMEOUT_S)
        client.ping()
    except DockerException as exc:
        raise EngineUnavailable(
            f"no Docker engine answers ({exc.__class__.__name__}); start one with `scripts/ensure-engine` "
            "(Debian: installs docker.io and starts dockerd) or Docker Desktop, or set DOCKER_HOST"
        ) from None
    return client


def engine_available() -> bool:
    """Whether an engine answers (False when ARENA_NO_DOCKER=1 forces static-only behaviour)."""
    if os.environ.get("ARENA_NO_DOCKER") == "1":
        return False
    try:
        connect().close()
    except EngineUnavailable:
        return False
    return True


def new_sandbox_id() -> str:
    """A Sandbox's id: the label shared by every resource it creates, swept when it closes."""
    return uuid.uuid4().hex[:12]


def labels(kind: str, sandbox_id: str, package: str = "") -> dict[str, str]:
    """The labels every arena resource carries, so `arena gc` can find what a crash left behind."""
    found = {LABEL_MANAGED: "true", LABEL_KIND: kind, LABEL_SANDBOX: sandbox_id}
    if package:
        found[LABEL_PACKAGE] = package
    if os.environ.get(OWNER_VARIABLE):
        found[LABEL_OWNER] = os.environ[OWNER_VARIABLE]
    return found


def overlay_folders(inspected: dict[str, Any]) -> list[Path] | None:
    """An inspected image's or container's overlay2 folders, its own layer first, where the engine runs on this
    machine (a local socket) and keeps them so: files can then be read from the host, not through the engine's
    archives. None otherwise; whether each folder can be read is the caller's to check."""
    if not os.environ.get("DOCKER_HOST", "unix://").startswith("unix://"):
        return None
    driver = inspected.get("GraphDriver") or {}
    data = driver.get("Data") or {}
    if driver.get("Name") != "overlay2" or not data.get("UpperDir"):
        return None
    return [Path(data["UpperDir"]), *(Path(f) for f in (data.get("LowerDir") or "").split(":") if f)]
