"""One run of the contamination gate, as `arena score` runs it: the suite's instances (from its gate cache, else made
in the sandbox), the submission's files, code and a sample of its instances (made in the sandbox), then the scan.

The submission's samples are drawn at random on every run, so a generator cannot know which instances the gate will
look at; when an engine answers and a sample cannot be made, the gate fails rather than pass a package it could not
see. Without an engine the gate compares files and code only and says so.
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from docker.errors import DockerException

from sandbox.engine import EngineUnavailable, engine_available
from sandbox.images import BuildFailed
from sandbox.instances import SetupError
from sandbox.sandbox import Sandbox
from scoring.contamination import (
    MAX_FILE_BYTES,
    GateResult,
    InstanceMaker,
    InstanceText,
    SuiteIndex,
    instance_text,
    submission_documents,
)
from scoring.suite import Suite
from scoring.suite_instances import Progress, SuiteInstances, suite_cache, suite_instances
from taskpkg.body import MissingValue
from taskpkg.package import TaskPackage

DEFAULT_SAMPLES = 3
SANDBOX_FAILURES = (SetupError, BuildFailed, DockerException, MissingValue, EngineUnavailable)


class GateError(RuntimeError):
    """The gate could not see the submission (its generator failed in the sandbox)."""


def sandbox_maker(sandbox: Sandbox, scratch: Path) -> InstanceMaker:
    """Instances made in the sandbox exactly as an episode makes them (`arena show`), read back as text."""
    def make(package: TaskPackage, instance: int) -> InstanceText:
        folder = Path(tempfile.mkdtemp(dir=scratch))
        try:
            workspace = folder / "workspace"
            values = sandbox.make_instance(package, instance, workspace)
            files = {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*"))
                     if p.is_file() and not p.is_symlink() and p.stat().st_size <= MAX_FILE_BYTES}
            return instance_text(package, values, files)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return make


def sample_numbers(count: int, samples: int, rng: random.Random | None = None) -> list[int]:
    """`samples` distinct instance numbers below `count`, drawn afresh on every run unless an rng is given."""
    return sorted((rng or random.SystemRandom()).sample(range(count), min(samples, count)))


def run_gate(suite: Suite, root: Path, package: TaskPackage | None, samples: int = DEFAULT_SAMPLES, *,
             engine: bool | None = None, workers: int = 2, progress: Progress | None = None,
             say: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
             rng: random.Random | None = None) -> GateResult:
    """The gate for the package at root (`package`: None when it does not load). Raises GateError."""
    scratch = Path(tempfile.mkdtemp(prefix="arena-gate-"))
    try:
        with _sandbox(engine_available() if engine is None else engine, say) as sandbox:
            maker = sandbox_maker(sandbox, scratch) if sandbox is not None else None
            found = suite_instances(suite, maker, suite_cache(suite), workers, progress)
            index = SuiteIndex.of_suite(suite, found.texts)
            made = _samples(package, maker, samples, say, rng)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if found.missing:
        (name, number), why = next(iter(sorted(found.missing.items())))
        say(f"note: {len(found.missing)} of {len(suite.items)} suite instances are not indexed (first: {name} "
            f"instance {number}: {why}); `arena suite index` makes them where a Docker engine answers")
    if found.cache_note:
        say(f"note: {found.cache_note}")
    return index.scan(submission_documents(root, package, made), {"samples": sorted(made)})


def make_suite_instances(suite: Suite, workers: int = 2, progress: Progress | None = None) -> SuiteInstances:
    """Make every listed instance not yet in the suite's gate cache, in the sandbox, and cache it (`arena suite
    index`). Raises EngineUnavailable."""
    scratch = Path(tempfile.mkdtemp(prefix="arena-suite-index-"))
    try:
        with Sandbox() as sandbox:
            return suite_instances(suite, sandbox_maker(sandbox, scratch), suite_cache(suite), workers, progress)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _sandbox(wanted: bool, say: Callable[[str], None]) -> Sandbox | nullcontext:
    if wanted:
        try:
            return Sandbox()
        except (EngineUnavailable, DockerException) as exc:
            say(f"note: the Docker engine failed ({exc}); the gate compares files and code only")
    else:
        say("note: no Docker engine answers, so no instances are made: the gate compares files, code and the "
            "suite instances already in its gate cache")
    return nullcontext(None)


def _samples(package: TaskPackage | None, maker: InstanceMaker | None, samples: int, say: Callable[[str], None],
             rng: random.Random | None) -> dict[int, InstanceText]:
    """The submission's sampled instances (none without a package, a maker or samples). Raises GateError."""
    if package is None or maker is None or samples <= 0:
        if package is None:
            say("note: the package does not load, so its generator was not sampled; files and code only")
        return {}
    made = {}
    for number in sample_numbers(package.instance_count, samples, rng):
        try:
            made[number] = maker(package, number)
        except SANDBOX_FAILURES as exc:
            raise GateError(f"instance {number} of {package.name} could not be made in the sandbox ({exc}); the "
                            "gate cannot pass a package whose instances it cannot see: run `arena show "
                            f"{package.root} --instance {number}` to see why") from None
    return made
