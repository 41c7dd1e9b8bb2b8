"""Load a package folder into a TaskPackage: the one parser used by validation, training and scoring.

Problems never raise: they come back as diagnostics with a check id, the file and line, and a fix. A package is
returned only when no error was found while reading it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from taskpkg.body import placeholders, split_sections
from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.package import AGENT_KIND, DEFAULT_AGENT_ROLE, TaskPackage
from taskpkg.paths import is_under, resolve_inside
from taskpkg.rules.package_files import ARENA001, ARENA002
from taskpkg.rules.prompt import ARENA201, ARENA203, ARENA204, ARENA205, ARENA206, ARENA207
from taskpkg.rules.sources import ARENA601
from taskpkg.rules.task_file import ARENA113, ARENA115, ARENA116, ARENA118, ARENA119
from taskpkg.schema import validate_frontmatter
from taskpkg.strict_yaml import YamlDocument
from taskpkg.task_file import TASK_FILE, read_task_file

MIN_INSTANCES = 100
ORACLE_DIR = "oracle"
ENVIRONMENT_DIR = "environment"
ORACLE_INTERPRETERS = {".sh": "sh", ".py": "python3"}


@dataclass
class LoadResult:
    """The package (when it could be built) and every diagnostic found on the way."""

    root: Path
    package: TaskPackage | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether nothing of error severity was found."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


def load_package(root: Path) -> LoadResult:
    """Read root/task.md, validate it and its references into the package's files."""
    result = LoadResult(root=root, package=None)
    if not root.is_dir():
        result.diagnostics.append(ARENA001.found(str(root), path=root))
        return result
    task_path = root / TASK_FILE
    if not task_path.is_file() or resolve_inside(root, TASK_FILE) is None:
        result.diagnostics.append(ARENA002.found(TASK_FILE, path=TASK_FILE, kind="file"))
        return result
    document = read_task_file(root)
    result.diagnostics.extend(document.diagnostics)
    if document.frontmatter is None:
        return result
    located = document.frontmatter
    schema_errors = validate_frontmatter(located, TASK_FILE)
    result.diagnostics.extend(schema_errors)
    data = located.data
    assert isinstance(data, dict)
    result.diagnostics.extend(_check_name(root, data, located))
    result.diagnostics.extend(_check_body(document.body, document.body_first_line))
    if schema_errors:
        return result
    result.diagnostics.extend(_check_limits(data, located))
    result.diagnostics.extend(_check_references(root, data, located))
    result.diagnostics.extend(_check_roles_and_scenes(data, located, document.body, document.body_first_line))
    if result.ok:
        result.package = TaskPackage.from_frontmatter(root, data, document.body, document.body_first_line)
    return result


def _check_name(root: Path, data: dict, doc: YamlDocument) -> list[Diagnostic]:
    name = data.get("name")
    folder = root.name if root.name not in ("", ".", "..") and not root.is_symlink() else root.resolve().name
    if isinstance(name, str) and name != folder:
        return [ARENA113.found(TASK_FILE, doc.line_of(("name",)), name=name, folder=folder)]
    return []


def _check_body(body: str, first_line: int) -> list[Diagnostic]:
    found = []
    if not body.strip():
        found.append(ARENA201.found(TASK_FILE, first_line))
    for placeholder in placeholders(body):
        if placeholder.key is None:
            found.append(ARENA203.found(TASK_FILE, first_line + placeholder.line - 1, placeholder=placeholder.raw[:60]))
    return found


def _check_limits(data: dict, doc: YamlDocument) -> list[Diagnostic]:
    limits, found = data["limits"], []
    if limits["oracle_timeout_s"] > limits["agent_timeout_s"]:
        found.append(ARENA115.found(TASK_FILE, doc.line_of(("limits", "oracle_timeout_s")), case="oracle_timeout",
                                    oracle=limits["oracle_timeout_s"], agent=limits["agent_timeout_s"]))
    scene_turns = sum(s.get("max_turns", 0) for s in data.get("scenes", ()))
    if scene_turns > limits["max_turns"]:
        found.append(ARENA115.found(TASK_FILE, doc.line_of(("limits", "max_turns")), case="scene_turns",
                                    turns=scene_turns, limit=limits["max_turns"]))
    if data["instances"]["count"] < MIN_INSTANCES:
        found.append(ARENA119.found(TASK_FILE, doc.line_of(("instances", "count")), count=data["instances"]["count"],
                                    minimum=MIN_INSTANCES))
    return found


