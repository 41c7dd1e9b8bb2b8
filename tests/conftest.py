"""Shared fixtures: a real Docker engine for the dynamic tests, and a leak check when the session ends."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from sandbox.engine import LABEL_MANAGED, EngineUnavailable, connect


@pytest.fixture(scope="session")
def engine() -> Iterator[object]:
    """A client for the real engine. Skips without one locally; in CI (CI=true) a missing engine is a failure."""
    try:
        client = connect()
    except EngineUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide a Docker engine: {exc}")
        pytest.skip(str(exc))
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    """After the whole suite: no arena container remains, and every arena image is removed."""
    yield
    try:
        client = connect()
    except EngineUnavailable:
        return
    leaked = client.containers.list(all=True, filters={"label": f"{LABEL_MANAGED}=true"})
    snapshots = [i for i in client.images.list(filters={"label": f"{LABEL_MANAGED}=true"})
                 if i.labels.get("org.posttrain-arena.kind") == "snapshot"]
    from sandbox.cleanup import collect_garbage

    collect_garbage(client, include_images=True)
    assert not leaked, f"containers leaked by the test suite: {[c.name for c in leaked]}"
    assert not snapshots, f"snapshot images leaked by the test suite: {[i.tags for i in snapshots]}"
