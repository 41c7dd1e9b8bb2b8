"""`arena import`: read a BenchFlow or Harbor task and write a native package, reporting what did not map."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from interop import bundle
from interop.benchflow import read_benchflow
from interop.detect import HARBOR, NATIVE, detect_format, task_root
from interop.dockerfile import ARENA_WORKSPACE, facts
from interop.errors import InteropError
from interop.generated import bash_wrapper, dockerfile_from_image, generator_text, missing_oracle, steps_oracle
from interop.harbor import read_harbor
from interop.limits import FORMAT_NAMES, map_limits
from interop.mapping import choose_difficulty, choose_domain, choose_name, choose_tags, choose_title, choose_version
from interop.model import SourceTask
from interop.native_writer import staging, write_task, write_text
from interop.people import choose_authors, choose_license
from interop.scan import scan_oracle, scan_verifier
from interop.scenes import build_body
from interop.sources import copy_tree
from interop.verifier_shim import DATA_DIR, ShimSpec, shim_text

GENERATOR = "instance/generate.py"
WRAPPER = "run_oracle.sh"
FEW_INSTANCES = ("instances.count is 1: the source format has no instance generator, so `arena check` warns ARENA119 "
                 "(few instances); write a generator for many instances before training on the task")


@dataclass
class ImportResult:
    """Where the package was written, what the source had that it does not carry (or defaulted), and notes."""

    package_path: Path
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source_format: str = ""


def import_task(src: Path, out_dir: Path, name: str | None = None, domain: str | None = None, *,
                github: str | None = None, license: str | None = None) -> ImportResult:
    """Detect SRC's format, write out_dir/NAME as a native package and report; raises InteropError."""
    root = task_root(Path(src))
    fmt = detect_format(root)
    if fmt == NATIVE:
        raise InteropError(str(root / "task.md"), "is already an arena package",
                           "Check it with `arena check`; it needs no import.")
    if fmt == HARBOR and bundle.is_arena_export(root):
        return bundle.restore(root, Path(out_dir), name)
    source = read_harbor(root) if fmt == HARBOR else read_benchflow(root)
    if fmt != HARBOR and (root / "task.toml").is_file():
        source.lost("task.toml", "ignored: task.md is BenchFlow's native file and was read instead")
    package = _write(source, Path(out_dir), name, domain, github, license)
    return ImportResult(package, source.unmapped, source.notes, fmt)


def _write(source: SourceTask, out_dir: Path, name: str | None, domain: str | None, github: str | None,
           license: str | None) -> Path:
    comments: dict = {}
    package_name = choose_name(source, name)
    chosen_domain = choose_domain(source, domain)
    body = build_body(source)
    if not body.text.strip():
        raise InteropError(source.prompt_where or source.config_file, "the prompt is empty",
                           "Write the task for the agent.")
    limits, limit_notes = map_limits(source)
    comments.update({("limits", key): text for key, text in limit_notes.items()})
    frontmatter = {
        "schema_version": 1, "name": package_name, "title": choose_title(source, package_name),
        "version": choose_version(source), "authors": choose_authors(source, github, comments),
        "license": choose_license(source, license, comments), "domain": chosen_domain, "tags": choose_tags(source),
    }
    difficulty, difficulty_note = choose_difficulty(source)
    if difficulty_note:
        comments[("difficulty",)] = difficulty_note
    frontmatter |= {"difficulty": difficulty, "canary": _canary(source), "limits": limits,
                    "network": {"agent": "none", "verifier": "none"},
                    "instances": {"count": 1, "generator": GENERATOR}}
    comments[("instances", "count")] = "one fixed instance: the source has no generator"
    _network_notes(source)
    with staging(out_dir, package_name) as folder:
        workdir = _environment(source, folder)
        frontmatter["oracle"] = {"entrypoint": _oracle(source, folder)}
        frontmatter["verifier"] = {"data": [DATA_DIR]}
        if body.roles:
            frontmatter |= {"roles": body.roles, "scenes": body.scenes}
        _verifier(source, folder, workdir, int(limits["verifier_timeout_s"]))
        write_text(folder / GENERATOR, generator_text(body.values))
        write_task(folder, frontmatter, comments, body.text)
    source.notes.append(FEW_INSTANCES)
    return out_dir / package_name


def _canary(source: SourceTask) -> str:
    if source.canary:
        source.notes.append(f"{source.canary.where}: canary GUID {source.canary.value} reused")
        return str(source.canary.value)
    made = str(uuid.uuid4())
    source.notes.append(f"no canary GUID in the source: made {made}")
    return made


def _network_notes(source: SourceTask) -> None:
    for policy in source.network:
        source.lost(policy.where, f"{policy.value}: the arena runs the agent and the verifier with no network "
                    "(network: {agent: none, verifier: none}); the task must work offline, with everything it needs "
                    "installed in environment/Dockerfile")


