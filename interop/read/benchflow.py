"""Read a BenchFlow task (task.md with YAML frontmatter; verifier/ or tests/, oracle/ or solution/, environment/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interop.files import find_canary, inside, outside_why, relative_to, strip_canary, task_folder
from interop.read import sections
from interop.read.benchflow_body import composition, resolve_turns, split_body
from interop.read.tables import Locator, Table
from interop.read.verifier_image import read_verifier_image
from interop.source_task import BENCHFLOW, InteropError, Sourced, SourceTask
from taskpkg.diagnostics import Severity
from taskpkg.task_file import read_task_file

DOCUMENT = "task.md"
BENCHFLOW_DEFAULTS = {"build_timeout_s": 600.0, "verifier_timeout_s": 600.0, "cpus": 1.0, "memory_mb": 2048.0,
                      "storage_mb": 10240.0}


@dataclass
class Frontmatter:
    """task.md's frontmatter (with the line of every key) and its body (with the line it starts on)."""

    data: dict
    locator: Locator
    body: str
    body_line: int


def frontmatter(root: Path) -> Frontmatter:
    """task.md split and its frontmatter parsed as the arena parses its own: taskpkg's task-file reader and strict
    YAML (no aliases, tags or duplicate keys, bounded nesting), so a hostile file is refused at once."""
    path = root / DOCUMENT
    if not inside(path, root):
        raise InteropError(DOCUMENT, outside_why(path), "Replace the link with the file itself.")
    document = read_task_file(root)
    errors = [d for d in document.diagnostics if d.severity is Severity.ERROR]
    if errors or document.frontmatter is None:
        first = errors[0] if errors else None
        raise InteropError(DOCUMENT, first.message if first else "has no frontmatter",
                           first.fix if first else "Begin the file with '---', the frontmatter, and a closing '---'.",
                           first.line if first else 1)
    data = document.frontmatter.data if isinstance(document.frontmatter.data, dict) else {}
    return Frontmatter(data, Locator(DOCUMENT, dict(document.frontmatter.lines)), document.body,
                       document.body_first_line)  # the lines are task.md's own


def read_benchflow(root: Path) -> SourceTask:
    """Read the BenchFlow task at root."""
    document = frontmatter(root)
    data, locator, body = document.data, document.locator, document.body
    source = SourceTask(fmt=BENCHFLOW, root=root, config_file=DOCUMENT, format_defaults=dict(BENCHFLOW_DEFAULTS))
    top = Table(data, (), locator, source)
    top.read.update({"version", "schema_version"})
    if top.has("environment") and top.has("sandbox"):
        raise InteropError(DOCUMENT, "declares both 'environment' and 'sandbox' (the same section: 'environment' is "
                           "the older spelling)", "Keep only 'sandbox'.", locator.line(("environment",)))
    sandbox_key = "sandbox" if top.has("sandbox") else "environment"
    oracle_key = "oracle" if isinstance(top.get("oracle"), dict) or not top.has("solution") else "solution"
    if top.has("name"):
        source.name = Sourced(top.text("name"), top.where("name"))
    sections.read_package(top.table("task"))
    sections.read_metadata(top.table("metadata"))
    sections.read_agent(top.table("agent"))
    paths = _path_shorthands(top)
    sections.read_verifier(top.table("verifier") if "verifier" not in paths else _empty(top, "verifier"), "sandbox")
    sections.read_sandbox(top.table(sandbox_key), sandbox_key)
    if top.has("image") and source.docker_image is None:
        source.docker_image = Sourced(top.text("image"), top.where("image"))
    sections.read_solution(top.table(oracle_key) if oracle_key not in paths else _empty(top, oracle_key))
    _benchflow_block(source, top.table("benchflow"), paths)
    for key in ("profile", "profiles"):
        top.lose(key, "(an authoring preset) is not expanded: write the values it sets explicitly")
    top.lose("source", "(where the task came from) has no native key; dropped")
    top.lose("reward", "(reward expression metadata) is not supported")
    sections.read_artifacts(top)
    top.lose("steps", "(multi-step verification) is not supported: the arena verifies the final state once")
    top.lose("multi_step_reward_strategy", "is not supported: the arena verifies the final state once")
    prompts = split_body(body, root)
    source.prompt, stripped = strip_canary(prompts.instruction)
    prompts.instruction = source.prompt
    source.prompt_where = DOCUMENT
    if stripped:
        source.mapped(DOCUMENT, "leading canary lines removed from the prompt; the GUID is kept as `canary:`")
    resolve_turns(source, top, prompts, composition(top.table("benchflow")))
    top.report_unread()
    _layout(source, paths)
    source.canary = find_canary(root, [root / DOCUMENT, root / "verifier", root / "tests", root / "oracle",
                                       root / "solution", root / "environment"])
    return source


