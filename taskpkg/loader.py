"""Load a package folder into a TaskPackage: the one parser used by validation, training and scoring.

Problems never raise: they come back as diagnostics with a check id, the file and line, and a fix. A package is
returned only when no error was found while reading it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from taskpkg.body import placeholders, split_sections
from taskpkg.checks import check
from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.model import AGENT_KIND, DEFAULT_AGENT_ROLE, TaskPackage
from taskpkg.paths import is_under, resolve_inside
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
        result.diagnostics.append(check("ARENA001").found(
            f"{root} is not a folder", "Point at a package folder such as environments/<name>.", str(root)))
        return result
    task_path = root / TASK_FILE
    if not task_path.is_file() or resolve_inside(root, TASK_FILE) is None:
        result.diagnostics.append(check("ARENA002").found(
            f"{TASK_FILE} is missing", "Create it with `arena new NAME --domain D`, or add it by hand.", TASK_FILE))
        return result
    document = read_task_file(root)
    result.diagnostics.extend(document.diagnostics)
    if document.frontmatter is None:
        return result
    located = _shift_lines(document.frontmatter, document.frontmatter_first_line - 1)
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
        result.package = TaskPackage.from_frontmatter(root, data, document.body)
    return result


def _shift_lines(document: YamlDocument, offset: int) -> YamlDocument:
    return YamlDocument(document.data, {path: line + offset for path, line in document.lines.items()})


def _check_name(root: Path, data: dict, doc: YamlDocument) -> list[Diagnostic]:
    name, folder = data.get("name"), root.resolve().name
    if isinstance(name, str) and name != folder:
        return [check("ARENA113").found(
            f"name is '{name}' but the folder is '{folder}'",
            f"Rename the folder to environments/{name}/ or set `name: {folder}`.", TASK_FILE, doc.line_of(("name",)))]
    return []


def _check_body(body: str, first_line: int) -> list[Diagnostic]:
    found = []
    if not body.strip():
        found.append(check("ARENA201").found(
            "the prompt (the Markdown after the frontmatter) is empty",
            "Write the task for the agent below the closing '---'.", TASK_FILE, first_line))
    for placeholder in placeholders(body):
        if placeholder.key is None:
            found.append(check("ARENA203").found(
                f"placeholder {placeholder.raw[:60]} is not of the form {{{{ instance.KEY }}}}",
                "Use {{ instance.KEY }} with a key your generator prints, or remove the braces.",
                TASK_FILE, first_line + placeholder.line - 1))
    return found


def _check_limits(data: dict, doc: YamlDocument) -> list[Diagnostic]:
    limits, found = data["limits"], []
    if limits["oracle_timeout_s"] > limits["agent_timeout_s"]:
        found.append(check("ARENA115").found(
            f"limits.oracle_timeout_s ({limits['oracle_timeout_s']}) exceeds limits.agent_timeout_s "
            f"({limits['agent_timeout_s']}): the task would not be shown solvable within the agent's limits",
            "Lower oracle_timeout_s or raise agent_timeout_s.", TASK_FILE, doc.line_of(("limits", "oracle_timeout_s"))))
    scene_turns = sum(s.get("max_turns", 0) for s in data.get("scenes", ()))
    if scene_turns > limits["max_turns"]:
        found.append(check("ARENA115").found(
            f"the scenes' max_turns add up to {scene_turns}, more than limits.max_turns ({limits['max_turns']})",
            "Lower the scenes' max_turns or raise limits.max_turns.", TASK_FILE, doc.line_of(("limits", "max_turns"))))
    if data["instances"]["count"] < MIN_INSTANCES:
        found.append(check("ARENA119").found(
            f"instances.count is {data['instances']['count']}; RL training needs many distinct instances",
            f"Generate at least {MIN_INSTANCES} instances from the seed.", TASK_FILE,
            doc.line_of(("instances", "count"))))
    return found


def _check_references(root: Path, data: dict, doc: YamlDocument) -> list[Diagnostic]:
    found = []
    generator = data["instances"]["generator"]
    gen_line = doc.line_of(("instances", "generator"))
    resolved = resolve_inside(root, generator)
    if resolved is None or not resolved.is_file():
        found.append(check("ARENA116").found(
            f"instances.generator '{generator}' is not a file inside the package",
            "Point it at a Python file such as instance/generate.py.", TASK_FILE, gen_line))
    elif not generator.endswith(".py"):
        found.append(check("ARENA116").found(
            f"instances.generator '{generator}' is not a Python file", "The generator runs with python3; "
            "name a .py file.", TASK_FILE, gen_line))
    elif is_under(generator, ENVIRONMENT_DIR) or is_under(generator, ORACLE_DIR):
        found.append(check("ARENA116").found(
            f"instances.generator '{generator}' lies under {generator.split('/')[0]}/, where the agent can read it",
            "Move it to its own folder, e.g. instance/generate.py.", TASK_FILE, gen_line))
    for index, entry in enumerate(data.get("verifier", {}).get("data", ())):
        line = doc.line_of(("verifier", "data", index))
        target = resolve_inside(root, entry)
        if target is None or not target.exists():
            found.append(check("ARENA118").found(
                f"verifier.data '{entry}' does not exist inside the package",
                "List files or folders of the package, relative to it.", TASK_FILE, line))
        elif is_under(entry, ENVIRONMENT_DIR) or is_under(entry, ORACLE_DIR) or entry in (TASK_FILE, "verifier.py"):
            found.append(check("ARENA118").found(
                f"verifier.data '{entry}' is part of the image, the oracle or the task itself",
                "Keep verifier data in its own folder; the agent must never see it.", TASK_FILE, line))
    entry = data["oracle"]["entrypoint"]
    line = doc.line_of(("oracle", "entrypoint"))
    oracle_dir = root / ORACLE_DIR
    target = resolve_inside(oracle_dir, entry) if oracle_dir.is_dir() else None
    if target is None or not target.is_file():
        found.append(check("ARENA601").found(
            f"oracle.entrypoint '{entry}' is not a file in {ORACLE_DIR}/",
            f"Add {ORACLE_DIR}/{entry} or point oracle.entrypoint at the script that solves the task.", TASK_FILE,
            line))
    elif target.suffix not in ORACLE_INTERPRETERS:
        found.append(check("ARENA601").found(
            f"oracle.entrypoint '{entry}' is neither a .sh nor a .py file",
            "Use a shell script (run with sh) or a Python file (run with python3).", TASK_FILE, line))
    return found


def _check_roles_and_scenes(data: dict, doc: YamlDocument, body: str, body_line: int) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    roles = data.get("roles") or [{"name": DEFAULT_AGENT_ROLE, "kind": AGENT_KIND}]
    scenes = data.get("scenes", [])
    role_names = [r["name"] for r in roles]
    for index, name in enumerate(role_names):
        if name in role_names[:index]:
            found.append(check("ARENA206").found(
                f"role '{name}' is declared twice", "Give every role its own name.", TASK_FILE,
                doc.line_of(("roles", index))))
    agents = [r["name"] for r in roles if r["kind"] == AGENT_KIND]
    if len(agents) != 1:
        found.append(check("ARENA206").found(
            f"{len(agents)} roles have kind 'agent'; exactly one must", "Mark the trained model's role "
            "`kind: agent` and every other role `kind: scripted`.", TASK_FILE, doc.line_of(("roles",))))
    if not scenes and any(r["kind"] != AGENT_KIND for r in roles):
        found.append(check("ARENA206").found(
            "scripted roles are declared but no scenes give them anything to say",
            "Add `scenes` naming which section each role speaks, or remove the scripted roles.", TASK_FILE,
            doc.line_of(("roles",))))
    scene_names = [s["name"] for s in scenes]
    _, sections = split_sections(body)
    headings = [s.heading for s in sections]
    for index, scene in enumerate(scenes):
        if scene["name"] in scene_names[:index]:
            found.append(check("ARENA206").found(
                f"scene '{scene['name']}' is declared twice", "Give every scene its own name.", TASK_FILE,
                doc.line_of(("scenes", index, "name"))))
        if scene["role"] not in role_names:
            found.append(check("ARENA204").found(
                f"scene '{scene['name']}' is spoken by role '{scene['role']}', which is not declared",
                f"Declare it under `roles`, or use one of: {', '.join(role_names)}.", TASK_FILE,
                doc.line_of(("scenes", index, "role"))))
        if scene["section"] not in headings:
            guess = difflib.get_close_matches(scene["section"], headings, n=1, cutoff=0.6)
            hint = f"Did you mean '{guess[0]}'? " if guess else ""
            found.append(check("ARENA205").found(
                f"scene '{scene['name']}' speaks section '{scene['section']}', but the body has no "
                f"'## {scene['section']}' heading",
                f"{hint}Add the heading to the body or fix the section name.", TASK_FILE,
                doc.line_of(("scenes", index, "section"))))
    if scenes:
        used = {s["section"] for s in scenes}
        for section in sections:
            if section.heading not in used:
                found.append(check("ARENA207").found(
                    f"section '## {section.heading}' is not spoken in any scene, so the agent never sees it",
                    "Add a scene for it, move its text into the preamble, or remove it.", TASK_FILE,
                    body_line + section.line - 1))
    return found