def _environment(source: SourceTask, folder: Path) -> str:
    """Copy environment/; return the directory the source runs its tests in."""
    target = folder / "environment"
    if source.environment_dir and source.environment_dir.is_dir():
        copy_tree(source.environment_dir, target, source.root, source.unmapped)
    dockerfile, image = target / "Dockerfile", source.docker_image
    if not dockerfile.is_file() and image is not None:
        write_text(dockerfile, dockerfile_from_image(str(image.value)))
        source.notes.append(f"{image.where}: environment/Dockerfile written as FROM {image.value}")
    elif image is not None:
        source.lost(image.where, "docker_image is not used: the arena builds environment/Dockerfile")
    found = facts(dockerfile.read_text(encoding="utf-8", errors="replace"))
    workdir = source.workdir or found.workdir or "/"
    if workdir != ARENA_WORKSPACE:
        where = f"environment/Dockerfile:{found.workdir_line}" if found.workdir and not source.workdir else \
            source.config_file
        source.lost(where, f"the task works in {workdir}, but the arena starts the agent (UID 1000) in "
                    f"{ARENA_WORKSPACE}: make {workdir} writable by UID 1000 (e.g. `RUN chown -R 1000:1000 "
                    f"{workdir}`) and make sure the prompt names the full paths")
    if not found.mentions_python:
        source.lost("environment/Dockerfile", "the image may lack python3, which the arena needs for the instance "
                    "generator and verifier.py: install it (e.g. `RUN apt-get install -y python3`)")
    return workdir


def _oracle(source: SourceTask, folder: Path) -> str:
    """Copy the reference solution into oracle/ and return the entrypoint."""
    target = folder / "oracle"
    if source.oracle_steps:
        steps = []
        for step, step_dir in source.oracle_steps:
            copy_tree(step_dir, target / "steps" / step, source.root, source.unmapped)
            if (step_dir / "solve.sh").is_file():
                steps.append((step, "solve.sh"))
        write_text(target / "solve.sh", steps_oracle(steps), executable=True)
        source.notes.append(f"oracle/solve.sh runs the {len(steps)} steps' solutions in order")
        entry = "solve.sh"
    elif source.oracle_dir is not None:
        copy_tree(source.oracle_dir, target, source.root, source.unmapped)
        entry = _entrypoint(source, target)
    else:
        write_text(target / "solve.sh", missing_oracle(FORMAT_NAMES[source.fmt]), executable=True)
        source.lost(source.config_file, "no reference solution (solution/solve.sh) in the source: write "
                    "oracle/solve.sh (arena check points at its TODO)")
        entry = "solve.sh"
    source.unmapped += scan_oracle(target, folder)
    return entry


def _entrypoint(source: SourceTask, oracle: Path) -> str:
    solve = oracle / "solve.sh"
    if not solve.is_file():
        write_text(solve, missing_oracle(FORMAT_NAMES[source.fmt]), executable=True)
        source.lost("oracle/solve.sh", "the source's oracle folder has no solve.sh: write one")
        return "solve.sh"
    first = solve.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    words = first[2:].split() if first.startswith("#!") else []
    program = (words[1] if len(words) > 1 and words[0].endswith("/env") else words[0]).rsplit("/", 1)[-1] \
        if words else "sh"
    if program in ("sh", "dash", "ash", "busybox"):
        return "solve.sh"
    write_text(oracle / WRAPPER, bash_wrapper("solve.sh", program), executable=True)
    source.notes.append(f"oracle/{WRAPPER}: the arena runs the oracle with sh, but solve.sh starts with "
                        f"{first.strip()!r}; the entrypoint {WRAPPER} runs it with {program}")
    return WRAPPER


def _verifier(source: SourceTask, folder: Path, workdir: str, timeout: int) -> None:
    """Move the original tests into verifier_data/ and write the verifier.py that runs them."""
    data = folder / DATA_DIR
    for directory in source.verifier_dirs:
        if directory.is_dir():
            copy_tree(directory, data, source.root, source.unmapped)
    notes, fetches = scan_verifier(data, folder)
    source.unmapped += notes
    margin = max(5, math.ceil(timeout * 0.05))
    spec = ShimSpec(source.fmt, source.verifier_mount, source.verifier_links, source.test_script, workdir,
                    max(1, timeout - margin) if timeout > margin else max(1, timeout - 1), source.verifier_env,
                    tuple(f"{hit.where}: {hit.text}" for hit in fetches))
    write_text(folder / "verifier.py", shim_text(spec))
    source.notes.append(f"verifier.py runs the original {source.test_script} (now in {DATA_DIR}/) at "
                        f"{source.verifier_mount} and converts its reward to the arena's reward JSON")
