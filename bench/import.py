"""Benchmark: `arena import` of 500 generated tasks (Harbor, BenchFlow and older Terminal-Bench; single- and
multi-scene, a separate verifier image, a guarded verifier shim).

Each task is a copy of a fixture under tests/fixtures/interop/ with its own name. Prints the time per task of the
import alone, and of import plus the static check that `arena import` runs on the result.

    .venv/bin/python bench/import.py [--tasks 500]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interop import import_task
from validators.static import run_static_checks

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "interop"
SOURCES = ["harbor/invoice-total", "harbor/room-plan", "harbor/claim-review", "harbor/sensor-drift",
           "benchflow/dose-check", "benchflow/rota-plan", "benchflow/refund-triage", "benchflow/ticket-triage",
           "terminal-bench/quota-report"]
OPTIONS = {"github": "bench-user", "license": "MIT"}


def generate(root: Path, count: int) -> list[Path]:
    """count source tasks, cycling through the fixtures, each renamed."""
    tasks = []
    for index in range(count):
        fixture = FIXTURES / SOURCES[index % len(SOURCES)]
        target = root / "sources" / f"task-{index:04d}"
        shutil.copytree(fixture, target)
        tasks.append(target)
    return tasks


def run(tasks: list[Path], out: Path, check: bool) -> list[float]:
    """Seconds per task."""
    times = []
    for index, task in enumerate(tasks):
        started = time.perf_counter()
        result = import_task(task, out, name=f"bench-task-{index:04d}", **OPTIONS)
        if check:
            report = run_static_checks(result.package_path)
            assert report.passed, [d.to_dict() for d in report.diagnostics][:2]
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tasks = generate(root, args.tasks)
        run(tasks[:12], root / "warm", check=True)
        imports = run(tasks, root / "imported", check=False)
        checked = run(tasks, root / "checked", check=True)
    print(f"tasks:                               {len(tasks)} ({', '.join(SOURCES)})")
    for label, times in (("import", imports), ("import + static check", checked)):
        ms = sorted(t * 1000 for t in times)
        print(f"{label + ':':36} {statistics.mean(ms):.2f} ms/task mean, {statistics.median(ms):.2f} median, "
              f"{ms[int(len(ms) * 0.95) - 1]:.2f} p95  ({sum(times):.2f} s in all)")


if __name__ == "__main__":
    main()
