"""Static validation: every check that needs no Docker engine, in milliseconds per package."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from taskpkg.loader import load_package
from taskpkg.rules import Category, ids
from validators.report import PackageReport
from validators.static import dockerfile, files, oracle_source, verifier_source
from validators.static.dockerfile import check_dockerfile
from validators.static.files import check_files, walk
from validators.static.oracle_source import check_oracle
from validators.static.verifier_source import check_verifier, check_verifier_scripts

STATIC_IDS = ids(Category.STATIC)
_TREE_IDS = frozenset(r.id for module in (files, dockerfile, verifier_source) for r in module.RULES)
_ORACLE_IDS = frozenset(r.id for r in oracle_source.RULES)
_NEEDS_PACKAGE = _ORACLE_IDS | {dockerfile.ARENA406.id}
_LOADER_IDS = frozenset(STATIC_IDS) - _TREE_IDS - _ORACLE_IDS


def run_static_checks(root: Path, display_path: str | None = None) -> PackageReport:
    """Run every static check on the package at root and return its report."""
    started = time.perf_counter()
    loaded = load_package(root)
    diagnostics = list(loaded.diagnostics)
    checks_run = set(_LOADER_IDS) if loaded.package else {d.check_id for d in diagnostics}
    if root.is_dir():
        tree = walk(root)
        diagnostics += tree.diagnostics
        diagnostics += check_files(tree)
        diagnostics += check_dockerfile(tree, loaded.package)
        diagnostics += check_verifier(tree)
        checks_run |= _TREE_IDS
        if loaded.package is not None:
            diagnostics += check_oracle(tree, loaded.package)
            diagnostics += check_verifier_scripts(tree, loaded.package)
        else:
            checks_run -= _NEEDS_PACKAGE
            checks_run |= {d.check_id for d in diagnostics}
    package = loaded.package
    return PackageReport(
        path=display_path or str(root),
        name=package.name if package else None,
        title=package.title if package else None,
        domain=package.domain if package else None,
        instances=package.instance_count if package else None,
        diagnostics=_dedupe_sorted(diagnostics),
        checks_run=sorted(checks_run | (_ORACLE_IDS if package else set())),
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _dedupe_sorted(diagnostics: list) -> list:
    order = {"error": 0, "warning": 1, "info": 2}
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=lambda d: (order[d.severity.value], d.file or "", d.line or 0, d.check_id))


PARALLEL_FROM = 64


def run_static_checks_many(roots: list[Path], display_paths: list[str] | None = None,
                           workers: int | None = None) -> list[PackageReport]:
    """Static-check many packages, in order; large batches are spread over the machine's cores."""
    displays = display_paths or [str(r) for r in roots]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 1 or len(roots) < PARALLEL_FROM:
        return [run_static_checks(r, d) for r, d in zip(roots, displays, strict=True)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run_static_checks, roots, displays, chunksize=max(1, len(roots) // (workers * 8))))
