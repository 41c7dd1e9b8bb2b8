"""`arena export --format harbor`: write a native package as a Harbor task that Harbor's own loader accepts.

The Harbor task is instance 0 of the package: the generator runs once here (interop/instance_zero.py), its files are
copied into the image under /workspace and its values fill instruction.md. tests/ carries the arena verifier with its
data (tests/arena/, which also keeps the native task.md so that `arena import` restores the package exactly), and
tests/test.sh runs it as the arena would and turns its reward JSON into /logs/verifier/reward.json. A package with
scenes becomes a multi-step task: one step per scene, the oracle in the last step, the final step's reward counts.
"""

from __future__ import annotations

import hashlib
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

import tomli_w

from interop.export import bundle
from interop.export.instance_zero import make_instance_zero
from interop.export.scripts import NOOP_SOLUTION, solve_wrapper, test_script
from interop.files import copy_tree_strict
from interop.source_task import InteropError, PackageHasErrors
from interop.write.generated import runs_solve_sh
from interop.write.package import staging, write_text
from taskpkg.body import MissingValue
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage

# Task schema 1.1 is the oldest that carries everything written here ([task], `workdir`, the agent's `user`): Harbor
# 0.4.0 and later read it, and releases before 0.13.0 read the network only from `allow_internet`, which is written
# beside `network_mode` (later releases take `network_mode` and ignore the older key, with a deprecation warning).
HARBOR_SCHEMA = "1.1"
HARBOR_SINCE = "0.4.0"
HARBOR_STEPS_SINCE = "0.5.0"  # [[steps]] and multi_step_reward_strategy
HARBOR_FRACTIONAL_CPUS_SINCE = "0.25.0"  # `cpus` as a float; earlier releases take whole CPUs only
AGENT_UID = 1000


InstanceMaker = Callable[[TaskPackage, Path], tuple[dict, Path]]


def export_harbor(package_dir: Path, out_dir: Path, make_instance: InstanceMaker | None = None) -> Path:
    """Write out_dir/NAME as a Harbor task; raises InteropError (the package must load without errors).

    make_instance makes instance 0 (prompt values, workspace folder) under a scratch folder; the default runs the
    generator on this machine, the CLI passes one that runs it in the sandbox when an engine answers.
    """
    package = _load(Path(package_dir))
    with tempfile.TemporaryDirectory(prefix="arena-export-") as scratch:
        values, workspace = (make_instance or make_instance_zero)(package, Path(scratch))
        try:
            prompts = package.scene_prompts(values)
        except MissingValue as exc:
            raise InteropError(package.generator, f"printed no value {exc.args[0]!r} for instance 0, which the "
                               f"prompt uses as {{{{ instance.{exc.args[0]} }}}}", "Print it from the generator.") \
                from None
        with staging(Path(out_dir), package.name) as folder:
            meta = _environment(package, workspace, folder)
            texts = _instructions(package, prompts, folder, meta)
            bundle.write_bundle(package, folder / bundle.BUNDLE)
            write_text(folder / "tests" / "test.sh", test_script(package.verifier_data), executable=True)
            _solution(package, folder, meta)
            meta["instruction_sha256"] = hashlib.sha256("\n".join(texts).encode()).hexdigest()
            meta["harbor"] = harbor_needed(package)
            write_text(folder / "task.toml", _header(package, meta["harbor"]) + tomli_w.dumps(_config(package, meta)))
    return Path(out_dir) / package.name


def harbor_needed(package: TaskPackage) -> str:
    """The oldest Harbor release that runs the export of package as written."""
    needs = [HARBOR_SINCE]
    if package.scenes:
        needs.append(HARBOR_STEPS_SINCE)
    if not float(package.limits.cpus).is_integer():
        needs.append(HARBOR_FRACTIONAL_CPUS_SINCE)
    return max(needs, key=lambda v: tuple(int(part) for part in v.split(".")))


def harbor_needed_by(task_dir: Path) -> str | None:
    """The Harbor release an exported task states it needs (task.toml's [metadata.arena].harbor)."""
    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    needed = config.get("metadata", {}).get("arena", {}).get("harbor")
    return needed if isinstance(needed, str) else None


def _header(package: TaskPackage, needed: str) -> str:
    why = [f"task schema {HARBOR_SCHEMA}"]
    if package.scenes:
        why.append(f"{len(package.scenes)} steps")
    if not float(package.limits.cpus).is_integer():
        why.append(f"{package.limits.cpus} CPUs")
    return (f"# Written by `arena export` from the package {package.name}. Needs Harbor {needed} or later "
            f"({', '.join(why)}).\n")


