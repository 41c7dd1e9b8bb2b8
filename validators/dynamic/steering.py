"""The steering check (ARENA712): nothing the agent writes may change how the verifier runs.

On each sampled instance the probe runs the oracle (so the verifier takes its full path), then, as the agent user,
plants modules under every name the verifier's sources import (in every import folder it can write: the interpreter's
own `sys.path` as `python3 -I` has it, and folders the verifier adds), executables under every name they run and
`python3`, `sh` and the like (in every writable folder of the verifier's PATH), and overwrites any script in the
workspace those sources name. Each plant only records that it ran, then hands over to the real module or program.
The frozen state is verified by verifier_trace.py, which lists what the verifier imported and ran and which of it
(import path and PATH entries, modules, programs, scripts) the agent user could write, and which plants ran.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path, PurePosixPath

from agents.scripted import ScriptedAgent, oracle_agent
from sandbox.channel import DEFAULT_PATH
from sandbox.layout import VERIFIER, WORKSPACE
from sandbox.outcomes import EpisodeResult
from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules.dynamic import ARENA712
from validators.registry import Needs, check

TRACE_COMMAND = ["python3", "-I", "-c", (Path(__file__).with_name("verifier_trace.py")).read_text(), VERIFIER]
PROGRAMS = ("python3", "python", "sh", "bash", "env", "pytest")
RUNNERS = frozenset({"run", "call", "check_call", "check_output", "Popen", "system", "popen", "execv", "execvp",
                     "execl", "execlp", "execve", "spawnv", "spawnl", "getoutput", "getstatusoutput"})
CODE_SUFFIXES = (".py", ".sh", ".bash")

_MODULE = '''import os as _os
import sys as _sys
import importlib.machinery as _machinery
import importlib.util as _util
_here = _os.path.dirname(_os.path.abspath(__file__))
try:
    with open("/arena/planted-module-" + __name__, "w") as _mark:
        _mark.write(_here)
except OSError:
    pass
_spec = _machinery.PathFinder.find_spec(__name__, [p for p in _sys.path if _os.path.abspath(p or ".") != _here])
if _spec is not None and _spec.loader is not None:
    _real = _util.module_from_spec(_spec)
    _sys.modules[__name__] = _real
    _spec.loader.exec_module(_real)
'''
_PROGRAM = '''#!/bin/sh
name=${0##*/}
here=${0%/*}
echo "$here" > "/arena/planted-program-$name" 2>/dev/null
IFS=:
for folder in $PATH; do
    [ "$folder" = "$here" ] && continue
    [ -x "$folder/$name" ] && exec "$folder/$name" "$@"
done
exit 127
'''
_SCRIPT = '''#!/bin/sh
"""":
echo "$0" > /arena/planted-script 2>/dev/null; exit 0
"""
open("/arena/planted-script", "w").write(__file__)
'''
_PLANT = '''import json, os, subprocess
spec = json.load(open("/arena/steer/spec.json"))
seen = subprocess.run(["python3", "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
                      capture_output=True, text=True).stdout
folders = []
for folder in json.loads(seen or "[]") + spec["import_dirs"]:
    folder = os.path.abspath(folder or ".")
    if folder not in folders and not folder.endswith(".zip"):
        folders.append(folder)
planted = []
def put(path, text, mode):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, mode)
        planted.append(path)
    except OSError:
        pass
for folder in folders:
    for name in spec["modules"]:
        put(os.path.join(folder, name + ".py"), spec["module"], 0o644)
for folder in spec["program_dirs"]:
    for name in spec["programs"]:
        put(os.path.join(folder, name), spec["program"], 0o755)
for path in spec["scripts"]:
    if os.path.isfile(path):
        put(path, spec["script"], os.stat(path).st_mode & 0o777)
print("PLANTED " + json.dumps(planted))
'''


def verifier_sources(package: TaskPackage) -> list[tuple[str, str]]:
    """(package path, text) of verifier.py and every Python file of its data."""
    paths = [package.verifier_file]
    for data in package.verifier_data:
        root = package.root / data
        paths += [root] if root.is_file() else sorted(root.rglob("*.py")) if root.is_dir() else []
    found = []
    for path in paths:
        if path.suffix == ".py" and path.is_file() and "__pycache__" not in path.parts:
            text = path.read_text(encoding="utf-8", errors="replace")
            found.append((path.relative_to(package.root).as_posix(), text))
    return found


def names_used(package: TaskPackage) -> dict[str, list[str]]:
    """What the verifier's sources import, run, add to the import path and name as scripts (read, not evaluated)."""
    modules: set[str] = set()
    programs: set[str] = set(PROGRAMS)
    folders: set[str] = set()
    scripts: set[str] = set()
    for _, text in verifier_sources(package):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call):
                _from_call(node, modules, programs, folders)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(CODE_SUFFIXES):
                path = PurePosixPath(node.value)
                scripts.add(str(path) if path.is_absolute() else f"{WORKSPACE}/{path.name}")
    return {"modules": sorted(m for m in modules if m.isidentifier()), "programs": sorted(programs),
            "import_dirs": sorted(folders), "scripts": sorted(scripts)}