def _check_references(root: Path, data: dict, doc: YamlDocument) -> list[Diagnostic]:
    found = []
    generator = data["instances"]["generator"]
    problem = _generator_problem(root, generator)
    if problem:
        found.append(ARENA116.found(TASK_FILE, doc.line_of(("instances", "generator")), case=problem,
                                    generator=generator))
    for index, entry in enumerate(data.get("verifier", {}).get("data", ())):
        target = resolve_inside(root, entry)
        if target is None or not target.exists():
            problem = "missing"
        elif is_under(entry, ENVIRONMENT_DIR) or is_under(entry, ORACLE_DIR) or entry in (TASK_FILE, "verifier.py"):
            problem = "visible"
        else:
            continue
        found.append(ARENA118.found(TASK_FILE, doc.line_of(("verifier", "data", index)), case=problem, entry=entry))
    entry = data["oracle"]["entrypoint"]
    oracle_dir = root / ORACLE_DIR
    target = resolve_inside(oracle_dir, entry) if oracle_dir.is_dir() else None
    problem = "missing" if target is None or not target.is_file() else None
    problem = problem or ("kind" if target is not None and target.suffix not in ORACLE_INTERPRETERS else None)
    if problem:
        found.append(ARENA601.found(TASK_FILE, doc.line_of(("oracle", "entrypoint")), case=problem, entry=entry))
    return found


def _generator_problem(root: Path, generator: str) -> str | None:
    """ARENA116's case for the generator's path, or None when it is fine."""
    resolved = resolve_inside(root, generator)
    if resolved is None or not resolved.is_file():
        return "missing"
    if not generator.endswith(".py"):
        return "not_python"
    if is_under(generator, ENVIRONMENT_DIR) or is_under(generator, ORACLE_DIR):
        return "visible"
    return None


def _check_roles_and_scenes(data: dict, doc: YamlDocument, body: str, body_line: int) -> list[Diagnostic]:
    roles = data.get("roles") or [{"name": DEFAULT_AGENT_ROLE, "kind": AGENT_KIND}]
    scenes = data.get("scenes", [])
    role_names = [r["name"] for r in roles]
    found = _duplicates("role", role_names, doc, lambda index: ("roles", index))
    agents = [r["name"] for r in roles if r["kind"] == AGENT_KIND]
    if len(agents) != 1:
        found.append(ARENA206.found(TASK_FILE, doc.line_of(("roles",)), case="agents", count=len(agents)))
    if not scenes and any(r["kind"] != AGENT_KIND for r in roles):
        found.append(ARENA206.found(TASK_FILE, doc.line_of(("roles",)), case="silent"))
    found += _duplicates("scene", [s["name"] for s in scenes], doc, lambda index: ("scenes", index, "name"))
    _, sections = split_sections(body)
    headings = [s.heading for s in sections]
    for index, scene in enumerate(scenes):
        if scene["role"] not in role_names:
            found.append(ARENA204.found(TASK_FILE, doc.line_of(("scenes", index, "role")), scene=scene["name"],
                                        role=scene["role"], roles=", ".join(role_names)))
        if scene["section"] not in headings:
            guess = difflib.get_close_matches(scene["section"], headings, n=1, cutoff=0.6)
            found.append(ARENA205.found(TASK_FILE, doc.line_of(("scenes", index, "section")),
                                        scene=scene["name"], section=scene["section"],
                                        **({"case": "guess", "guess": guess[0]} if guess else {})))
    if scenes:
        used = {s["section"] for s in scenes}
        found += [ARENA207.found(TASK_FILE, body_line + section.line - 1, section=section.heading)
                  for section in sections if section.heading not in used]
    return found


def _duplicates(kind: str, names: list[str], doc: YamlDocument, path_of: Callable[[int], tuple]) -> list[Diagnostic]:
    """ARENA206 for every name declared again after its first declaration."""
    return [ARENA206.found(TASK_FILE, doc.line_of(path_of(index)), case="duplicate", kind=kind, name=name)
            for index, name in enumerate(names) if name in names[:index]]
