"""Static validation: every check that needs no Docker engine, in milliseconds per package.

Each check function is registered with the rules it raises (validators.registry): the loader's rules beside
`taskpkg.loader.load_package` below, the others on their functions in this package. Which rules a package's report
lists as run is read from the registry, by what the package had: a folder, and a package that loads.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from taskpkg.check_report import PackageReport
from taskpkg.digest import package_digest
from taskpkg.loader import load_package
from taskpkg.rules import Category, ids
from taskpkg.rules.package_files import ARENA001, ARENA002
from taskpkg.rules.prompt import ARENA201, ARENA203, ARENA204, ARENA205, ARENA206, ARENA207
from taskpkg.rules.rule import Rule
from taskpkg.rules.sources import ARENA601
from taskpkg.rules.task_file import (
    ARENA100,
    ARENA101,
    ARENA102,
    ARENA103,
    ARENA104,
    ARENA105,
    ARENA106,
    ARENA110,
    ARENA111,
    ARENA112,
    ARENA113,
    ARENA114,
    ARENA115,
    ARENA116,
    ARENA118,
    ARENA119,
    ARENA120,
)
from validators.registry import Needs, judged, register
from validators.static.determinism import check_determinism
from validators.static.dockerfile import check_copied_secrets, check_dockerfile
from validators.static.files import PackageFile, PackageTree, check_files, git_attributes_many, walk
from validators.static.lint import lint_packages
from validators.static.oracle_source import check_oracle
from validators.static.verifier_source import check_verifier, check_verifier_scripts

STATIC_IDS = ids(Category.STATIC)
# The loader (taskpkg, which cannot import the registry) reads task.md, its frontmatter, schema and prompt; it stops at
# its first failure, so its rules count as run only when the package loads.
LOADER_RULES: tuple[Rule, ...] = (
    ARENA001, ARENA002, ARENA100, ARENA101, ARENA102, ARENA103, ARENA104, ARENA105, ARENA106, ARENA110, ARENA111,
    ARENA112, ARENA113, ARENA114, ARENA115, ARENA116, ARENA118, ARENA119, ARENA120, ARENA201, ARENA203, ARENA204,
    ARENA205, ARENA206, ARENA207, ARENA601,
)
register(load_package, *LOADER_RULES, needs=Needs.PACKAGE)


def run_static_checks(root: Path, display_path: str | None = None, with_lint: bool = True,
                      tree: PackageTree | None = None) -> PackageReport:
    """Run every static check on the package at root and return its report (without the repository's lint and
    git's attributes when with_lint is False: run_static_checks_many asks ruff and git once for all packages). tree:
    the package's files when the caller has walked them already."""
    started = time.perf_counter()
    loaded = load_package(root)
    diagnostics = list(loaded.diagnostics)
    met: set[Needs] = set()
    digest = None
    if tree is not None or root.is_dir():
        met.add(Needs.FOLDER)
        tree = tree or walk(root)
        diagnostics += tree.diagnostics
        diagnostics += check_files(tree, with_git=with_lint)
        diagnostics += check_dockerfile(tree)
        diagnostics += check_verifier(tree)
        diagnostics = _with_lint(diagnostics, lint_packages([tree], [display_path or str(root)])[0]) if with_lint \
            else diagnostics
        if loaded.package is not None:
            met.add(Needs.PACKAGE)
            diagnostics += check_copied_secrets(tree, loaded.package)
            diagnostics += check_oracle(tree, loaded.package)
            diagnostics += check_determinism(tree, loaded.package)
            diagnostics += check_verifier_scripts(tree, loaded.package)
        # What a verdict is about (from the bytes the checks read); a package with special files (ARENA007) fails
        # anyway and is never read whole.
        special = any(d.check_id == "ARENA007" for d in tree.diagnostics)
        digest = None if special else package_digest(root, tree.contents_read())
    package = loaded.package
    return PackageReport(
        path=display_path or str(root),
        name=package.name if package else None,
        title=package.title if package else None,
        domain=package.domain if package else None,
        instances=package.instance_count if package else None,
        diagnostics=_dedupe_sorted(diagnostics),
        checks_run=sorted(judged(met) | {d.check_id for d in diagnostics}),
        duration_ms=(time.perf_counter() - started) * 1000,
        digest=digest,
    )


def _with_lint(own: list, linted: list) -> list:
    """The package's findings and the lint's: a syntax error of verifier.py is reported once (ARENA501), by the
    verifier check where it parsed the file itself, else by the lint."""
    if any(d.check_id == "ARENA501" for d in own):
        linted = [d for d in linted if d.check_id != "ARENA501"]
    return own + linted


def _dedupe_sorted(diagnostics: list) -> list:
    order = {"error": 0, "warning": 1, "info": 2}
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=lambda d: (order[d.severity.value], d.file or "", d.line or 0, d.check_id))


PARALLEL_FROM = 64


def run_static_checks_many(roots: list[Path], display_paths: list[str] | None = None,
                           workers: int | None = None) -> list[PackageReport]:
    """Static-check many packages, in order, each walked once. The repository's lint runs once for all of them: in
    a small batch beside the checks (on a thread; ruff works in its own process), in a large one after the checks,
    which are spread over the machine's cores (then ruff spreads over them too)."""
    displays = display_paths or [str(r) for r in roots]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 1 or len(roots) < PARALLEL_FROM:
        trees = [walk(root) if root.is_dir() else None for root in roots]
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-lint") as background:
            linted = background.submit(_batch_checks, [_listing(tree) for tree in trees], displays)
            reports = [run_static_checks(root, display, with_lint=False, tree=tree)
                       for root, display, tree in zip(roots, displays, trees, strict=True)]
            del trees
            found = linted.result()
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            checked = list(pool.map(_check_for_batch, roots, displays,
                                    chunksize=max(1, len(roots) // (workers * 8))))
        reports = [report for report, _ in checked]
        listings = [PackageTree(root, [PackageFile(relative, root / relative, 0) for relative in files])
                    if files is not None else None for root, (_, files) in zip(roots, checked, strict=True)]
        found = _batch_checks(listings, displays)
    for report, linted_found in zip(reports, found, strict=True):
        report.diagnostics = _dedupe_sorted(_with_lint(report.diagnostics, linted_found))
    return reports


def _check_for_batch(root: Path, display: str) -> tuple[PackageReport, list[str] | None]:
    """In a worker process: a package's checks (the lint and git's attributes apart), and its files' relative paths
    (plain strings: cheap to send back)."""
    tree = walk(root) if root.is_dir() else None
    return run_static_checks(root, display, with_lint=False, tree=tree), [f.relative for f in tree.files] if tree \
        else None


def _listing(tree: PackageTree | None) -> PackageTree | None:
    """A package's files without what the checks read into them (ruff and git need only their paths)."""
    if tree is None:
        return None
    return PackageTree(tree.root, [PackageFile(f.relative, f.path, f.size) for f in tree.files])


def _batch_checks(listings: list[PackageTree | None], displays: list[str]) -> list[list]:
    """What ruff and git say about each package, each asked once for all of them."""
    present = [(tree, display) for tree, display in zip(listings, displays, strict=True) if tree is not None]
    trees = [tree for tree, _ in present]
    linted = lint_packages(trees, [display for _, display in present])
    found = iter(lint + attributes for lint, attributes in zip(linted, git_attributes_many(trees), strict=True))
    return [next(found) if tree is not None else [] for tree in listings]
