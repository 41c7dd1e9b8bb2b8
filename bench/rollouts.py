"""Benchmark: rollout episodes per minute through the session API against a bare docker-SDK loop doing the same work.

One episode, both ways: start a container from the instance's committed initial state, run 5 shell commands as the
agent user, stop it, commit the final state, and verify it in a fresh container from that snapshot (verifier.py and
its data copied in, run as root, reward file read back). The arena's side is `Sandbox.open_episode(start_from=...)` →
`start()` → 5 × `step(Shell)` → `finish()`; the bare side is the docker SDK alone (containers.run, exec_run,
commit, put_archive, wait, get_archive), with the same limits and no network. Both run N episodes at concurrency C
(1, 4, 16) on the same engine and cores, alternating which goes first; the ratio is arena / bare (above 1: faster).

    .venv/bin/python bench/rollouts.py [--package environments/ledger-reconciliation] [--episodes 16]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tarfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.agent_interface import Shell  # noqa: E402
from sandbox.containers import folder_files  # noqa: E402
from sandbox.layout import OUTPUT, VERIFIER, VERIFIER_DIR  # noqa: E402
from sandbox.outcomes import InitialState  # noqa: E402
from sandbox.sandbox import Sandbox  # noqa: E402
from taskpkg.loader import load_package  # noqa: E402
from taskpkg.package import TaskPackage  # noqa: E402

COMMANDS = ("ls -la", "head -n 5 *.csv 2>/dev/null || ls", "wc -l * 2>/dev/null | tail -n 1", "id -u",
            "echo '{}' > scratch.json")


def arena_episode(sandbox: Sandbox, package: TaskPackage, state: InitialState) -> float | None:
    """One episode through the session API; returns the reward."""
    with sandbox.open_episode(package, state.instance, "bench", start_from=state) as session:
        session.start()
        for command in COMMANDS:
            session.step(Shell(command, 30))
        return session.finish().reward


def bare_episode(sandbox: Sandbox, package: TaskPackage, state: InitialState) -> float | None:
    """The same episode with the docker SDK only."""
    client, limits = sandbox.client, package.limits
    resources = dict(network_mode="none", mem_limit=f"{limits.memory_mb}m", nano_cpus=int(limits.cpus * 1e9),
                     pids_limit=limits.pids, cap_drop=["ALL"], security_opt=["no-new-privileges"])
    agent = client.containers.run(state.image, entrypoint=["sleep", "infinity"], detach=True, user="0",
                                  **resources)  # the snapshot keeps the entrypoint it was committed with
    snapshot = verifier = None
    try:
        for command in COMMANDS:
            agent.exec_run(["sh", "-c", command], user="1000:1000", workdir="/workspace")
        agent.kill()
        snapshot = agent.commit()
        files = [(VERIFIER, package.verifier_file.read_bytes())]
        for data in package.verifier_data:
            files += folder_files(package.root / data, f"{VERIFIER_DIR}/{data.rstrip('/')}")
        verifier = client.containers.create(
            snapshot.id, entrypoint=["sh", "-c", f"mkdir -p /arena/output && python3 -I {VERIFIER}"], user="0",
            environment={"ARENA_INSTANCE": str(state.instance), "ARENA_WORKSPACE": "/workspace",
                         "ARENA_OUTPUT": OUTPUT}, **resources)
        verifier.put_archive("/", _tar(files))
        verifier.start()
        verifier.wait(timeout=limits.verifier_timeout_s)
        stream, _ = verifier.get_archive(OUTPUT)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            member = archive.extractfile(archive.getmembers()[0])
            return json.loads(member.read())["reward"] if member else None
    finally:
        for container in (agent, verifier):
            if container is not None:
                container.remove(force=True)
        if snapshot is not None:
            client.images.remove(snapshot.id, force=True)


def _tar(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, content in files:
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def per_minute(run: Callable[[Sandbox, TaskPackage, InitialState], object], sandbox: Sandbox, package: TaskPackage,
               states: list[InitialState], concurrency: int, episodes: int) -> float:
    """Episodes per minute for `episodes` episodes at `concurrency`."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        rewards = list(pool.map(lambda i: run(sandbox, package, states[i % len(states)]), range(episodes)))
    assert all(r is not None for r in rewards), rewards
    return episodes / (time.perf_counter() - started) * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(ROOT / "environments" / "ledger-reconciliation"))
    parser.add_argument("--episodes", type=int, default=16, help="episodes per measurement")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    package = load_package(Path(args.package)).package
    assert package is not None
    with Sandbox() as sandbox:
        states = [sandbox.initial_state(package, i) for i in range(4)]
        arena_episode(sandbox, package, states[0])  # warm the image and caches for both sides
        print(f"{package.name}: {args.episodes} episodes of 5 shell calls each, per concurrency")
        print(f"{'concurrency':>11} {'arena /min':>11} {'bare /min':>10} {'ratio':>6}")
        for index, concurrency in enumerate(args.concurrency):
            order = [("arena", arena_episode), ("bare", bare_episode)]
            measured = {name: per_minute(run, sandbox, package, states, concurrency, args.episodes)
                        for name, run in (order if index % 2 == 0 else order[::-1])}
            print(f"{concurrency:>11} {measured['arena']:>11.1f} {measured['bare']:>10.1f} "
                  f"{measured['arena'] / measured['bare']:>5.2f}x")
        for state in states:
            sandbox.release(state)


if __name__ == "__main__":
    main()