def _load(package_dir: Path) -> TaskPackage:
    loaded = load_package(package_dir)
    if loaded.package is None or not loaded.ok:
        errors = [d for d in loaded.diagnostics if d.severity.value == "error"]
        first = errors[0] if errors else None
        raise PackageHasErrors(str(package_dir / (first.file or "")) if first else str(package_dir),
                           f"the package has {len(errors)} error(s), first: {first.message if first else 'unknown'}",
                           "Run `arena check` on it and fix them first.", first.line if first else None)
    return loaded.package


def _environment(package: TaskPackage, workspace: Path, folder: Path) -> dict:
    """Copy environment/; put instance 0's files into the image at /workspace."""
    copy_tree_strict(package.environment_dir, folder / "environment", package.root, "Fix the package first.")
    meta: dict = {"instance_files": "", "dockerfile_block": False, "dockerfile_newline_added": False}
    if any(workspace.iterdir()):
        if (folder / "environment" / bundle.INSTANCE_DIR).exists():
            raise InteropError(f"environment/{bundle.INSTANCE_DIR}", "already exists", "Rename it in the package.")
        copy_tree_strict(workspace, folder / "environment" / bundle.INSTANCE_DIR, workspace,
                        "Make the generator write regular files, not links out of the workspace.")
        dockerfile = folder / "environment" / "Dockerfile"
        text = dockerfile.read_text(encoding="utf-8")
        meta["dockerfile_newline_added"] = not text.endswith("\n")
        dockerfile.write_text(text + ("\n" if meta["dockerfile_newline_added"] else "") + bundle.dockerfile_block(),
                              encoding="utf-8")
        meta |= {"instance_files": f"environment/{bundle.INSTANCE_DIR}", "dockerfile_block": True}
    return meta


def _instructions(package: TaskPackage, prompts: list, folder: Path, meta: dict) -> list[str]:
    """instruction.md, or one step per scene; a canary comment heads each (Harbor hides it from the agent)."""
    canary = f"<!-- arena canary GUID {package.canary} -->\n\n"
    texts = [p.text.strip() + "\n" for p in prompts]
    if not package.scenes:
        write_text(folder / "instruction.md", canary + texts[0])
        meta["oracle"] = "solution"
        return texts
    for scene, text in zip(package.scenes, texts, strict=True):
        write_text(folder / "steps" / scene.name / "instruction.md", canary + text)
    meta["oracle"] = f"steps/{package.scenes[-1].name}/solution"
    return texts


def _solution(package: TaskPackage, folder: Path, meta: dict) -> None:
    """The oracle where Harbor's oracle looks: solution/ (or the last step's); earlier steps do nothing."""
    target = folder / meta["oracle"]
    copy_tree_strict(package.oracle_dir, target, package.root, "Fix the package first.")
    entry = package.oracle_entrypoint
    meta["oracle_wrapper"] = entry != "solve.sh" and not runs_solve_sh(target / entry)
    if meta["oracle_wrapper"]:
        if (target / "solve.sh").exists():
            raise InteropError(f"oracle/{entry}", "is the entrypoint, but oracle/solve.sh also exists and Harbor "
                               "always runs solve.sh", "Make solve.sh the entrypoint, or rename the other solve.sh.")
        write_text(target / "solve.sh", solve_wrapper(entry), executable=True)
    for scene in package.scenes[:-1]:
        write_text(folder / "steps" / scene.name / "solution" / "solve.sh", NOOP_SOLUTION, executable=True)


def _cpus(cpus: float) -> int | float:
    return int(cpus) if float(cpus).is_integer() else float(cpus)


def _config(package: TaskPackage, meta: dict) -> dict:
    limits = package.limits
    config: dict = {
        "schema_version": HARBOR_SCHEMA,
        "task": {"name": f"arena/{package.name}", "version": package.version, "description": package.title,
                 "authors": [{"name": a.name} for a in package.authors], "keywords": list(package.tags)},
        "metadata": {"difficulty": package.difficulty, "category": package.domain, "tags": list(package.tags),
                     "license": package.license, "canary": package.canary,
                     "arena": bundle.metadata(package, meta)},
        "agent": {"timeout_sec": float(limits.agent_timeout_s), "user": AGENT_UID},
        "verifier": {"timeout_sec": float(limits.verifier_timeout_s), "user": "root"},
        "environment": {"build_timeout_sec": float(limits.build_timeout_s), "cpus": _cpus(limits.cpus),
                        "memory_mb": limits.memory_mb, "storage_mb": limits.storage_mb, "network_mode": "no-network",
                        "allow_internet": False, "workdir": "/workspace"},
    }
    if package.scenes:
        config["multi_step_reward_strategy"] = "final"
        config["steps"] = [{"name": scene.name} for scene in package.scenes]
    return config
