"""`arena check` orchestration: static checks for every package, then dynamic ones where an engine answers."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sandbox.engine import EngineUnavailable, engine_available
from sandbox.episode import Sandbox
from taskpkg.checks import check
from taskpkg.loader import load_package
from validators.dynamic import DEFAULT_INSTANCES, DYNAMIC_IDS, pick_instances, plan, run_dynamic_checks
from validators.dynamic.cache import cache_key, load, save
from validators.report import PackageReport, Report
from validators.static import run_static_checks_many

Advance = Callable[[str], None]


def display_path(path: Path) -> str:
    """A path as the user would type it from here."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def check_packages(paths: list[Path], mode: str, instances: int = DEFAULT_INSTANCES,
                   show_progress: bool = True, use_cache: bool = True) -> Report:
    """Run the checks. mode: static (never Docker), auto (dynamic where an engine answers), dynamic (must).

    With use_cache, a package whose every byte, and the arena and engine, are unchanged since its last dynamic
    check reuses those results (see validators.dynamic.cache).
    """
    started = time.perf_counter()
    reports = run_static_checks_many(paths, [display_path(p) for p in paths])
    report = Report(mode="static", packages=reports)
    if mode != "static":
        if engine_available():
            report.mode = "full"
            _run_dynamic(paths, reports, instances, show_progress, use_cache)
        elif mode == "dynamic":
            raise EngineUnavailable("no Docker engine answers; start one with `scripts/ensure-engine`, or run "
                                    "`arena check --static` for the checks that need none")
        else:
            for package in reports:
                package.diagnostics.append(check("ARENA700").found(
                    "no Docker engine answers, so build, oracle, isolation and tamper checks did not run",
                    "Start one (`scripts/ensure-engine` on Debian) and check again; CI runs them in any case.", "."))
    report.duration_s = time.perf_counter() - started
    return report


def _run_dynamic(paths: list[Path], reports: list[PackageReport], instances: int, show_progress: bool,
                 use_cache: bool) -> None:
    with Sandbox() as sandbox, _progress(show_progress) as progress:
        engine_version = str(sandbox.client.version().get("Version", ""))
        for path, package_report in zip(paths, reports, strict=True):
            if not package_report.passed:
                package_report.diagnostics.append(check("ARENA700").found(
                    "dynamic checks skipped until the static errors above are fixed", "Fix the errors and check "
                    "again.", "."))
                continue
            package = load_package(path).package
            assert package is not None
            started = time.perf_counter()
            key = cache_key(package, engine_version, {"instances": instances})
            hit = load(key) if use_cache else None
            if hit is not None:
                diagnostics, trials, package_report.dynamic_cached_at = hit
            else:
                advance = progress(package.name, len(plan(package, pick_instances(package.instance_count,
                                                                                  instances))))
                result = run_dynamic_checks(package, sandbox, instances, on_trial=advance)
                diagnostics, trials = result.diagnostics, result.trials
                save(key, diagnostics, trials)
            package_report.diagnostics.extend(diagnostics)
            package_report.trials = trials
            package_report.checks_run = sorted(set(package_report.checks_run) | set(DYNAMIC_IDS))
            package_report.duration_ms += (time.perf_counter() - started) * 1000


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int], Advance]]:
    """A factory of per-package progress callbacks: a rich bar on a terminal, plain lines elsewhere (CI logs)."""
    console = Console(stderr=True)
    if not enabled:
        yield lambda name, total: (lambda step: None)
        return
    if not console.is_terminal:
        lock = threading.Lock()  # trials finish on worker threads: one whole line at a time

        def plain(name: str, total: int) -> Advance:
            done = [0]

            def advance(step: str) -> None:
                with lock:
                    done[0] += 1
                    sys.stderr.write(f"arena: {name}: {step} ({done[0]}/{total})\n")
                    sys.stderr.flush()
            return advance
        yield plain
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        def rich_bar(name: str, total: int) -> Advance:
            task = bar.add_task(f"{name}: trials", total=total)
            return lambda step: bar.update(task, advance=1, description=f"{name}: {step}")
        yield rich_bar
