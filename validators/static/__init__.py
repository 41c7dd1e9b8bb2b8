"""Static validation: every check that needs no Docker engine, in milliseconds per package."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from functools import partial
from pathlib import Path

from taskpkg.digest import package_digest
from taskpkg.loader import load_package
from taskpkg.rules import Category, ids
from validators.report import PackageReport
from validators.static import determinism, dockerfile, files, lint, oracle_source, verifier_source
from validators.static.determinism import check_determinism
from validators.static.dockerfile import check_dockerfile
from validators.static.files import check_files, walk
from validators.static.lint import lint_packages
from validators.static.oracle_source import check_oracle
from validators.static.verifier_source import check_verifier, check_verifier_scripts

STATIC_IDS = ids(Category.STATIC)
_TREE_IDS = frozenset(r.id for module in (files, dockerfile, verifier_source, lint) for r in module.RULES)
_PACKAGE_IDS = frozenset(r.id for module in (oracle_source, determinism) for r in module.RULES)  # need a package
_NEEDS_PACKAGE = _PACKAGE_IDS | {dockerfile.ARENA406.id}
_LOADER_IDS = frozenset(STATIC_IDS) - _TREE_IDS - _PACKAGE_IDS


def run_static_checks(root: Path, display_path: str | None = None, with_lint: bool = True) -> PackageReport:
    """Run every static check on the package at root and return its report (without the repository's lint when
    with_lint is False: run_static_checks_many lints all packages in one ruff run)."""
    started = time.perf_counter()
    loaded = load_package(root)
    diagnostics = list(loaded.diagnostics)
    checks_run = set(_LOADER_IDS) if loaded.package else {d.check_id for d in diagnostics}
    digest = None
    if root.is_dir():
        tree = walk(root)
        # What a verdict is about; a package with special files (ARENA007) fails anyway and is never read whole.
        digest = None if any(d.check_id == "ARENA007" for d in tree.diagnostics) else package_digest(root)
        diagnostics += tree.diagnostics
        diagnostics += check_files(tree)
        diagnostics += check_dockerfile(tree, loaded.package)
        diagnostics += check_verifier(tree)
        diagnostics += lint_packages([tree])[0] if with_lint else []
        checks_run |= _TREE_IDS
        if loaded.package is not None:
            diagnostics += check_oracle(tree, loaded.package)
            diagnostics += check_determinism(tree, loaded.package)
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
        checks_run=sorted(checks_run | (_PACKAGE_IDS if package else set())),
        duration_ms=(time.perf_counter() - started) * 1000,
        digest=digest,
    )


def _dedupe_sorted(diagnostics: list) -> list:
    order = {"error": 0, "warning": 1, "info": 2}
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=lambda d: (order[d.severity.value], d.file or "", d.line or 0, d.check_id))


PARALLEL_FROM = 64


def run_static_checks_many(roots: list[Path], display_paths: list[str] | None = None,
                           workers: int | None = None) -> list[PackageReport]:
    """Static-check many packages, in order; large batches are spread over the machine's cores. The repository's
    lint runs once for all of them, beside the other checks."""
    displays = display_paths or [str(r) for r in roots]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    check = partial(run_static_checks, with_lint=False)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-lint") as background:
        linted = background.submit(_lint_all, roots)
        if workers <= 1 or len(roots) < PARALLEL_FROM:
            reports = [check(r, d) for r, d in zip(roots, displays, strict=True)]
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                reports = list(pool.map(check, roots, displays, chunksize=max(1, len(roots) // (workers * 8))))
        for report, found in zip(reports, linted.result(), strict=True):
            report.diagnostics = _dedupe_sorted(report.diagnostics + found)
    return reports


def _lint_all(roots: list[Path]) -> list[list]:
    folders = [root for root in roots if root.is_dir()]
    by_root = dict(zip(folders, lint_packages([walk(root) for root in folders]), strict=True))
    return [by_root.get(root, []) for root in roots]
