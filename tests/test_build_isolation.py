"""Image builds as isolated as runs, on the code path the GPU job uses (sandbox.images.ensure_image with the GPU
task's ARENA_BUILD_ISOLATION=registries): a hostile Dockerfile that tries the cloud's metadata address, the host and
the proxy's back doors gets no route and 403s, while the package registries stay reachable through the proxy."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import uuid
from pathlib import Path

import pytest

from sandbox.images import BuildFailed, ensure_image
from taskpkg.loader import load_package

pytestmark = pytest.mark.slow  # builds images: tens of seconds

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"
# Every probe prints what it got; a build that reached anything says REACHED.
HOSTILE = r"""FROM debian:bookworm-slim
RUN echo {nonce} && for target in 169.254.169.254/80 {gateway}/{port}; do \
      if timeout 8 bash -c "exec 3<>/dev/tcp/$target" 2>/dev/null; then echo "REACHED $target"; \
      else echo "NO ROUTE $target"; fi; done
RUN for request in "CONNECT 169.254.169.254:80" "GET http://169.254.169.254/latest/meta-data/" \
      "CONNECT metadata.google.internal:443" "CONNECT {gateway}:{port}" "CONNECT localhost:443" \
      "CONNECT deb.debian.org:22" "CONNECT example.org:443"; do \
      answer=$(timeout 10 bash -c 'exec 3<>/dev/tcp/arena-egress/3128 \
        && printf "%s HTTP/1.1\r\nHost: x\r\n\r\n" "$1" >&3 && head -n 1 <&3' _ "$request" | tr -d '\r'); \
      echo "PROXY $request -> $answer"; done
RUN echo {nonce} && apt-get update -o Acquire::Retries=0 >/dev/null 2>&1 && echo "REGISTRY OK" || echo "REGISTRY FAILED"
"""


def package_with(tmp_path: Path, dockerfile: str) -> object:
    root = tmp_path / "echo-word"
    shutil.copytree(ECHO_WORD, root)
    (root / "environment" / "Dockerfile").write_text(dockerfile)
    loaded = load_package(root)
    assert loaded.package is not None, loaded.diagnostics
    return loaded.package


def test_a_hostile_build_reaches_the_registries_and_nothing_else(engine: object, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    proxy_image = ensure_image(engine, load_package(ECHO_WORD).package, "isolation-test").tag  # has python3
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    ipam = engine.networks.get("bridge").attrs["IPAM"]["Config"][0]
    gateway = ipam.get("Gateway") or str(ipaddress.ip_network(ipam["Subnet"])[1])  # the host, seen from Docker
    port = listener.getsockname()[1]
    package = package_with(tmp_path, HOSTILE.format(gateway=gateway, port=port, nonce=uuid.uuid4().hex))
    before = {n.name for n in engine.networks.list() if n.name.startswith("arena-build-")}  # another run's, if any
    monkeypatch.setenv("ARENA_BUILD_ISOLATION", "registries")
    monkeypatch.setenv("ARENA_BUILD_PROXY_IMAGE", proxy_image)
    built = ensure_image(engine, package, "isolation-test")
    output = "\n".join(built.log)
    assert not [line for line in built.log if line.startswith("REACHED ")], output
    assert "NO ROUTE 169.254.169.254/80" in output and f"NO ROUTE {gateway}/{port}" in output
    proxied = [line for line in built.log if line.startswith("PROXY ")]
    assert len(proxied) == 7 and all(line.endswith("-> HTTP/1.1 403 Forbidden") for line in proxied), proxied
    assert "REGISTRY OK" in built.log, output  # apt reached Debian through the proxy
    with pytest.raises(OSError):  # nothing knocked on the host's door
        listener.accept()
    listener.close()
    names = [n.name for n in engine.networks.list() if n.name.startswith("arena-build-") and n.name not in before]
    assert names == [] and not engine.containers.list(all=True, filters={"label": "posttrain-arena.kind=build-proxy"})


def test_with_no_network_a_build_gets_nothing_and_its_memory_is_capped(engine: object, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    package = package_with(tmp_path, "FROM debian:bookworm-slim\n"
                                     f"RUN echo {uuid.uuid4().hex} && ls /sys/class/net && "
                                     "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                                     "2>/dev/null || cat /sys/fs/cgroup/memory.max\n"
                                     "RUN bash -c 'exec 3<>/dev/tcp/deb.debian.org/80'\n")
    monkeypatch.setenv("ARENA_BUILD_ISOLATION", "none")
    with pytest.raises(BuildFailed) as failed:
        ensure_image(engine, package, "isolation-test")
    assert "environment/Dockerfile:3" in str(failed.value)  # not even a registry is reached
    assert "lo" in failed.value.log and str(4096 * 2**20) in failed.value.log  # loopback only; the memory cap


@pytest.mark.parametrize(("limit", "run", "reason"), [
    ("ARENA_BUILD_PIDS", "sleep 2; for i in $(seq 1 200); do sleep 30 & done; wait", "Dockerfile:2"),
    ("ARENA_BUILD_STORAGE_MB", "sleep 2; dd if=/dev/zero of=/fill bs=1M count=400; sleep 5",
     "a RUN step wrote more than 64 MB"),
])
def test_a_build_step_is_held_to_its_process_and_storage_limits(engine: object, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, limit: str, run: str,
                                                              reason: str) -> None:
    package = package_with(tmp_path, f"FROM debian:bookworm-slim\nRUN echo {uuid.uuid4().hex}; {run}\n")
    monkeypatch.setenv("ARENA_BUILD_ISOLATION", "none")
    monkeypatch.setenv(limit, "64")
    with pytest.raises(BuildFailed) as failed:
        ensure_image(engine, package, "isolation-test")
    assert reason in str(failed.value), (str(failed.value), failed.value.log)
    if limit == "ARENA_BUILD_PIDS":
        assert "fork" in failed.value.log.lower(), failed.value.log  # the 64th process could not start
