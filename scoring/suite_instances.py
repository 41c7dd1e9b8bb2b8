"""The suite's instances as the contamination gate reads them, made once and kept beside the suite.

Every listed instance of every suite package is made by an `InstanceMaker` (the sandbox, in the CLI) and kept as
text in `<suite folder>/gate-cache/<package>-<digest>.json.gz`, keyed by the package's content digest (every file:
its generator, its image, its prompt), so repeated gates and the GPU job (which copies the suite folder, cache
included) read them instead of making them again; a changed package is made again. `arena suite index` fills the
cache ahead of time. The cache holds the private suite's text: it is as private as the suite.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from scoring.contamination import InstanceMaker, InstanceText
from scoring.suite import Suite
from taskpkg.digest import package_digest
from taskpkg.package import TaskPackage

CACHE_FOLDER = "gate-cache"
CACHE_FORMAT = 1

Progress = Callable[[int, int], None]  # called with how many instances were made so far, and of how many


@dataclass
class SuiteInstances:
    """The instances read or made, by (package name, instance), and what could not be had (with why)."""

    texts: dict[tuple[str, int], InstanceText] = field(default_factory=dict)
    missing: dict[tuple[str, int], str] = field(default_factory=dict)
    made: int = 0
    cache_note: str | None = None


class InstanceCache:
    """Instance texts per package, in one gzipped JSON file per package content digest."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._digests: dict[Path, str] = {}

    def digest(self, package: TaskPackage) -> str:
        """The package's content digest, "sha256:" and 64 hex digits (computed once per package)."""
        if package.root not in self._digests:
            self._digests[package.root] = package_digest(package.root)
        return self._digests[package.root]

    def path(self, package: TaskPackage) -> Path:
        return self.folder / f"{package.name}-{self.digest(package).removeprefix('sha256:')[:16]}.json.gz"

    def load(self, package: TaskPackage) -> dict[int, InstanceText]:
        """The cached instances of this version of the package; empty when there are none or the file is unreadable
        or for another version (it is then made again)."""
        try:
            data = json.loads(gzip.decompress(self.path(package).read_bytes()))
            if data.get("format") != CACHE_FORMAT or data.get("digest") != self.digest(package):
                return {}
            return {int(number): InstanceText(str(entry["prompt"]), {str(k): str(v) for k, v in entry["files"].items()})
                    for number, entry in data["instances"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError):
            return {}

    def save(self, package: TaskPackage, texts: dict[int, InstanceText]) -> None:
        """Write the package's instances (atomically: a reader sees the old file or the new one) and remove those of
        its earlier versions. Raises OSError."""
        data = {"format": CACHE_FORMAT, "package": package.name, "digest": self.digest(package),
                "instances": {str(n): {"prompt": t.prompt, "files": t.files} for n, t in sorted(texts.items())}}
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.path(package)
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        partial.write_bytes(gzip.compress(json.dumps(data).encode("utf-8"), compresslevel=6, mtime=0))
        partial.replace(target)
        earlier = re.compile(rf"{re.escape(package.name)}-[0-9a-f]{{16}}\.json\.gz")
        for path in self.folder.iterdir():
            if path != target and earlier.fullmatch(path.name):
                path.unlink(missing_ok=True)


def suite_cache(suite: Suite) -> InstanceCache:
    """The cache beside the suite's manifest."""
    return InstanceCache(suite.manifest.parent / CACHE_FOLDER)


def listed_instances(suite: Suite) -> dict[str, tuple[TaskPackage, list[int]]]:
    """Each package's listed instances, by package name."""
    listed: dict[str, tuple[TaskPackage, list[int]]] = {}
    for package in suite.packages.values():
        listed[package.name] = (package, sorted(i.instance for i in suite.items if i.path == package.root))
    return listed


def suite_instances(suite: Suite, maker: InstanceMaker | None, cache: InstanceCache, workers: int = 2,
                    progress: Progress | None = None) -> SuiteInstances:
    """Every listed instance: from the cache, else made by `maker` (then cached), else missing."""
    found = SuiteInstances()
    to_make: list[tuple[TaskPackage, int]] = []
    cached: dict[str, dict[int, InstanceText]] = {}
    listed = listed_instances(suite)
    for name, (package, numbers) in listed.items():
        cached[name] = cache.load(package)
        for number in numbers:
            if number in cached[name]:
                found.texts[(name, number)] = cached[name][number]
            elif maker is None:
                found.missing[(name, number)] = "not in the suite's gate cache, and no Docker engine to make it"
            else:
                to_make.append((package, number))
    if not to_make:
        return found
    assert maker is not None
    try:
        _make_all(maker, to_make, cached, found, workers, progress)
    finally:  # an interrupted run keeps what it made
        for name in sorted({package.name for package, _ in to_make}):
            try:
                cache.save(listed[name][0], cached[name])
            except OSError as exc:
                found.cache_note = f"the gate cache could not be written ({exc}); the next gate makes them again"
    return found


def _make_all(maker: InstanceMaker, to_make: list[tuple[TaskPackage, int]], cached: dict[str, dict[int, InstanceText]],
              found: SuiteInstances, workers: int, progress: Progress | None) -> None:
    """Make the instances on `workers` threads, recording each as it comes (an interruption keeps what was made)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = pool.map(lambda job: _make(maker, *job), to_make)
        for done, ((package, number), outcome) in enumerate(zip(to_make, outcomes, strict=True), start=1):
            if isinstance(outcome, InstanceText):
                found.texts[(package.name, number)] = cached[package.name][number] = outcome
                found.made += 1
            else:
                found.missing[(package.name, number)] = outcome
            if progress is not None:
                progress(done, len(to_make))


def _make(maker: InstanceMaker, package: TaskPackage, number: int) -> InstanceText | str:
    """One instance, or why it could not be made (a generator that fails is the suite check's finding, not ours)."""
    try:
        return maker(package, number)
    except Exception as exc:  # the maker runs a package's generator in a container: any failure is reported
        return f"{type(exc).__name__}: {exc}"
