"""Image builds as isolated as runs, where the machine holds anything worth stealing (the GPU job).

A package's Dockerfile is its own code, run as root while the image builds. On the GPU machine that is next to the
private suite, the artifact bucket's credentials, `HF_TOKEN` and the cloud's metadata endpoint, so there a build gets:
- **a network with no way out but the package registries**: an internal Docker network whose bridge has no
  address on the host (no route to the host, to 169.254.169.254 or to any private range), shared only with an egress
  proxy (sandbox.egress_proxy) that reaches the allowed registry names and refuses everything else; the build sees it
  through the standard `http_proxy`/`https_proxy` build arguments (apt, pip and npm read them);
- **limits**: memory and CPUs for every RUN step (the engine's build limits), processes and writable-layer size
  enforced on each step's container as soon as it appears (the classic builder takes no such limit), and the
  package's own `build_timeout_s`.

Configuration (environment variables; the SkyPilot task sets them, a contributor's machine leaves them unset):
  ARENA_BUILD_ISOLATION   `registries` (the above), `none` (the same network without the proxy: no way out at all)
                          or unset (the engine's default network, no extra limits: a contributor's machine, CI)
  ARENA_BUILD_PROXY_IMAGE an image with python3 to run the proxy in (the job's own image on the GPU machine)
  ARENA_BUILD_REGISTRIES  the registry host names (default: Debian, Ubuntu, PyPI and npm's)
  ARENA_BUILD_MEMORY_MB, ARENA_BUILD_CPUS, ARENA_BUILD_PIDS, ARENA_BUILD_STORAGE_MB
                          the limits of every RUN step (defaults 4096, 2, 512, 8192)
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import APIError, DockerException, NotFound

from sandbox.engine import labels

REGISTRIES = ("deb.debian.org", "security.debian.org", "archive.ubuntu.com", "security.ubuntu.com", "pypi.org",
              "files.pythonhosted.org", "registry.npmjs.org")
PROXY_ALIAS = "arena-egress"
PROXY_PORT = 3128
WATCH_S = 0.2
SIZE_EVERY = 5  # ticks between two looks at the writable layers' sizes
MODES = ("registries", "none")


class IsolationError(RuntimeError):
    """The isolated build could not be set up; the message says what to fix."""


@dataclass(frozen=True)
class BuildPolicy:
    """How a build is isolated: its network mode and its limits."""

    mode: str | None = None  # None: the engine's default network, no extra limits (a contributor's machine)
    proxy_image: str | None = None
    registries: tuple[str, ...] = REGISTRIES
    memory_mb: int = 4096
    cpus: int = 2
    pids: int = 512
    storage_mb: int = 8192

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BuildPolicy:
        mode = (env.get("ARENA_BUILD_ISOLATION") or "").strip() or None
        if mode is not None and mode not in MODES:
            raise IsolationError(f"ARENA_BUILD_ISOLATION={mode!r}: use registries or none")
        proxy = (env.get("ARENA_BUILD_PROXY_IMAGE") or "").strip() or None
        if mode == "registries" and proxy is None:
            raise IsolationError("ARENA_BUILD_ISOLATION=registries needs ARENA_BUILD_PROXY_IMAGE: an image with "
                                 "python3 to run the egress proxy in")
        names = tuple(h.strip() for h in (env.get("ARENA_BUILD_REGISTRIES") or "").split(",") if h.strip())
        limits = {}
        for name, variable in (("memory_mb", "ARENA_BUILD_MEMORY_MB"), ("cpus", "ARENA_BUILD_CPUS"),
                               ("pids", "ARENA_BUILD_PIDS"), ("storage_mb", "ARENA_BUILD_STORAGE_MB")):
            text = (env.get(variable) or "").strip()
            if text:
                if not text.isdigit() or int(text) < 1:
                    raise IsolationError(f"{variable}={text!r}: a whole number, at least 1")
                limits[name] = int(text)
        return cls(mode, proxy, names or REGISTRIES, **limits)


@dataclass
class Isolation:
    """What one isolated build uses: the build's network mode, its build arguments and engine limits, and what the
    watchdog stopped (a reason, else None)."""

    network_mode: str | None
    buildargs: dict[str, str] = field(default_factory=dict)
    container_limits: dict[str, object] = field(default_factory=dict)
    stopped: list[str] = field(default_factory=list)


@contextlib.contextmanager
def isolated(api: docker.APIClient, policy: BuildPolicy, sandbox_id: str, package: str) -> Iterator[Isolation]:
    """The network, proxy and watchdog of one build; everything is removed when the build is done."""
    if policy.mode is None:
        yield Isolation(None)
        return
    limits = {"memory": policy.memory_mb * 2**20, "memswap": policy.memory_mb * 2**20,
              "cpusetcpus": f"0-{max(0, policy.cpus - 1)}"}
    # A network of the build's own, even with no way out at all (`none`): the watchdog finds the build's RUN
    # containers by it, and never touches anyone else's.
    name = f"arena-build-{uuid.uuid4().hex[:12]}"
    _create_network(api, name, sandbox_id, package)
    proxy = None
    try:
        proxy = _start_proxy(api, policy, name, sandbox_id, package) if policy.mode == "registries" else None
        with _watchdog(api, policy, name, exclude=proxy) as isolation:
            isolation.container_limits = limits
            if proxy is not None:
                address = f"http://{PROXY_ALIAS}:{PROXY_PORT}"
                isolation.buildargs = {key: address for key in ("http_proxy", "https_proxy", "HTTP_PROXY",
                                                                "HTTPS_PROXY")}
            yield isolation
    finally:
        if proxy is not None:
            with contextlib.suppress(DockerException):
                api.remove_container(proxy, force=True)
        with contextlib.suppress(DockerException):
            api.remove_network(name)


def _create_network(api: docker.APIClient, name: str, sandbox_id: str, package: str) -> None:
    """An internal bridge without an address on the host: no gateway, no route anywhere but its members."""
    try:
        api.create_network(name, driver="bridge", internal=True, labels=labels("build-network", sandbox_id, package),
                           options={"com.docker.network.bridge.inhibit_ipv4": "true",
                                    "com.docker.network.bridge.enable_icc": "true"})
    except APIError as exc:
        raise IsolationError(f"could not create the build's isolated network: {exc.explanation or exc}") from None


def _start_proxy(api: docker.APIClient, policy: BuildPolicy, network: str, sandbox_id: str, package: str) -> str:
    """The egress proxy: on the default bridge (its way out) and on the build's network as PROXY_ALIAS."""
    source = (Path(__file__).with_name("egress_proxy.py")).read_text(encoding="utf-8")
    try:
        config = api.create_host_config(cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True,
                                        mem_limit="256m", pids_limit=256, network_mode="bridge", init=True)
        created = api.create_container(policy.proxy_image, ["python3", "-c", source, str(PROXY_PORT),
                                                            *policy.registries],
                                       user="65534:65534", host_config=config,
                                       labels=labels("build-proxy", sandbox_id, package))
        proxy = str(created["Id"])
        api.connect_container_to_network(proxy, network, aliases=[PROXY_ALIAS])
        api.start(proxy)
    except (APIError, NotFound) as exc:
        raise IsolationError(f"could not start the build's egress proxy from {policy.proxy_image}: "
                             f"{getattr(exc, 'explanation', None) or exc}") from None
    return proxy


