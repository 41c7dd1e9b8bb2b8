"""ARENA506: verifier.py runs or imports files from the workspace (read on its syntax tree; the dynamic steering
check, ARENA712, confirms it by planting there).

A value is the workspace's when it is a string starting with /workspace, `ARENA_WORKSPACE` read from the environment,
or a name assigned from such a value (followed through assignments, not through calls' results). It is an offence
where such a value is an argument (positional, not cwd=) of something that runs or loads code: subprocess and os
process calls, runpy, exec/eval/compile, importlib's file loaders, or `sys.path.insert` / `append`.
"""

from __future__ import annotations

import ast

from taskpkg.diagnostics import Diagnostic
from taskpkg.rules.sources import ARENA506

WORKSPACE, VARIABLE = "/workspace", "ARENA_WORKSPACE"
RUNNERS = frozenset({"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput",
                     "getstatusoutput", "run_path", "run_module", "exec", "eval", "compile", "spec_from_file_location",
                     "SourceFileLoader", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp",
                     "execlpe", "spawnv", "spawnve", "spawnvp", "spawnl", "posix_spawn", "posix_spawnp"})
_PASSES = 6
_HINTS = ("subprocess", "system", "popen", "run_path", "run_module", "exec", "eval", "compile", "spec_from_file",
          "SourceFileLoader", "spawn", "sys.path")


def may_run_workspace(text: str) -> bool:
    """Whether verifier.py's text could hold an ARENA506 offence (else it need not be parsed for it)."""
    return (WORKSPACE in text or VARIABLE in text) and any(hint in text for hint in _HINTS)


def check_workspace_code(tree: ast.AST) -> list[Diagnostic]:
    """ARENA506 at each call that runs, loads or adds to the import path something from the workspace."""
    tainted = _workspace_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        adds_path = name in ("insert", "append") and ast.unparse(node.func).endswith("sys.path." + name)
        if (name in RUNNERS or adds_path) and any(_from_workspace(arg, tainted) for arg in node.args):
            what = "adds a workspace folder to the import path" if adds_path else f"passes a workspace path to {name}()"
            found.append(ARENA506.found("verifier.py", node.lineno, what=what, code=ast.unparse(node)[:100]))
    return found


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _workspace_names(tree: ast.AST) -> set[str]:
    """Names assigned (anywhere) from a value of the workspace, followed through assignments."""
    assignments = [(node.targets if isinstance(node, ast.Assign) else [node.target], node.value)
                   for node in ast.walk(tree)
                   if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None]
    tainted: set[str] = set()
    for _ in range(_PASSES):
        before = len(tainted)
        for targets, value in assignments:
            if _from_workspace(value, tainted):
                tainted.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        if len(tainted) == before:
            break
    return tainted


def _from_workspace(node: ast.AST, tainted: set[str]) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            value = inner.value
            if value == VARIABLE or value.rstrip("/") == WORKSPACE or value.startswith(WORKSPACE + "/"):
                return True
        elif isinstance(inner, ast.Name) and inner.id in tainted:
            return True
    return False