def _empty(top: Table, key: str) -> Table:
    top.read.add(key)
    return Table({}, (key,), top.locator, top.source)


def _path_shorthands(top: Table) -> dict[str, str]:
    """`verifier: dir/` and `oracle: dir/` shorthands."""
    return {key: top.text(key).rstrip("/") for key in ("verifier", "oracle") if isinstance(top.data.get(key), str)}


def _benchflow_block(source: SourceTask, block: Table, paths: dict[str, str]) -> None:
    """The `benchflow:` block: verifier entrypoint and oracle path are used, the rest is reported."""
    verifier = block.table("verifier")
    entry = verifier.text("entrypoint")
    if entry:
        folder, _, script = entry.rpartition("/")
        paths.setdefault("verifier", folder or ".")
        source.test_script = script
    if verifier.has("spec"):
        source.lost(verifier.where("spec"), f"verifier strategies in {verifier.text('spec')} are not read; the "
                    f"arena runs {source.test_script}")
    verifier.read.update({"path", "spec", "rubric", "implementation"})
    oracle = block.table("oracle")
    if oracle.text("path"):
        path = oracle.text("path").rstrip("/")
        paths.setdefault("oracle", path.rsplit("/", 1)[0] if path.endswith(".sh") else path)
    oracle.report_unread()
    block.read.update({"verifier", "oracle", "document_version", "source", "authoring", "compat"})
    block.lose("environment", "(service manifests) is not supported: the arena runs one container")
    block.lose("multi_agent", "(external multi-agent workflows) is not supported")
    block.read.add("prompt")
    block.report_unread("is a BenchFlow extension the arena does not read; ignored")


def _layout(source: SourceTask, paths: dict[str, str]) -> None:
    root = source.root
    verifier = task_folder(root, paths["verifier"]) if "verifier" in paths else (
        task_folder(root, "verifier") if (root / "verifier").is_dir() else task_folder(root, "tests"))
    source.verifier_dirs = [verifier]
    if verifier.name != "tests" or "verifier" in paths:
        source.verifier_mount, source.verifier_links = "/verifier", ("/tests",)
        source.verifier_env = {"BENCHFLOW_VERIFIER_DIR": "/verifier"}
    oracle = task_folder(root, paths["oracle"]) if "oracle" in paths else (
        task_folder(root, "oracle") if (root / "oracle").is_dir() else task_folder(root, "solution"))
    source.oracle_dir = oracle if oracle.is_dir() else None
    source.environment_dir = task_folder(root, "environment")
    if (verifier / "verifier.md").is_file() and not any("verifier strategies" in n for n in source.report.lost):
        source.lost(f"{verifier.name}/verifier.md", f"its verifier strategies are not read; the arena runs "
                    f"{source.test_script}")
    if not (verifier / source.test_script).is_file():
        where = relative_to(verifier / source.test_script, root)
        raise InteropError(where, "is missing", "The arena runs a deterministic test script; add it (a judge that "
                           "calls a model cannot run without a network).")
    if not (source.environment_dir / "Dockerfile").is_file() and not source.docker_image:
        raise InteropError("environment/Dockerfile", "is missing and task.md names no image",
                           "Add environment/Dockerfile (the arena builds the agent's image from it).")
    read_verifier_image(source, verifier)
