"""Static validation: every check that needs no Docker engine, in milliseconds per package."""

from __future__ import annotations

import time
from pathlib import Path

from taskpkg.checks import CHECKS
from taskpkg.loader import load_package
from validators.report import PackageReport
from validators.static.dockerfile import CHECK_IDS as DOCKERFILE_IDS
from validators.static.dockerfile import check_dockerfile
from validators.static.files import CHECK_IDS as FILE_IDS
from validators.static.files import check_files, walk
from validators.static.oracle_source import CHECK_IDS as ORACLE_IDS
from validators.static.oracle_source import check_oracle
from validators.static.verifier_source import CHECK_IDS as VERIFIER_IDS
from validators.static.verifier_source import check_verifier

STATIC_IDS = tuple(sorted(cid for cid in CHECKS if cid < "ARENA700"))
_NEEDS_PACKAGE = frozenset(ORACLE_IDS) | {"ARENA406"}
_LOADER_IDS = frozenset(STATIC_IDS) - set(FILE_IDS) - set(DOCKERFILE_IDS) - set(VERIFIER_IDS) - set(ORACLE_IDS)


def run_static_checks(root: Path, display_path: str | None = None) -> PackageReport:
    """Run every static check on the package at root and return its report."""
    started = time.perf_counter()
    loaded = load_package(root)
    diagnostics = list(loaded.diagnostics)
    checks_run = set(_LOADER_IDS) if loaded.package else {d.check_id for d in diagnostics}
    if root.is_dir():
        files, walk_found = walk(root)
        diagnostics += walk_found
        diagnostics += check_files(root, files)
        diagnostics += check_dockerfile(root, loaded.package, files)
        diagnostics += check_verifier(root)
        checks_run |= set(FILE_IDS) | set(DOCKERFILE_IDS) | set(VERIFIER_IDS)
        if loaded.package is not None:
            diagnostics += check_oracle(loaded.package, files)
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
        checks_run=sorted(checks_run | set(ORACLE_IDS if package else ())),
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _dedupe_sorted(diagnostics: list) -> list:
    order = {"error": 0, "warning": 1, "info": 2}
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=lambda d: (order[d.severity.value], d.file or "", d.line or 0, d.check_id))
