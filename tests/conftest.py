"""Shared fixtures: a real Docker engine for the dynamic tests, and a leak check when the session ends."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from sandbox.cleanup import collect_garbage, labelled_images
from sandbox.engine import LABEL_KIND, LABEL_MANAGED, LABEL_OWNER, OWNER_VARIABLE, EngineUnavailable, connect
from sandbox.sandbox import Sandbox
from tests.support.wheelhouse import Wheelhouse, use_wheelhouse

pytest_plugins = ("tests.conftest_github",)

# Everything this test run creates (here and in `arena` subprocesses) carries this owner label, so the leak check
# and the cleanup below see this run's resources only, never another process's on the same engine.
# Each pytest-xdist worker is an owner of its own: a worker's cleanup at its end must not remove what another worker
# still uses (the workers inherit the controller's environment, so the label would otherwise be shared).
_RUN_OWNER = os.environ.get(OWNER_VARIABLE) or f"pytest-{uuid.uuid4().hex[:10]}"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
OWNER = f"{_RUN_OWNER}-{_WORKER}" if _WORKER and not _RUN_OWNER.endswith(f"-{_WORKER}") else _RUN_OWNER
os.environ[OWNER_VARIABLE] = OWNER
# Dynamic results this run caches stay in this run: tests never reuse results of an earlier run.
os.environ.setdefault("ARENA_CHECK_CACHE", tempfile.mkdtemp(prefix="arena-test-cache-"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tier the suite: every test that uses the engine fixture (directly or through another fixture) is marked
    `engine`, so `-m "not engine and not slow"` is the fast tier that needs no Docker."""
    for item in items:
        if "engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.engine)


SLOW_REPORT_S = 60.0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Name every test that takes a minute or more as it finishes, so a long CI log shows where the time went even
    when the run is cut short before pytest's own --durations table."""
    if report.when in ("setup", "call") and report.duration >= SLOW_REPORT_S:
        print(f"\n[slow] {report.nodeid} ({report.when}): {report.duration:.0f} s", flush=True)


def arena_resources(client: Any, owner: str = OWNER) -> tuple[list, list]:
    """An owner's (default: this run's) arena containers and snapshot images still on the engine."""
    label = [f"{LABEL_MANAGED}=true", f"{LABEL_OWNER}={owner}"]
    containers = client.containers.list(all=True, sparse=True, filters={"label": label})
    snapshots = [image for image in labelled_images(client, label)
                 if (image.get("Labels") or {}).get(LABEL_KIND) == "snapshot"]
    return containers, snapshots


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    """A client for the real engine. Skips without one locally; in CI (CI=true) a missing engine is a failure."""
    try:
        client = connect()
    except EngineUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide a Docker engine: {exc}")
        pytest.skip(str(exc))
    yield client
    client.close()


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    """A Sandbox on the real engine for one test module; everything it made is removed after the module."""
    with Sandbox(engine) as box:
        yield box


@pytest.fixture
def pip_registry(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Wheelhouse:
    """pip's only registry for this test (and the pins `arena import` resolves with it): an empty local index, to
    which a test adds the wheels it wants pip to find."""
    return use_wheelhouse(monkeypatch, tmp_path_factory.mktemp("registry"))


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    """After the whole suite: no container or snapshot of this run remains; its cached images are removed too."""
    yield
    try:
        client = connect()
    except EngineUnavailable:
        return
    leaked, snapshots = arena_resources(client)
    collect_garbage(client, include_images=True, owner=OWNER)
    assert not leaked, f"containers leaked by the test suite: {[c.id[:12] for c in leaked]}"
    assert not snapshots, f"snapshot images leaked by the test suite: {[i.get('RepoTags') for i in snapshots]}"