def _from_call(node: ast.Call, modules: set[str], programs: set[str], folders: set[str]) -> None:
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    first = node.args[0] if node.args else None
    if name in ("import_module", "__import__") and isinstance(first, ast.Constant) and isinstance(first.value, str):
        modules.add(first.value.split(".")[0])
    elif name in ("insert", "append") and "sys.path" in ast.unparse(node.func):
        for inner in ast.walk(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.startswith("/"):
                folders.add(inner.value.rstrip("/") or "/")
            elif isinstance(inner, ast.Constant) and inner.value == "ARENA_WORKSPACE":
                folders.add(WORKSPACE)
    elif name in RUNNERS and first is not None:
        word = first.elts[0] if isinstance(first, ast.List | ast.Tuple) and first.elts else first
        if isinstance(word, ast.Constant) and isinstance(word.value, str) and word.value.split():
            programs.add(PurePosixPath(word.value.split()[0]).name)


def steer_agent(package: TaskPackage, used: dict[str, list[str]]) -> ScriptedAgent:
    """The oracle, then the plants (see the module's doc); `used` is names_used(package), read once: Python 3.11's
    ast is not safe to use from several threads at once."""
    agent = oracle_agent(package)
    spec = {**used, "program_dirs": DEFAULT_PATH.split(":"), "module": _MODULE,
            "program": _PROGRAM, "script": _SCRIPT}
    agent.name = "probe:steer-verifier"
    agent.files = {**agent.files, "steer/spec.json": json.dumps(spec).encode(), "steer/plant.py": _PLANT.encode()}
    agent.commands.append("python3 /arena/steer/plant.py")
    return agent


@check(ARENA712, needs=Needs.ENGINE)
def judge_steering(result: EpisodeResult) -> list[Diagnostic]:
    """ARENA712 for every import path or PATH entry, module, program or script of the verifier the agent could
    write, and every plant that ran inside the verifier."""
    steer = (result.details or {}).get("steer") if isinstance(result.details, dict) else None
    if not isinstance(steer, dict):
        return []
    ran = {str(mark.get("where", "")): str(mark.get("what", "")) for mark in steer.get("planted", [])
           if isinstance(mark, dict)}
    items = [item for item in steer.get("writable", []) if isinstance(item, dict)]
    folders = {str(item.get("path", "")) for item in items}
    found, explained = [], set()
    for item in items:
        path = str(item.get("path", ""))
        if str(PurePosixPath(path).parent) in folders:
            continue  # one finding per cause: the writable folder holding it is reported
        places = {path} | {f for f in folders if str(PurePosixPath(f).parent) == path}
        hits = [where for where in ran if where in places or str(PurePosixPath(where).parent) in places]
        explained.update(hits)
        planted = ", ".join(sorted(ran[where] for where in hits))
        proof = f"; the probe planted {planted} there and it ran inside the verifier" if hits else ""
        file = "environment/Dockerfile" if item.get("by") == "image" else "verifier.py"
        case = "workspace" if path == WORKSPACE or path.startswith(WORKSPACE + "/") else "writable"
        found.append(ARENA712.found(file, case=case, kind=item.get("kind", "path"), path=path, proof=proof))
    for where, what in sorted(ran.items()):
        if where not in explained:
            found.append(ARENA712.found("verifier.py", case="planted", what=what, where=where))
    return found
