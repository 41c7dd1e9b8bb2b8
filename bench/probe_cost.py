"""Benchmark: what the reading (ARENA711) and steering (ARENA712) probes add to `arena check`'s dynamic phase.

On a warm image, the dynamic checks run three times on the same package and instances: the core trials alone
(oracle and do-nothing on each instance, determinism: the fairest baseline, since every probe reuses their shared
instances), then with the reading probe, then with the steering probe. Each probe runs on every sampled instance (with
more than six instances sampled, the oracle and so the probes run on six of them).
Printed per probe: its trials, their mean duration, the wall time it adds and that as a ratio of the core trials'.

    .venv/bin/python bench/probe_cost.py [--package environments/ledger-reconciliation] [--instances 3] [--rounds 2]

Measured (`--rounds 1`, load 6 on 2 shared cores,
ledger-reconciliation): core trials 2.6 s wall (oracle trial 1.63 s mean); read-answers 2.18 s a trial, adding 0.92x
the core trials; steer-verifier 1.31 s a trial, adding 0.61x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.engine import OWNER_VARIABLE  # noqa: E402
from sandbox.sandbox import Sandbox  # noqa: E402
from taskpkg.loader import load_package  # noqa: E402
from taskpkg.package import TaskPackage  # noqa: E402
from validators.dynamic import READ_PROBE, STEER_PROBE, run_dynamic_checks  # noqa: E402

os.environ.setdefault(OWNER_VARIABLE, f"bench-{uuid.uuid4().hex[:10]}")


def timed(sandbox: Sandbox, package: TaskPackage, instances: int,
          probes: tuple[str, ...]) -> tuple[float, list[dict]]:
    """Wall seconds of one dynamic run, and its trials."""
    started = time.perf_counter()
    result = run_dynamic_checks(package, sandbox, instances=instances, probes=probes)
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    return time.perf_counter() - started, result.trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", default=str(ROOT / "environments" / "ledger-reconciliation"))
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    arguments = parser.parse_args()
    package = load_package(Path(arguments.package)).package
    assert package is not None
    with Sandbox() as sandbox:
        sandbox.image(package)  # warm: the build is not what is measured
        runs: dict[str, list[float]] = {"core": [], READ_PROBE: [], STEER_PROBE: []}
        trials: dict[str, list[float]] = {READ_PROBE: [], STEER_PROBE: [], "oracle": []}
        for _ in range(arguments.rounds):
            for name, probes in (("core", ()), (READ_PROBE, (READ_PROBE,)), (STEER_PROBE, (STEER_PROBE,))):
                seconds, done = timed(sandbox, package, arguments.instances, probes)
                runs[name].append(seconds)
                for trial in done:
                    agent = trial["agent"].removeprefix("probe:")
                    if agent in trials:
                        trials[agent].append(trial["duration_s"])
    core = statistics.median(runs["core"])
    print(f"{package.name}, {arguments.instances} instances, median of {arguments.rounds} warm rounds")
    print(f"core trials (oracle, do-nothing, determinism): {core:.1f} s wall; oracle trial "
          f"{statistics.mean(trials['oracle']):.2f} s mean")
    for name in (READ_PROBE, STEER_PROBE):
        added = statistics.median(runs[name]) - core
        print(f"{name}: {len(trials[name]) // arguments.rounds} trials, {statistics.mean(trials[name]):.2f} s mean "
              f"each; adds {added:.1f} s wall = {added / core:.2f}x the core trials")


if __name__ == "__main__":
    main()
