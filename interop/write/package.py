"""Write the native package: built in a hidden folder beside the target and renamed into place, so nothing is left
behind on an error. environment/ (with a separate verifier image's setup built in), oracle/, verifier_data/ with the
verifier.py that runs the original tests, the one-instance generator, and task.md."""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from interop.dockerfile_facts import ARENA_WORKSPACE, facts
from interop.files import copy_file, copy_tree, relative_to
from interop.map import Plan
from interop.map.findings import scan_oracle, scan_verifier
from interop.map.metadata import PLACEHOLDER
from interop.source_task import FORMAT_NAMES, InteropError, SourceTask, VerifierImage
from interop.write.fallbacks import ToolsToBake, resolve_fallbacks
from interop.write.frontmatter import render
from interop.write.generated import bash_wrapper, dockerfile_from_image, generator_text, missing_oracle, steps_oracle
from interop.write.pins import settle_image
from interop.write.tidy import tidy_python
from interop.write.verifier_shim import DATA_DIR, ShimSpec, shim_text

TASK_FILE = "task.md"
WRAPPER = "run_oracle.sh"
BLOCK_START = "# >>> arena import: the separate verifier image's setup"
BLOCK_END = "# <<< arena import"


@contextmanager
def staging(out_dir: Path, name: str) -> Iterator[Path]:
    """A fresh folder that becomes out_dir/name when the block succeeds; nothing is left behind when it fails."""
    target = out_dir / name
    if target.exists():
        raise InteropError(str(target), "already exists", "Choose another --name or --out, or remove it first.")
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out_dir))
    try:
        yield folder
        folder.chmod(0o755)
        folder.rename(target)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def write_text(path: Path, text: str, executable: bool = False) -> None:
    """Write a UTF-8 file (creating folders)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def write_package(source: SourceTask, plan: Plan, out_dir: Path) -> Path:
    """Write out_dir/NAME for the plan; the report in source says what was mapped, lost and still to do."""
    with staging(out_dir, plan.name) as folder:
        workdir = _environment(source, folder)
        plan.frontmatter["oracle"] = {"entrypoint": _oracle(source, folder)}
        plan.frontmatter["verifier"] = {"data": [DATA_DIR]}
        bake = _verifier_data(source, folder)
        settle_image(source, folder, bake)
        _verifier(source, folder, workdir, int(plan.frontmatter["limits"]["verifier_timeout_s"]), bake.switches)
        write_text(folder / plan.frontmatter["instances"]["generator"], generator_text(plan.body.values))
        _task_file(source, folder, plan)
        tidy_python(source, folder)
        source.report.todo.extend(scan_oracle(folder / "oracle", folder) + scan_verifier(folder / DATA_DIR, folder))
    return out_dir / plan.name


def _task_file(source: SourceTask, folder: Path, plan: Plan) -> None:
    """task.md; every placeholder it holds becomes a to-do at its line (where the static check reports it)."""
    text = f"---\n{render(plan.frontmatter, plan.comments)}---\n{plan.body.text}"
    write_text(folder / TASK_FILE, text)
    for number, line in enumerate(text.split("\n"), start=1):
        if f"# {PLACEHOLDER}" in line:
            source.todo(f"{TASK_FILE}:{number}", line.split(f"# {PLACEHOLDER}", 1)[1].lstrip(": "))


def _environment(source: SourceTask, folder: Path) -> str:
    """Copy environment/ (and a separate verifier image's setup); return the directory the tests run in."""
    target = folder / "environment"
    if source.environment_dir and source.environment_dir.is_dir():
        copy_tree(source.environment_dir, target, source.root, source.report.lost, source.environment_exclude)
    dockerfile, image = target / "Dockerfile", source.docker_image
    if not dockerfile.is_file() and image is not None:
        write_text(dockerfile, dockerfile_from_image(str(image.value)))
        source.mapped(image.where, f"environment/Dockerfile written as FROM {image.value}")
    elif image is not None:
        source.lost(image.where, "docker_image is not used: the arena builds environment/Dockerfile")
    if not dockerfile.is_file():
        raise InteropError("environment/Dockerfile", "is missing from the copy (a link out of the task?)",
                           "Put the Dockerfile itself in the task's environment/ folder.")
    found = facts(dockerfile.read_text(encoding="utf-8", errors="replace"))
    if source.verifier_image is not None and source.verifier_image.lines:
        _append_block(dockerfile, source.verifier_image, found.workdir, found.user)
    workdir = source.workdir or found.workdir or "/"
    if workdir != ARENA_WORKSPACE:
        where = f"environment/Dockerfile:{found.workdir_line}" if found.workdir and not source.workdir else \
            "environment/Dockerfile"
        source.todo(where, f"the task works in {workdir}, but the arena starts the agent (UID 1000) in "
                    f"{ARENA_WORKSPACE}: make {workdir} writable by UID 1000 (e.g. `RUN chown -R 1000:1000 "
                    f"{workdir}`) and make sure the prompt names the full paths")
    if not found.mentions_python:
        source.todo("environment/Dockerfile", "the image may lack python3, which the arena needs for the instance "
                    "generator and verifier.py: install it (e.g. `RUN apt-get install -y python3`)")
    return (source.verifier_image.workdir if source.verifier_image and source.verifier_image.workdir else workdir)


def _append_block(dockerfile: Path, image: VerifierImage, workdir: str | None, user: str | None) -> None:
    """The verifier image's setup lines, marked, restoring the agent image's WORKDIR and USER after them."""
    lines = list(image.lines)
    while lines and lines[-1].startswith(("WORKDIR ", "USER ")):
        lines.pop()  # they only matter to the lines after them
    if any(line.startswith("WORKDIR ") for line in lines):
        lines.append(f"WORKDIR {workdir or '/'}")
    if any(line.startswith("USER ") for line in lines):
        lines.append(f"USER {user or 'root'}")
    text = dockerfile.read_text(encoding="utf-8")
    block = (f"{BLOCK_START} ({image.dockerfile}).\n# The arena verifies in a container made from this "
             "image, without a network: the tools the tests need are installed here.\n"
             + "\n".join(lines) + f"\n{BLOCK_END}\n")
    dockerfile.write_text(text + ("" if text.endswith("\n") else "\n") + block, encoding="utf-8")


def _oracle(source: SourceTask, folder: Path) -> str:
    """Copy the reference solution into oracle/ and return the entrypoint."""
    target = folder / "oracle"
    if source.oracle_steps:
        steps = []
        for step, step_dir in source.oracle_steps:
            copy_tree(step_dir, target / "steps" / step, source.root, source.report.lost)
            if (step_dir / "solve.sh").is_file():
                steps.append((step, "solve.sh"))
        write_text(target / "solve.sh", steps_oracle(steps), executable=True)
        source.mapped("oracle/solve.sh", f"runs the {len(steps)} steps' solutions in order")
        entry = "solve.sh"
    elif source.oracle_dir is not None:
        copy_tree(source.oracle_dir, target, source.root, source.report.lost)
        entry = _entrypoint(source, target)
    elif source.oracle_file is not None:
        copy_file(source.oracle_file, target / "solve.sh", source.root, source.report.lost)
        source.mapped(relative_to(source.oracle_file, source.root), "the reference solution, as oracle/solve.sh")
        entry = _entrypoint(source, target)
    else:
        entry = _missing_oracle(source, target, source.oracle_missing or "the source has no reference solution")
    return entry


def _missing_oracle(source: SourceTask, target: Path, why: str) -> str:
    write_text(target / "solve.sh", missing_oracle(FORMAT_NAMES[source.fmt], why), executable=True)
    source.todo("oracle/solve.sh:2", f"{why}: write oracle/solve.sh, which solves the task from its files")
    return "solve.sh"


def _entrypoint(source: SourceTask, oracle: Path) -> str:
    solve = oracle / "solve.sh"
    if not solve.is_file():
        return _missing_oracle(source, oracle, "the source's oracle folder has no solve.sh")
    first = solve.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    words = first[2:].split() if first.startswith("#!") else []
    program = (words[1] if len(words) > 1 and words[0].endswith("/env") else words[0]).rsplit("/", 1)[-1] \
        if words else "sh"
    if program in ("sh", "dash", "ash", "busybox"):
        return "solve.sh"
    write_text(oracle / WRAPPER, bash_wrapper("solve.sh", program), executable=True)
    source.mapped(f"oracle/{WRAPPER}", f"the arena runs the oracle with sh, but solve.sh starts with "
                  f"{first.strip()!r}; the entrypoint {WRAPPER} runs it with {program}")
    return WRAPPER


def _verifier_data(source: SourceTask, folder: Path) -> ToolsToBake:
    """Copy the original tests into verifier_data/ and resolve their guarded install fallbacks; return the tools the
    image must install for them. (What is left is scanned once the package's Python has its final lines.)"""
    data = folder / DATA_DIR
    for directory in source.verifier_dirs:
        if directory.is_dir():
            copy_tree(directory, data, source.root, source.report.lost, source.verifier_exclude)
    for file in source.verifier_files:
        copy_file(file, data / file.name, source.root, source.report.lost)
    return resolve_fallbacks(source, folder, data)


def _verifier(source: SourceTask, folder: Path, workdir: str, timeout: int, switches: dict[str, str]) -> None:
    """Write the verifier.py that runs the original tests (with the switches that skip their install fallbacks)."""
    margin = max(5, math.ceil(timeout * 0.05))
    image = source.verifier_image
    spec = ShimSpec(source.fmt, source.verifier_mount, source.verifier_links, source.test_script, workdir,
                    max(1, timeout - margin) if timeout > margin else max(1, timeout - 1),
                    {**source.verifier_env, **(image.env if image else {}), **switches},
                    tuple((p.source, p.target) for p in image.placements) if image else (), source.reward_from)
    write_text(folder / "verifier.py", shim_text(spec))
    reward = "its exit status (0 scores 1, anything else 0)" if source.reward_from == "exit-status" else \
        "the reward it writes"
    source.mapped("verifier.py", f"runs the original {source.test_script} (now in {DATA_DIR}/) at "
                  f"{source.verifier_mount} and turns {reward} into the arena's reward JSON")
