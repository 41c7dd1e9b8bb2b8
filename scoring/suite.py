"""The held-out suite: a versioned manifest (`suite.yaml`, schema `suite-v1.schema.json`) of items, each an instance
of a native task package beside it, with its domain and an optional cluster id.

The suite's location is configuration, never part of the code: `--suite PATH` or the ARENA_SUITE variable names the
manifest or its folder (`suite_location`). The private suite lives outside this repository; the public sample suite
is `suites/sample/suite.yaml`.

Loading refuses, naming the manifest's file and line with a fix: YAML the strict reader refuses, a schema
violation, a package path outside the suite's folder or without a package, a package that does not load or whose
domain differs from the entry's, an instance out of range, an item listed twice, stated per-domain counts that
differ from the items, and (unless asked not to) a domain over 20% of the items.

Item and cluster ids are hashes salted with the suite's canary (`item_id`, `cluster_id`), so records, logs and the
site name items without revealing which package or instance they are.

`suite_digest` is the suite's content digest ("sha256:<64 hex>", `arena suite digest`): the canary and every item's
package, instance, domain and cluster in manifest order, and every package's files. Two suites with the same digest
score the same items the same way, whatever their name or version says; results records carry it, and runs are
compared only on the same digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from scoring.results import schema
from taskpkg.digest import tree_digest
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from taskpkg.paths import resolve_inside
from taskpkg.schema import dotted
from taskpkg.strict_yaml import StrictYamlError, YamlDocument, load

MANIFEST = "suite.yaml"
ENV_VARIABLE = "ARENA_SUITE"
MAX_DOMAIN_SHARE = 0.20
MAX_MANIFEST_BYTES = 4 * 1024 * 1024


class SuiteError(Exception):
    """A suite that cannot be used: the manifest's file and line, what is wrong, and how to fix it."""

    def __init__(self, file: Path, line: int | None, message: str, fix: str) -> None:
        super().__init__(f"{file}{f':{line}' if line else ''}: {message}. {fix}")
        self.file, self.line, self.message, self.fix = file, line, message, fix


@dataclass(frozen=True)
class SuiteItem:
    """One item: an instance of a package."""

    id: str  # opaque: item_id(canary, package, instance)
    package: str  # the package's name
    path: Path  # its folder
    domain: str
    cluster: str | None  # as the manifest names it (cluster_id hashes it for records)
    cluster_id: str | None
    instance: int
    line: int  # where the manifest lists it


@dataclass(frozen=True)
class Suite:
    """A loaded suite."""

    manifest: Path
    name: str
    version: str
    public: bool
    canary: str
    items: tuple[SuiteItem, ...]
    packages: dict[str, TaskPackage] = field(repr=False)  # by package folder (resolved path as text)

    def counts(self) -> dict[str, int]:
        """Items per domain, in the arena's domain order."""
        found = {name: 0 for name in DOMAINS}
        for item in self.items:
            found[item.domain] += 1
        return {name: n for name, n in found.items() if n}


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


def item_id(canary: str, package: str, instance: int) -> str:
    """An item's opaque id: 16 hex digits of sha256 over the suite's canary, the package name and the instance."""
    return _digest(canary, "item", package, str(instance))


def cluster_id(canary: str, cluster: str) -> str:
    """A cluster's opaque id, salted the same way."""
    return _digest(canary, "cluster", cluster)


def suite_digest(suite: Suite) -> str:
    """The suite's content digest (see the module doc): "sha256:" and 64 hex digits."""
    packages = {item.package: item.path for item in suite.items}
    content = {"canary": suite.canary,
               "items": [[item.package, item.instance, item.domain, item.cluster] for item in suite.items],
               "packages": {name: tree_digest(path, frozenset({"__pycache__"}))
                            for name, path in sorted(packages.items())}}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def suite_location(given: str | Path | None) -> Path:
    """The manifest named by --suite or else $ARENA_SUITE (a suite.yaml or its folder); SuiteError when neither is
    set."""
    raw = given if given not in (None, "") else os.environ.get(ENV_VARIABLE)
    if not raw:
        raise SuiteError(Path("."), None, "no suite given",
                         f"Pass --suite PATH (a suite.yaml or its folder) or set {ENV_VARIABLE}; the public sample "
                         "is suites/sample")
    path = Path(raw)
    is_folder = path.is_dir() or (not path.exists() and path.suffix not in (".yaml", ".yml"))
    return path / MANIFEST if is_folder else path


