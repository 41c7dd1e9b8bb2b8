"""Benchmark: static-check 1,000 generated packages against the bare cost of reading them.

The floor is what any checker must pay: read task.md, YAML-load the frontmatter (PyYAML's C loader) and validate it
against the JSON Schema with a pre-compiled validator. The arena's static check does that plus every file, Dockerfile,
verifier and oracle check. Prints both times and their ratio (target: at most 2x).

    .venv/bin/python bench/static_check.py [--packages 1000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taskpkg.schema import task_schema
from tests.support.packages import make_valid_package
from validators.static import run_static_checks_many


def generate(root: Path, count: int) -> list[Path]:
    """Make count distinct valid packages (the scaffold, filled in, under different names)."""
    template = make_valid_package(root / "template", "bench-template")
    packages = []
    for index in range(count):
        name = f"bench-package-{index:04d}"
        target = root / "environments" / name
        shutil.copytree(template, target)
        task = target / "task.md"
        task.write_text(task.read_text().replace("name: bench-template", f"name: {name}"))
        packages.append(target)
    return packages


def floor(packages: list[Path], every_file: bool) -> float:
    """The bare cost of reading packages: YAML load + schema validation of task.md, and (every_file) the bytes of
    every other file, which any checker must read at least once."""
    validator = Draft202012Validator(task_schema())
    started = time.perf_counter()
    for package in packages:
        if every_file:
            for folder, _, names in os.walk(package):
                for name in names:
                    with open(os.path.join(folder, name), "rb") as handle:
                        handle.read()
        text = (package / "task.md").read_text(encoding="utf-8")
        data = yaml.load(text.split("---\n", 2)[1], Loader=yaml.CSafeLoader)
        validator.validate(data)
    return time.perf_counter() - started


def arena(packages: list[Path], workers: int = 1) -> float:
    """The full static check, on one core or spread over `workers` processes as `arena check` does."""
    started = time.perf_counter()
    reports = run_static_checks_many(packages, workers=workers)
    assert all(r.passed for r in reports), [r.to_dict() for r in reports if not r.passed][:1]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        packages = generate(Path(folder), args.packages)
        floor(packages[:50], True), arena(packages[:50])  # warm caches and imports
        bare = min(floor(packages, False) for _ in range(3))
        reading = min(floor(packages, True) for _ in range(3))
        serial = min(arena(packages) for _ in range(3))
        cores = os.cpu_count() or 1
        parallel = min(arena(packages, cores) for _ in range(3))
    per = 1000 / len(packages)
    print(f"packages:                          {len(packages)}")
    print(f"floor: task.md YAML + schema:      {bare * per:.3f} ms/package  ({bare:.2f} s)")
    print(f"floor: + reading every file:       {reading * per:.3f} ms/package  ({reading:.2f} s)")
    print(f"arena static check, one core:      {serial * per:.3f} ms/package  ({serial:.2f} s)")
    print(f"arena check --static, {cores} core(s):   {parallel * per:.3f} ms/package  ({parallel:.2f} s)")
    print(f"ratio one core / task.md floor:    {serial / bare:.2f}x")
    print(f"ratio one core / reading floor:    {serial / reading:.2f}x")
    print(f"ratio arena check / reading floor: {parallel / reading:.2f}x  (target <= 2.0x)")


if __name__ == "__main__":
    main()
