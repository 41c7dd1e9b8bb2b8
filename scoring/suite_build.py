"""`arena suite add`: put a native package into a suite and list some of its instances as items.

The package is copied to `<suite folder>/packages/<name>/` unless it already lies under the suite's folder; its
instances join the manifest under its domain and a cluster (default: the package's name, since instances of one
package are one task family). Stated counts follow, the suite's minor version goes up (items changed, so runs on
the old version must not be compared with new ones), and the manifest is rewritten atomically and read back. A
manifest that does not exist yet is created with a fresh canary. Balance is not enforced while a suite is being
built: the caller reports `balance_problems` until `arena suite check` passes.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path

import yaml

from scoring.suite import Suite, SuiteError, load_suite, read_document
from taskpkg.atomic_files import write_text_atomic
from taskpkg.digest import tree_digest
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage

PACKAGES_DIR = "packages"
HEADER = "# A held-out suite (scoring/schema/suite-v1.schema.json). Keep it private unless it is a sample.\n"


def add_package(manifest: Path, source: Path, instances: list[int], cluster: str | None = None,
                bump_version: bool = True) -> Suite:
    """Add instances of the package at source to the suite (creating the manifest if absent); returns the suite as
    read back. Raises SuiteError when the package does not load, an instance is out of range or already listed,
    or a different package of that name is already in the suite."""
    package = _loaded(source)
    outside = [i for i in instances if not 0 <= i < package.instance_count]
    if outside or not instances:
        raise SuiteError(source, None, f"instances {outside or 'none'} are not instances of {package.name}",
                         f"Pick instances from 0 to {package.instance_count - 1}")
    root = manifest.parent
    data, header = _current(manifest)
    previous = manifest.read_text(encoding="utf-8") if manifest.exists() else None
    target = _place(package, root)
    relative = target.relative_to(root).as_posix()
    entry = next((e for e in data["items"] if e["package"] == relative and e.get("cluster") == (cluster or
                                                                                                 package.name)), None)
    if entry is None:
        entry = {"package": relative, "domain": package.domain, "cluster": cluster or package.name, "instances": []}
        data["items"].append(entry)
    entry["instances"] = sorted({*entry["instances"], *instances})
    counts = {d: 0 for d in DOMAINS}
    for item in data["items"]:
        counts[item["domain"]] += len(item["instances"])
    data["domains"] = {d: n for d, n in counts.items() if n}
    if bump_version:
        major, minor, _ = (int(x) for x in data["version"].split("."))
        data["version"] = f"{major}.{minor + 1}.0"
    write_text_atomic(manifest, header + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120,
                                             allow_unicode=True))
    try:
        return load_suite(manifest, check_balance=False)
    except SuiteError:
        if previous is None:
            manifest.unlink()
        else:
            write_text_atomic(manifest, previous)  # the suite stays as it was
        raise


def _loaded(source: Path) -> TaskPackage:
    loaded = load_package(source)
    if loaded.package is None:
        first = next((d for d in loaded.diagnostics if d.severity.value == "error"), None)
        reason = f"{first.check_id} {first.location()}: {first.message}" if first else "it does not load"
        raise SuiteError(source, None, f"not a package that loads ({reason})", f"Run `arena check {source}`")
    return loaded.package


def _current(manifest: Path) -> tuple[dict, str]:
    """The manifest's data and its leading comment block; a new suite's when the file does not exist."""
    if not manifest.exists():
        words = re.findall(r"[a-z0-9]+", manifest.parent.resolve().name.lower())
        name = "-".join(words)[:40].strip("-") or "suite"
        return ({"suite_version": 1, "name": name if name[:1].isalpha() else f"suite-{name}", "version": "0.0.0",
                 "public": False, "canary": f"arena-suite-canary:{uuid.uuid4()}", "domains": {}, "items": []},
                HEADER)
    document = read_document(manifest)
    load_suite(manifest, check_balance=False)  # refuse to build on a broken manifest
    lead = []
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lead.append(line + "\n")
    assert isinstance(document.data, dict)
    return document.data, "".join(lead)


def _place(package: TaskPackage, root: Path) -> Path:
    """Where the package lives in the suite: where it is when already inside, else copied to packages/<name>."""
    resolved_root = root.resolve()
    here = package.root.resolve()
    if here == resolved_root or resolved_root in here.parents:
        return root / here.relative_to(resolved_root)
    target = root / PACKAGES_DIR / package.name
    if target.exists():
        if tree_digest(target) != tree_digest(package.root):
            raise SuiteError(target, None, f"a different package named {package.name} is already in the suite",
                             "Rename one of them, or remove the old one first")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{package.name}."))
    try:
        shutil.copytree(package.root, scratch / "copy", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        os.replace(scratch / "copy", target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target