@contextlib.contextmanager
def _watchdog(api: docker.APIClient, policy: BuildPolicy, network: str, exclude: str | None = None
              ) -> Iterator[Isolation]:
    """Cap the processes of every RUN step's container as it appears, and kill one whose writable layer outgrows
    the storage limit (the build then fails with the reason)."""
    isolation = Isolation(network)
    done = threading.Event()
    capped: set[str] = set()

    def watch() -> None:
        tick = 0
        while not done.wait(WATCH_S):
            tick += 1
            sizes = tick % SIZE_EVERY == 0  # the engine computes sizes slowly: not every tick
            try:
                running = api.containers(filters={"network": network}, size=sizes)
            except DockerException:
                continue
            for container in running:
                cid = container["Id"]
                if cid == exclude:
                    continue
                if cid not in capped:
                    _cap_processes(api, cid, policy.pids)
                    capped.add(cid)
                if int(container.get("SizeRw") or 0) > policy.storage_mb * 2**20:
                    isolation.stopped.append(f"a RUN step wrote more than {policy.storage_mb} MB")
                    with contextlib.suppress(DockerException):
                        api.kill(cid)

    worker = threading.Thread(target=watch, name="build-watchdog", daemon=True)
    worker.start()
    try:
        yield isolation
    finally:
        done.set()
        worker.join(5)


def _cap_processes(api: docker.APIClient, container: str, pids: int) -> None:
    """The engine's update call (docker-py's update_container has no process limit)."""
    with contextlib.suppress(DockerException):
        response = api._post_json(api._url("/containers/{0}/update", container), data={"PidsLimit": pids})
        api._raise_for_status(response)
