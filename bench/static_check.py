"""Benchmark: the arena's static check against the bare cost of reading the same packages, on the same cores.

The packages vary: each is one of the bundled environments or the scaffold (filled in, also with two scenes), renamed,
with a different number of extra data files, Dockerfile lines and prompt paragraphs, so no two are the same bytes and
sizes range from a few KiB to the largest bundled package.

The floor is what any checker must pay: read every file of the package once, split task.md's frontmatter, load it
with PyYAML's C loader and validate it against the JSON Schema with a pre-compiled validator. The second floor adds
what the repository's CI runs on package Python (one ruff run over the same files, as `arena check` does). Both floors
and the arena run on the same cores: pinned to one core (processes and ruff's threads alike), then every core (the
floors spread over a process pool exactly as `arena check` spreads packages). Prints times and like-for-like ratios;
the target is at most 2x the floor plus the lint, which the static check includes. Wall-clock times are the best of
several runs; the CPU time of all processes (the best run's, likewise) says the same less disturbed by other work on
the machine.

    .venv/bin/python bench/static_check.py [--packages 1000]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from taskpkg.python_lint import check_command  # noqa: E402
from taskpkg.schema import task_schema  # noqa: E402
from tests.support.packages import make_two_scene_package, make_valid_package  # noqa: E402
from validators.static import run_static_checks_many  # noqa: E402
from validators.static.files import walk  # noqa: E402
from validators.static.lint import linted_files  # noqa: E402

_VALIDATOR: Draft202012Validator | None = None


def templates(root: Path) -> list[Path]:
    """The package shapes the benchmark varies: every bundled environment, the scaffold, and a two-scene package."""
    bundled = sorted(p for p in (ROOT / "environments").iterdir() if (p / "task.md").is_file())
    made = [make_valid_package(root / "a", "bench-scaffold"), make_two_scene_package(root / "b", "bench-scenes")]
    return bundled + made


def generate(root: Path, count: int) -> list[Path]:
    """count distinct, varied, valid packages."""
    shapes = templates(root / "templates")
    packages = []
    for index in range(count):
        source = shapes[index % len(shapes)]
        name = f"bench-{index:04d}-{source.name}"[:60].rstrip("-")
        target = root / "environments" / name
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        task = target / "task.md"
        text = task.read_text().replace(f"name: {source.name}\n", f"name: {name}\n", 1)
        task.write_text(text + "\n" + "Work carefully and check every figure twice.\n" * (index % 7))
        for extra in range(index % 5):
            (target / "environment" / f"reference-{extra}.csv").write_text(
                "id,amount\n" + "".join(f"{row},{row * 3 + index}\n" for row in range(20 * (extra + 1))))
        dockerfile = target / "environment" / "Dockerfile"
        lines = [f"COPY reference-{extra}.csv /opt/reference/" for extra in range(index % 5)]
        dockerfile.write_text(dockerfile.read_text().replace("WORKDIR", "\n".join([*lines, "WORKDIR"]), 1))
        packages.append(target)
    return packages


def _floor_one(package: Path) -> None:
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = Draft202012Validator(task_schema())
    for folder, _, names in os.walk(package):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                handle.read()
    text = (package / "task.md").read_text(encoding="utf-8")
    _VALIDATOR.validate(yaml.load(text.split("---\n", 2)[1], Loader=yaml.CSafeLoader))


@dataclass(frozen=True)
class Took:
    """Wall-clock seconds, and CPU seconds of this process and the processes it waited for (pool workers, ruff)."""

    wall: float
    cpu: float


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work: Callable[..., object], *arguments: object) -> Took:
    """How long work(*arguments) takes, in wall-clock and CPU time."""
    wall, cpu = time.perf_counter(), _cpu()
    work(*arguments)
    return Took(time.perf_counter() - wall, _cpu() - cpu)


def best(runs: list[Took]) -> Took:
    """The best wall time and the best CPU time of several runs (each the least disturbed by other work)."""
    return Took(min(r.wall for r in runs), min(r.cpu for r in runs))


def floor(packages: list[Path], workers: int, lint: bool) -> None:
    """The floor on `workers` processes (a pool spread like run_static_checks_many's), plus one ruff run if lint."""
    if workers <= 1:
        for package in packages:
            _floor_one(package)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(_floor_one, packages, chunksize=max(1, len(packages) // (workers * 8))))
    if lint:
        files = [str(p / f) for p in packages for f in linted_files(walk(p))]
        subprocess.run(check_command(files), capture_output=True, check=True,
                       env={**os.environ, "RAYON_NUM_THREADS": str(workers)})


def arena(packages: list[Path], workers: int) -> None:
    """The full static check (the lint included) on `workers` processes, as `arena check --static` runs it."""
    reports = run_static_checks_many(packages, workers=workers)
    assert all(r.passed for r in reports), [r.to_dict() for r in reports if not r.passed][:1]


@contextmanager
def on_cores(count: int) -> Iterator[None]:
    """Run (this process and the processes it starts: pool workers, ruff) on `count` cores of this machine: pinned
    to them where the OS allows, so one core means one core for both sides; ruff gets as many threads."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if allowed is not None:
        os.sched_setaffinity(0, sorted(allowed)[:count])
    os.environ["RAYON_NUM_THREADS"] = str(count)
    try:
        yield
    finally:
        os.environ.pop("RAYON_NUM_THREADS", None)
        if allowed is not None:
            os.sched_setaffinity(0, allowed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs of each side")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        packages = generate(Path(folder), args.packages)
        sizes = sorted(sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in packages)
        floor(packages[:20], 1, True), arena(packages[:20], 1)  # warm caches and imports
        rows = []
        for workers in sorted({1, cores}):
            with on_cores(workers):
                bare = best([timed(floor, packages, workers, False) for _ in range(args.repeats)])
                linted = best([timed(floor, packages, workers, True) for _ in range(args.repeats)])
                ours = best([timed(arena, packages, workers) for _ in range(args.repeats)])
            rows.append((workers, bare, linted, ours))
    per = 1000 / len(packages)
    print(f"packages: {len(packages)} varied (sizes {sizes[0] // 1024}-{sizes[-1] // 1024} KiB, "
          f"median {sizes[len(sizes) // 2] // 1024} KiB); best of {args.repeats}")
    for workers, bare, linted, ours in rows:
        print(f"{workers} core(s): floor {bare.wall * per:.3f} ms/package, floor + lint {linted.wall * per:.3f}, "
              f"arena check --static {ours.wall * per:.3f}")
        print(f"  ratio arena / floor:        {ours.wall / bare.wall:.2f}x")
        print(f"  ratio arena / floor + lint: {ours.wall / linted.wall:.2f}x  (target <= 2.0x)")
        print(f"  CPU time, all processes:    floor {bare.cpu * per:.3f}, floor + lint {linted.cpu * per:.3f}, "
              f"arena {ours.cpu * per:.3f} ms/package: {ours.cpu / linted.cpu:.2f}x the floor + lint")


if __name__ == "__main__":
    main()
