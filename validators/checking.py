"""`arena check` as a whole: static checks for every package, then dynamic ones where an engine answers.

Which checks ran is read from the check registry (validators.registry): the static checks' rules by what each package
had, the dynamic checks' (every check that needs an engine) where they ran or their results were reused.
"""

from __future__ import annotations

import time
from pathlib import Path

from sandbox.engine import EngineUnavailable, engine_available
from sandbox.sandbox import Sandbox
from taskpkg.check_report import PackageReport, Report
from taskpkg.discover import display_path
from taskpkg.loader import load_package
from taskpkg.rules.infrastructure import ARENA700
from validators.dynamic import DEFAULT_INSTANCES, pick_instances, plan, run_dynamic_checks
from validators.dynamic.cache import cache_key, load, save
from validators.progress import trial_progress
from validators.registry import Needs, check, judged
from validators.static import run_static_checks_many

MODES = ("static", "auto", "dynamic")


@check(ARENA700, needs=Needs.ENGINE)
def check_packages(paths: list[Path], mode: str, instances: int = DEFAULT_INSTANCES,
                   show_progress: bool = True, use_cache: bool = True) -> Report:
    """Run the checks. mode: static (never Docker), auto (dynamic where an engine answers), dynamic (must, or
    EngineUnavailable).

    With use_cache, a package whose every byte, and the arena and engine, are unchanged since its last dynamic
    check reuses those results (see validators.dynamic.cache).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
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
                package.diagnostics.append(ARENA700.found(".", case="no_engine"))
    report.duration_s = time.perf_counter() - started
    return report


def _run_dynamic(paths: list[Path], reports: list[PackageReport], instances: int, show_progress: bool,
                 use_cache: bool) -> None:
    with Sandbox() as sandbox, trial_progress(show_progress) as progress:
        engine_version = str(sandbox.client.version().get("Version", ""))
        for path, package_report in zip(paths, reports, strict=True):
            if not package_report.passed:
                package_report.diagnostics.append(ARENA700.found(".", case="static_errors"))
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
            package_report.checks_run = sorted(set(package_report.checks_run) | judged({Needs.ENGINE}))
            package_report.duration_ms += (time.perf_counter() - started) * 1000