def read_document(manifest: Path) -> YamlDocument:
    """The manifest strictly parsed, with lines; SuiteError for an unreadable or invalid YAML file."""
    if not manifest.is_file():
        raise SuiteError(manifest, None, "no suite manifest here", f"Point at a {MANIFEST} or the folder holding it")
    if manifest.stat().st_size > MAX_MANIFEST_BYTES:
        raise SuiteError(manifest, None, f"the manifest is over {MAX_MANIFEST_BYTES} bytes", "Split the suite")
    try:
        return load(manifest.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise SuiteError(manifest, None, "the manifest is not UTF-8 text", "Save it as UTF-8") from None
    except StrictYamlError as exc:
        raise SuiteError(manifest, exc.line, exc.message, exc.fix) from None


def _schema_error(manifest: Path, document: YamlDocument) -> None:
    error = best_match(Draft202012Validator(schema("suite-v1.schema.json")).iter_errors(document.data))
    if error is None:
        return
    path = tuple(error.absolute_path)
    if error.validator in ("enum", "propertyNames") and "domain" in dotted(path):
        hint = f"The arena's domains are: {', '.join(DOMAINS)}"
    else:
        described = error.schema.get("description") if isinstance(error.schema, dict) else None
        hint = described or "See scoring/schema/suite-v1.schema.json"
    raise SuiteError(manifest, document.line_of(path), f"{dotted(path)}: {error.message}", hint)


def load_suite(manifest: Path, check_balance: bool = True) -> Suite:
    """Read and check a suite manifest and every package it names. Raises SuiteError (file and line)."""
    document = read_document(manifest)
    _schema_error(manifest, document)
    data = document.data
    assert isinstance(data, dict)
    root = manifest.parent
    packages: dict[str, TaskPackage] = {}
    items: list[SuiteItem] = []
    seen: dict[tuple[str, int], int] = {}
    for index, entry in enumerate(data["items"]):
        line = document.line_of(("items", index)) or 0
        package = _package(manifest, root, entry, line, packages)
        cluster = entry.get("cluster")
        for position, instance in enumerate(entry["instances"]):
            at = document.line_of(("items", index, "instances", position)) or line
            if instance >= package.instance_count:
                raise SuiteError(manifest, at, f"instance {instance} of {package.name} does not exist",
                                 f"It has instances 0 to {package.instance_count - 1}")
            key = (package.name, instance)
            if key in seen:
                raise SuiteError(manifest, at, f"instance {instance} of {package.name} is listed twice (first on "
                                 f"line {seen[key]})", "List every item once")
            seen[key] = at
            items.append(SuiteItem(item_id(data["canary"], package.name, instance), package.name, package.root,
                                   entry["domain"], cluster, cluster_id(data["canary"], cluster) if cluster else None,
                                   instance, at))
    suite = Suite(manifest, data["name"], data["version"], data["public"], data["canary"], tuple(items), packages)
    _check_counts(suite, document, data["domains"])
    if check_balance:
        problems = balance_problems(suite.counts())
        if problems:
            raise SuiteError(manifest, document.line_of(("domains",)), problems[0],
                             "Add items to the other domains or remove some of this one; no domain may hold more "
                             f"than {MAX_DOMAIN_SHARE:.0%} of the items")
    return suite


def _package(manifest: Path, root: Path, entry: dict[str, Any], line: int,
             packages: dict[str, TaskPackage]) -> TaskPackage:
    folder = resolve_inside(root, entry["package"])
    if folder is None:
        raise SuiteError(manifest, line, f"package path {entry['package']!r} leaves the suite's folder",
                         "Keep packages under the manifest's folder (for example packages/NAME) and give a relative "
                         "path without '..'")
    key = str(folder.resolve())
    if key not in packages:
        if not (folder / "task.md").is_file():
            raise SuiteError(manifest, line, f"no package at {entry['package']} (no task.md there)",
                             "Add it with `arena suite add`, or fix the path")
        loaded = load_package(folder)
        if loaded.package is None:
            first = next((d for d in loaded.diagnostics if d.severity.value == "error"), None)
            reason = f"{first.check_id} {first.location()}: {first.message}" if first else "it does not load"
            raise SuiteError(manifest, line, f"package {entry['package']} does not load ({reason})",
                             f"Run `arena check {folder}` and fix it")
        packages[key] = loaded.package
    package = packages[key]
    if package.domain != entry["domain"]:
        raise SuiteError(manifest, line, f"the entry says domain {entry['domain']} but {package.name} is "
                         f"{package.domain}", "Make them agree")
    return package


def _check_counts(suite: Suite, document: YamlDocument, stated: dict[str, int]) -> None:
    actual = suite.counts()
    for domain in sorted(set(stated) | set(actual)):
        if stated.get(domain, 0) != actual.get(domain, 0):
            raise SuiteError(suite.manifest, document.line_of(("domains", domain)) or document.line_of(("domains",)),
                             f"domains.{domain} states {stated.get(domain, 0)} items but {actual.get(domain, 0)} "
                             "are listed", "Make the stated count match the items (`arena suite add` keeps them in "
                             "step)")


def balance_problems(counts: dict[str, int]) -> list[str]:
    """Why a suite's per-domain counts break the ≤20%-per-domain rule (none: it holds)."""
    total = sum(counts.values())
    return [f"{domain} holds {n} of {total} items ({n / total:.0%}), over {MAX_DOMAIN_SHARE:.0%}"
            for domain, n in counts.items() if n > MAX_DOMAIN_SHARE * total + 1e-9]
