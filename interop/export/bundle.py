"""The native package carried inside an exported Harbor task, so that importing the export gives it back exactly.

tests/arena/ mirrors the package's own paths for task.md, verifier.py, the verifier data and the generator; Harbor
copies tests/ into the container only after the agent, so none of it is visible to the agent. task.toml's
[metadata.arena] table says where everything else went (the oracle, instance 0's files, the Dockerfile lines added).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tomllib
from pathlib import Path

from interop.files import copy_tree, copy_tree_strict, inside, read_text
from interop.source_task import HARBOR, ImportReport, ImportResult, InteropError
from interop.write.package import staging
from taskpkg.package import TaskPackage

FORMAT = "posttrain-arena/task-v1"
BUNDLE = "tests/arena"
INSTANCE_DIR = "arena-instance-0"
BLOCK_START = "# >>> arena export: instance 0"
BLOCK_END = "# <<< arena export"
# Harbor setting -> native limit, compared on import so that edits made on the Harbor side are kept.
HARBOR_LIMITS = ((("agent", "timeout_sec"), "agent_timeout_s"), (("verifier", "timeout_sec"), "verifier_timeout_s"),
                 (("environment", "build_timeout_sec"), "build_timeout_s"), (("environment", "cpus"), "cpus"),
                 (("environment", "memory_mb"), "memory_mb"), (("environment", "storage_mb"), "storage_mb"))


def dockerfile_block() -> str:
    """Lines appended to the Dockerfile: instance 0's files, owned by the agent's UID, in /workspace."""
    return (f"{BLOCK_START} (the files the package's generator wrote), as the arena sets it up\n"
            f"COPY --chown=1000:1000 {INSTANCE_DIR}/ /workspace/\n{BLOCK_END}\n")


def write_bundle(package: TaskPackage, target: Path) -> None:
    """Copy task.md, verifier.py, the verifier data and the generator into target, at their package paths."""
    paths = ["task.md", "verifier.py", *(d.rstrip("/") for d in package.verifier_data), package.generator]
    for relative in dict.fromkeys(paths):
        source = package.root / relative
        if not inside(source, package.root):
            raise InteropError(relative, "is a symbolic link that leaves the package", "Replace it with the file.")
        destination = target / relative
        if source.is_dir():
            copy_tree_strict(source, destination, package.root, "Replace the link with the file itself.")
        elif not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)


def metadata(package: TaskPackage, meta: dict) -> dict:
    """[metadata.arena]: what `arena import` needs to restore the package."""
    return {"format": FORMAT, "schema_version": 1, "name": package.name, "domain": package.domain, "bundle": BUNDLE,
            **meta}


def _config(root: Path) -> dict:
    try:
        return tomllib.loads(read_text(root / "task.toml", root))
    except tomllib.TOMLDecodeError:
        return {}


def is_arena_export(root: Path) -> bool:
    """Whether a Harbor task was written by `arena export` (and still carries the package)."""
    metadata = _config(root).get("metadata")
    arena = metadata.get("arena") if isinstance(metadata, dict) else None
    return isinstance(arena, dict) and arena.get("format") == FORMAT and (root / BUNDLE / "task.md").is_file()


def restore(root: Path, out_dir: Path, name: str | None) -> ImportResult:
    """Write the package an export carries, with Harbor-side edits of limits applied and reported."""
    config = _config(root)
    arena = config["metadata"]["arena"]
    for key in ("oracle", "instance_files"):
        if arena.get(key) and not inside(root / str(arena[key]), root):
            raise InteropError("task.toml", f"[metadata.arena].{key} points outside the task",
                               "Re-export the package with `arena export`.")
    text = read_text(root / BUNDLE / "task.md", root)
    original = str(arena.get("name"))
    name = name or original
    report = ImportReport(mapped=[f"task.toml: written by `arena export`; package {original} restored from {BUNDLE}/"])
    if name != original:
        text = re.sub(r"(?m)^name: .*$", f"name: {name}", text, count=1)
        report.mapped.append(f"--name {name}: the package's name changed from {original}")
    text = _apply_limits(text, config, report.mapped)
    _check_instructions(root, config, arena, report.todo)
    with staging(out_dir, name) as folder:
        copy_tree(root / BUNDLE, folder, root, report.lost)
        (folder / "task.md").write_text(text, encoding="utf-8")
        _restore_environment(root, folder, arena, report.lost)
        oracle = root / str(arena.get("oracle", "solution"))
        copy_tree(oracle, folder / "oracle", root, report.lost)
        if arena.get("oracle_wrapper"):
            (folder / "oracle" / "solve.sh").unlink()
    return ImportResult(out_dir / name, HARBOR, report)


def _apply_limits(text: str, config: dict, mapped: list[str]) -> str:
    for (table, key), native in HARBOR_LIMITS:
        value = config.get(table, {}).get(key)
        if value is None:
            continue
        wanted = int(value) if native != "cpus" or float(value).is_integer() else float(value)
        pattern = re.compile(rf"(?m)^(\s+{native}:\s*)([^\s#]+)")
        match = pattern.search(text)
        if match and match.group(2) != str(wanted):
            text = pattern.sub(lambda m, w=wanted: f"{m.group(1)}{w}", text, count=1)
            mapped.append(f"task.toml: [{table}].{key} is {value}; limits.{native} set to {wanted} "
                         f"(was {match.group(2)})")
    return text


def _check_instructions(root: Path, config: dict, arena: dict, todo: list[str]) -> None:
    steps = [s.get("name") for s in config.get("steps") or []]
    files = [root / "steps" / s / "instruction.md" for s in steps] if steps else [root / "instruction.md"]
    texts = []
    for path in files:
        body = read_text(path, root) if path.is_file() else ""
        texts.append(body.split("\n\n", 1)[1] if body.startswith("<!-- arena canary") else body)
    if hashlib.sha256("\n".join(texts).encode()).hexdigest() != arena.get("instruction_sha256"):
        todo.append(f"{files[0].relative_to(root).as_posix()}: the instructions changed after export; the "
                        f"package's own prompt ({BUNDLE}/task.md) was kept: make the change there")


def _restore_environment(root: Path, folder: Path, arena: dict, lost: list[str]) -> None:
    exclude = frozenset({str(arena["instance_files"])} if arena.get("instance_files") else set())
    copy_tree(root / "environment", folder / "environment", root, lost, exclude)
    dockerfile = folder / "environment" / "Dockerfile"
    if arena.get("dockerfile_block") and dockerfile.is_file():
        text = dockerfile.read_text(encoding="utf-8")
        start = text.find(BLOCK_START)
        if start == -1:
            raise InteropError("environment/Dockerfile", "lost the lines `arena export` added",
                               f"Restore the block from '{BLOCK_START}' to the end, or re-export the package.")
        text = text[:start]
        if arena.get("dockerfile_newline_added"):
            text = text[:-1]
        dockerfile.write_text(text, encoding="utf-8")
