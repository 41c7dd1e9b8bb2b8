"""Read a BenchFlow task (task.md with YAML frontmatter; verifier/ or tests/, oracle/ or solution/, environment/)."""

from __future__ import annotations

from pathlib import Path

import yaml

from interop import common
from interop.benchflow_prompt import composition, resolve_turns, split_body
from interop.errors import InteropError
from interop.locate import yaml_locator
from interop.model import Sourced, SourceTask
from interop.sources import find_canary, read_text, strip_canary
from interop.tables import Table

DOCUMENT = "task.md"
BENCHFLOW_DEFAULTS = {"build_timeout_s": 600.0, "verifier_timeout_s": 600.0, "cpus": 1.0, "memory_mb": 2048.0,
                      "storage_mb": 10240.0}


def split_document(root: Path) -> tuple[str, str, int]:
    """The frontmatter text, the body, and the line where the body starts."""
    text = read_text(root / DOCUMENT, root)
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise InteropError(DOCUMENT, "does not start with a '---' line (YAML frontmatter)",
                           "Begin the file with '---', the frontmatter, and a closing '---'.", 1)
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if closing is None:
        raise InteropError(DOCUMENT, "the frontmatter is never closed", "Add a '---' line after it.", 1)
    return "\n".join(lines[1:closing]), "\n".join(lines[closing + 1:]), closing + 2


def load_frontmatter(text: str) -> dict:
    """The frontmatter as a mapping; a YAML error names its line."""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InteropError(DOCUMENT, f"the frontmatter is not valid YAML ({getattr(exc, 'problem', exc)})",
                           "Fix the YAML at that line.", mark.line + 2 if mark else None) from None
    if not isinstance(data, dict):
        raise InteropError(DOCUMENT, "the frontmatter is not a mapping of keys", "Write `key: value` lines.", 2)
    return data


def read_benchflow(root: Path) -> SourceTask:
    """Read the BenchFlow task at root."""
    front, body, _ = split_document(root)
    data = load_frontmatter(front)
    locator = yaml_locator(DOCUMENT, front, 2)
    source = SourceTask(fmt="benchflow", root=root, config_file=DOCUMENT, format_defaults=dict(BENCHFLOW_DEFAULTS))
    top = Table(data, (), locator, source)
    top.read.update({"version", "schema_version"})
    if top.has("environment") and top.has("sandbox"):
        raise InteropError(DOCUMENT, "declares both 'environment' and 'sandbox' (the same section: 'environment' is "
                           "the older spelling)", "Keep only 'sandbox'.", locator.line(("environment",)))
    sandbox_key = "sandbox" if top.has("sandbox") else "environment"
    oracle_key = "oracle" if isinstance(top.get("oracle"), dict) or not top.has("solution") else "solution"
    if top.has("name"):
        source.name = Sourced(top.text("name"), top.where("name"))
    common.read_package(top.table("task"))
    common.read_metadata(top.table("metadata"))
    common.read_agent(top.table("agent"))
    paths = _path_shorthands(top)
    common.read_verifier(top.table("verifier") if "verifier" not in paths else _empty(top, "verifier"), "sandbox")
    common.read_sandbox(top.table(sandbox_key), sandbox_key)
    if top.has("image") and source.docker_image is None:
        source.docker_image = Sourced(top.text("image"), top.where("image"))
    common.read_solution(top.table(oracle_key) if oracle_key not in paths else _empty(top, oracle_key))
    _benchflow_block(source, top.table("benchflow"), paths)
    for key in ("profile", "profiles"):
        top.lose(key, "(an authoring preset) is not expanded: write the values it sets explicitly")
    top.lose("source", "(where the task came from) has no native key; dropped")
    top.lose("reward", "(reward expression metadata) is not supported")
    top.lose("artifacts", "are not collected by the arena")
    top.lose("steps", "(multi-step verification) is not supported: the arena verifies the final state once")
    top.lose("multi_step_reward_strategy", "is not supported: the arena verifies the final state once")
    prompts = split_body(body, root)
    source.prompt, stripped = strip_canary(prompts.instruction)
    prompts.instruction = source.prompt
    source.prompt_where = DOCUMENT
    if stripped:
        source.notes.append(f"{DOCUMENT}: leading canary lines removed from the prompt; the GUID is kept as `canary:`")
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
        source.notes.append(f"{verifier.where('spec')}: verifier strategies in {verifier.text('spec')} are not "
                            f"read; the arena runs {source.test_script}")
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
    verifier = root / paths["verifier"] if "verifier" in paths else (
        root / "verifier" if (root / "verifier").is_dir() else root / "tests")
    source.verifier_dirs = [verifier]
    if verifier.name != "tests" or "verifier" in paths:
        source.verifier_mount, source.verifier_links = "/verifier", ("/tests",)
        source.verifier_env = {"BENCHFLOW_VERIFIER_DIR": "/verifier"}
    oracle = root / paths["oracle"] if "oracle" in paths else (
        root / "oracle" if (root / "oracle").is_dir() else root / "solution")
    source.oracle_dir = oracle if oracle.is_dir() else None
    source.environment_dir = root / "environment"
    if (verifier / "verifier.md").is_file() and not any("verifier strategies" in n for n in source.notes):
        source.notes.append(f"{verifier.name}/verifier.md: its verifier strategies are not read; the arena runs "
                            f"{source.test_script}")
    if not (verifier / source.test_script).is_file():
        where = (verifier / source.test_script).relative_to(root).as_posix()
        raise InteropError(where, "is missing", "The arena runs a deterministic test script; add it (a judge that "
                           "calls a model cannot run without a network).")
    if not (source.environment_dir / "Dockerfile").is_file() and not source.docker_image:
        raise InteropError("environment/Dockerfile", "is missing and task.md names no image",
                           "Add environment/Dockerfile (the arena builds the agent's image from it).")
