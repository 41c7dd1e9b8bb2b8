"""Environment images: content-hashed tags, cached reuse, builds bounded by the package's build timeout."""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field

import docker
from docker.errors import APIError, ImageNotFound

from sandbox.engine import API_TIMEOUT_S, labels
from taskpkg.digest import tree_digest
from taskpkg.model import TaskPackage

IMAGE_REPOSITORY = "posttrain-arena/env"
_STEP = re.compile(r"^Step \d+/\d+ : (.*)$")


class BuildFailed(RuntimeError):
    """The image did not build; `step` is the Dockerfile instruction that failed, `log` the build's output tail."""

    def __init__(self, message: str, step: str | None, log: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.step = step
        self.log = log
        self.timed_out = timed_out


@dataclass
class BuiltImage:
    """An environment image ready for episodes."""

    tag: str
    cached: bool
    duration_s: float
    log: list[str] = field(default_factory=list)


def image_tag(package: TaskPackage) -> str:
    """The tag of the package's image: its name and the hash of its build context."""
    return f"{IMAGE_REPOSITORY}:{package.name}-{tree_digest(package.environment_dir)[:16]}"


def ensure_image(client: docker.DockerClient, package: TaskPackage, session: str, tag: str | None = None) -> BuiltImage:
    """Reuse the image if this exact context was built before, otherwise build it within the build timeout."""
    started = time.perf_counter()
    tag = tag or image_tag(package)
    try:
        client.images.get(tag)
        return BuiltImage(tag, cached=True, duration_s=time.perf_counter() - started)
    except ImageNotFound:
        pass
    log = _build(package, tag, session)
    return BuiltImage(tag, cached=False, duration_s=time.perf_counter() - started, log=log)


def _build(package: TaskPackage, tag: str, session: str) -> list[str]:
    """Stream a build on a dedicated connection; closing it on timeout makes the engine cancel the build."""
    api = docker.APIClient(base_url=_base_url(), timeout=API_TIMEOUT_S)
    lines: list[str] = []
    outcome: dict[str, object] = {}

    def consume() -> None:
        try:
            stream = api.build(path=str(package.environment_dir), tag=tag, rm=True, forcerm=True, decode=True,
                               labels=labels("env-image", session, package.name), pull=False)
            for chunk in stream:
                if "stream" in chunk:
                    lines.extend(line for line in chunk["stream"].splitlines() if line.strip())
                if "error" in chunk:
                    outcome["error"] = chunk["error"].strip()
        except (APIError, OSError, docker.errors.DockerException) as exc:
            outcome.setdefault("error", str(exc))

    worker = threading.Thread(target=consume, name=f"build-{package.name}", daemon=True)
    worker.start()
    worker.join(package.limits.build_timeout_s)
    timed_out = worker.is_alive()
    if timed_out:
        api.close()
        worker.join(10)
    api.close()
    step = next((m.group(1) for line in reversed(lines) if (m := _STEP.match(line))), None)
    tail = "\n".join(lines[-30:])
    if timed_out:
        raise BuildFailed(f"the build did not finish within limits.build_timeout_s ({package.limits.build_timeout_s}"
                          f" s); it was at: {step or 'the start'}", step, tail, timed_out=True)
    if "error" in outcome:
        raise BuildFailed(f"the build failed at `{step or '?'}`: {outcome['error']}", step, tail)
    return lines


def _base_url() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
