"""Read a task in Terminal-Bench's older format: task.yaml, a Dockerfile (with docker-compose.yaml) at the top,
run-tests.sh and tests/ (put at $TEST_DIR, /tests, after the agent), and solution.sh.

The format has no reward file: the task is solved when run-tests.sh (usually pytest) exits with status 0, so the
generated verifier scores that exit status as 1 and anything else as 0, as Harbor's own migration of the format does.
The image is built from the task's top folder without the format's own files (task.yaml, the tests, the solution).
"""

from __future__ import annotations

from pathlib import Path

from interop.dockerfile_facts import instructions
from interop.files import find_canary, read_text, relative_to, strip_canary, task_folder
from interop.read.tables import Table, yaml_table
from interop.source_task import TERMINAL_BENCH, InteropError, SourceAuthor, Sourced, SourceTask

CONFIG = "task.yaml"
TEST_SCRIPT = "run-tests.sh"
COMPOSE = "docker-compose.yaml"
OWN_FILES = (CONFIG, COMPOSE, "docker-compose.yml", TEST_SCRIPT, "solution.sh", "solution.yaml", "tests")
FORMAT = "Terminal-Bench's older format (task.yaml)"
MIGRATE = ("or convert the task with Harbor's `harbor tasks migrate -i TASK -o OUT` and import the result")
DROPPED = ("disable_asciinema", "estimated_duration_sec", "expert_time_estimate_min", "junior_time_estimate_min")


def read_terminal_bench(root: Path) -> SourceTask:
    """Read the older-format Terminal-Bench task at root."""
    data, locator = yaml_table(CONFIG, read_text(root / CONFIG, root), 1)
    source = SourceTask(fmt=TERMINAL_BENCH, root=root, config_file=CONFIG)
    top = Table(data, (), locator, source)
    _prompt(source, top)
    _metadata(source, top)
    context = _compose(source, root)
    _layout(source, top, root, context)
    top.report_unread()
    source.canary = find_canary(root, [root / CONFIG, root / "Dockerfile", root / "tests", root / TEST_SCRIPT,
                                       root / "solution.sh"])
    return source


def _prompt(source: SourceTask, top: Table) -> None:
    text = top.text("instruction")
    where = top.where("instruction")
    if text is None:
        descriptions = top.get("descriptions") or []
        base = next((d for d in descriptions if isinstance(d, dict) and d.get("key") == "base"), None)
        text = str(base.get("description", "")) if base else None
        where = top.where("descriptions")
        others = [str(d.get("key")) for d in descriptions if isinstance(d, dict) and d is not base]
        if others:
            source.lost(where, f"descriptions {', '.join(others)} (variants of the prompt) are not used: the "
                        "arena gives the base description")
    if not text or not text.strip():
        raise InteropError(CONFIG, "has no `instruction` (nor a base description)",
                           "Write the task for the agent under `instruction:`.", top.locator.line(("instruction",)))
    prompt, stripped = strip_canary(text.strip("\n"))
    source.prompt, source.prompt_where = prompt.strip("\n") + "\n", where
    if stripped:
        source.mapped(where, "leading canary lines removed from the prompt; the GUID is kept as `canary:`")


def _metadata(source: SourceTask, top: Table) -> None:
    name = top.text("author_name")
    if name and name != "unknown":
        source.authors.append(SourceAuthor(name, None, top.where("author_name")))
    top.read.add("author_email")
    if top.has("difficulty"):
        source.difficulty = Sourced(top.text("difficulty"), top.where("difficulty"))
    for key in ("domain", "category", "subcategory", "field", "subfield"):
        if isinstance(top.get(key), str) and top.text(key).strip():
            source.domain_hints.append((key, Sourced(top.text(key).strip(), top.where(key))))
    source.tags += [Sourced(t, top.where("tags")) for t in top.items("tags") if isinstance(t, str)]
    for key, native in (("max_agent_timeout_sec", "agent_timeout_s"), ("max_test_timeout_sec", "verifier_timeout_s")):
        value = top.number(key)
        if value is not None:
            source.limits[native] = Sourced(value, top.where(key))
    parser = top.text("parser_name")
    if parser not in (None, "pytest"):
        source.lost(top.where("parser_name"), f"parser_name {parser!r}: the arena scores {TEST_SCRIPT}'s exit "
                    "status (0 solves the task), not a parse of its output; make the script exit non-zero on failure")
    elif parser:
        source.mapped(top.where("parser_name"), f"parser_name pytest: a task is solved when every test passes, "
                      f"which is {TEST_SCRIPT}'s exit status 0 when pytest is its last command")
    if top.get("run_tests_in_same_shell"):
        source.lost(top.where("run_tests_in_same_shell"), "the arena runs the tests in a fresh container made from "
                    "the agent's final files, never in the agent's shell")
    for key in DROPPED:
        top.lose(key, "has no place in the native frontmatter; dropped")


