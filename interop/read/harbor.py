"""Read a Harbor task (task.toml, instruction.md, environment/, tests/, solution/, optional steps/)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from interop.files import find_canary, read_text, strip_canary, task_folder
from interop.read import sections
from interop.read.tables import Table, toml_locator
from interop.read.verifier_image import read_verifier_image
from interop.source_task import HARBOR, InteropError, SourceTask, Turn

CONFIG = "task.toml"
HARBOR_DEFAULTS = {"build_timeout_s": 600.0, "verifier_timeout_s": 600.0}
_TOML_LINE = re.compile(r"line (\d+)")


def load_config(root: Path) -> tuple[dict, str]:
    """task.toml as a dict, and its text; a syntax error names the line."""
    text = read_text(root / CONFIG, root)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        line = _TOML_LINE.search(str(exc))
        raise InteropError(CONFIG, f"is not valid TOML ({exc})", "Fix the syntax at that place.",
                           int(line.group(1)) if line else None) from None


def read_harbor(root: Path) -> SourceTask:
    """Read the Harbor task at root."""
    data, text = load_config(root)
    locator = toml_locator(CONFIG, text)
    source = SourceTask(fmt=HARBOR, root=root, config_file=CONFIG, format_defaults=dict(HARBOR_DEFAULTS))
    top = Table(data, (), locator, source)
    top.read.update({"version", "schema_version"})
    sections.read_package(top.table("task"))
    sections.read_metadata(top.table("metadata"))
    sections.read_agent(top.table("agent"))
    sections.read_verifier(top.table("verifier"), "environment")
    sections.read_sandbox(top.table("environment"), "[environment]")
    sections.read_solution(top.table("solution"))
    top.lose("source", "(where the task came from) has no native key; dropped")
    sections.read_artifacts(top)
    steps = top.array("steps")
    strategy = top.get("multi_step_reward_strategy")
    top.report_unread()
    source.environment_dir = task_folder(root, "environment")
    source.verifier_dirs = [task_folder(root, "tests")]
    if steps:
        _read_steps(source, top, steps, strategy)
    else:
        _read_instruction(source, root / "instruction.md")
        source.oracle_dir = task_folder(root, "solution") if (root / "solution").is_dir() else None
    _require_tests(source)
    read_verifier_image(source, source.verifier_dirs[-1])
    source.canary = find_canary(root, [root / CONFIG, root / "instruction.md", root / "tests", root / "solution",
                                       root / "environment", root / "steps"])
    return source


def _read_instruction(source: SourceTask, path: Path) -> str:
    where = path.relative_to(source.root).as_posix()
    if not path.is_file():
        raise InteropError(where, "is missing", "Harbor tasks give the agent instruction.md; add it.")
    text, stripped = strip_canary(read_text(path, source.root))
    if stripped:
        source.mapped(where, "leading canary lines removed from the prompt (Harbor hides them from the agent too); "
                      "the GUID is kept as `canary:`")
    if not source.turns:
        source.prompt, source.prompt_where = text.strip("\n") + "\n", where
    return text.strip("\n") + "\n"


def _read_steps(source: SourceTask, top: Table, steps: list, strategy: str | None) -> None:
    """Harbor's multi-step task: each step's instruction becomes a scene; the last step's tests verify."""
    names = []
    for index, step in enumerate(steps):
        table = Table(step, ("steps", index), top.locator, source)
        name = table.text("name") or f"step-{index + 1}"
        names.append(name)
        step_dir = task_folder(source.root, f"steps/{name}")
        source.turns.append(Turn(name, "agent", _read_instruction(source, step_dir / "instruction.md")))
        if table.table("agent").has("timeout_sec"):
            source.lost(table.where("agent"), "a per-step agent timeout: the arena's agent_timeout_s covers all "
                        "scenes together")
        table.lose("verifier", "(per-step verification settings) are not supported: the arena verifies the final "
                   "state once")
        table.lose("min_reward", "cannot stop an arena episode early")
        table.lose("healthcheck", "has no arena equivalent")
        table.lose("artifacts", "are not collected by the arena")
        table.report_unread()
        if (step_dir / "workdir").is_dir():
            source.lost(f"steps/{name}/workdir", "files staged before a step (and its setup.sh) cannot be staged "
                        "mid-episode in the arena; put them in environment/")
        if (step_dir / "solution").is_dir():
            source.oracle_steps.append((name, task_folder(source.root, f"steps/{name}/solution")))
    if not source.oracle_steps and (source.root / "solution").is_dir():
        source.oracle_dir = task_folder(source.root, "solution")
    last_tests = task_folder(source.root, f"steps/{names[-1]}/tests")
    if last_tests.is_dir():
        source.verifier_dirs.append(last_tests)
    source.prompt_where = f"steps/{names[0]}/instruction.md"
    if strategy != "final":
        where = top.where("multi_step_reward_strategy")
        source.lost(where, f"multi_step_reward_strategy {strategy or 'mean (the default)'}: the arena scores only the "
                    f"final state, with the last step's tests (step '{names[-1]}')")


def _require_tests(source: SourceTask) -> None:
    found = [d for d in source.verifier_dirs if (d / source.test_script).is_file()]
    if not found:
        raise InteropError("tests/test.sh", "is missing", "Harbor runs tests/test.sh after the agent; add it.")
    if not (source.environment_dir and (source.environment_dir / "Dockerfile").is_file()) and not source.docker_image:
        raise InteropError("environment/Dockerfile", "is missing and task.toml names no docker_image",
                           "Add environment/Dockerfile (the arena builds the agent's image from it).")
    compose_files = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml")
    for compose in (c for c in compose_files if source.environment_dir and (source.environment_dir / c).is_file()):
        source.lost(f"environment/{compose}", "extra services are not supported: the arena runs one container "
                    "built from environment/Dockerfile (the file is copied but unused)")