def _compose(source: SourceTask, root: Path) -> str:
    """The main service's build context (the top folder unless docker-compose.yaml names another)."""
    path = next((root / n for n in (COMPOSE, "docker-compose.yml") if (root / n).is_file()), None)
    if path is None:
        return "."
    where = relative_to(path, root)
    try:
        data, locator = yaml_table(where, read_text(path, root), 1)
    except InteropError as exc:
        source.lost(where, f"not read ({exc.problem}); the image is built from the top folder's Dockerfile")
        return "."
    services = data.get("services") if isinstance(data.get("services"), dict) else {}
    main = "client" if "client" in services else next(iter(services), None)
    others = [name for name in services if name != main]
    if others:
        source.lost(where, f"services {', '.join(others)} are not supported: the arena runs one container")
    service = services.get(main) if isinstance(services.get(main), dict) else {}
    build = service.get("build", ".")
    context = str(build.get("context", ".") if isinstance(build, dict) else build)
    source.mapped(where, f"service {main}: the image is built from {context if context != '.' else 'the top folder'}"
                  " (environment/); its container settings (command, volumes, image name) are the arena's own")
    if isinstance(service.get("working_dir"), str) and "${" not in service["working_dir"]:
        source.workdir = service["working_dir"]
        source.mapped(locator.where(("services", str(main), "working_dir")), f"working_dir {source.workdir}")
    environment = service.get("environment") or []
    variables = [str(v) for v in (environment if isinstance(environment, list) else
                                  [f"{k}={v}" for k, v in environment.items()]) if "TEST_DIR" not in str(v)]
    if variables:
        source.todo("environment/Dockerfile", f"{where}: the service's environment ({', '.join(variables)}) is not "
                    "set by the arena: add it as ENV lines")
    return context.rstrip("/") or "."


def _layout(source: SourceTask, top: Table, root: Path, context: str) -> None:
    source.environment_dir = task_folder(root, context)
    if context == ".":
        source.environment_exclude = frozenset(OWN_FILES)
    dockerfile = source.environment_dir / "Dockerfile"
    if not dockerfile.is_file():
        raise InteropError(relative_to(dockerfile, root), f"is missing, so this task in {FORMAT} has no image",
                           f"Add the Dockerfile its docker-compose.yaml builds, {MIGRATE}.")
    for item in instructions(read_text(dockerfile, root)):
        if item.keyword in ("COPY", "ADD") and any(word.strip("./") in ("tests", "solution.sh", TEST_SCRIPT)
                                                   for word in item.arguments.split()):
            source.todo(f"environment/Dockerfile:{item.line}", f"`{item.keyword} {item.arguments}` puts the tests "
                        "or the solution in the agent's image, where the agent can read them: remove it (the arena "
                        "puts the tests in place only at verification)")
    script = root / TEST_SCRIPT
    if not script.is_file():
        raise InteropError(TEST_SCRIPT, f"is missing: a task in {FORMAT} is verified by it",
                           f"Add {TEST_SCRIPT} (it runs the tests in $TEST_DIR, /tests), {MIGRATE}.")
    source.verifier_files = [script]
    source.verifier_dirs = [task_folder(root, "tests")]
    source.test_script, source.verifier_mount = TEST_SCRIPT, "/tests"
    source.verifier_env = {"TEST_DIR": "/tests"}
    source.reward_from = "exit-status"
    if (root / "solution.sh").is_file():
        source.oracle_file = root / "solution.sh"
    elif (root / "solution.yaml").is_file():
        source.oracle_missing = ("solution.yaml (keystrokes typed into the agent's terminal) is not converted; "
                                 "write its commands as a script")
        source.lost("solution.yaml", "the keystroke solution is not converted into a script")
