"""verifier.py checks, on its syntax tree: valid Python, no transcript, no network, no installs, writes a reward."""

from __future__ import annotations

import ast
import re

from taskpkg.diagnostics import Diagnostic
from taskpkg.installs import debian_packages, python_packages
from taskpkg.package import TaskPackage
from taskpkg.paths import AGENT_LOG_PATHS, find_agent_log_path
from taskpkg.rules.sources import ARENA501, ARENA502, ARENA503, ARENA504, ARENA505, ARENA506
from validators.registry import Needs, check
from validators.static.dockerfile import PIPE_TO_SHELL, pipe_to_shell_finding
from validators.static.files import PackageTree
from validators.static.verifier_workspace import check_workspace_code, may_run_workspace

VERIFIER = "verifier.py"
TRANSCRIPT_HINTS = ("transcript", "trajectory", "/logs/agent", "agent.log", ".bash_history", "arena_transcript")
NETWORK_MODULES = frozenset({
    "socket", "ssl", "urllib.request", "urllib3", "http.client", "requests", "httpx", "aiohttp", "ftplib",
    "smtplib", "telnetlib", "xmlrpc.client", "websocket", "websockets", "paramiko", "pycurl",
})
INSTALL_MODULES = frozenset({"pip", "ensurepip"})
INSTALL_HINTS = ("pip install", "pip3 install", "uv pip", "uv add", "apt-get", "apt install", "npm install",
                 "ensurepip", "easy_install")
OUTPUT_VARIABLE = "ARENA_OUTPUT"
_TRIGGER_WORDS = frozenset(INSTALL_MODULES | {h.split()[0] for h in INSTALL_HINTS} | set(TRANSCRIPT_HINTS)
                           | {"__import__", "uv"})
# A network module is only an offence where it is imported: its name on a line that imports (`requests` alone is a
# word of many tasks).
_NETWORK_NAME = re.compile(r"\b(?:" + "|".join(sorted({re.escape(m.split(".")[0]) for m in NETWORK_MODULES})) + r")\b")


@check(ARENA501, ARENA502, ARENA503, ARENA504, ARENA505, ARENA506, needs=Needs.FOLDER)
def check_verifier(tree: PackageTree) -> list[Diagnostic]:
    """Run every verifier.py check (nothing when it is missing: the file checks report that).

    The file is parsed only when its text may hold what the tree checks look for: the repository's lint, which
    parses every package Python file anyway, reports its syntax errors as ARENA501 (validators.static.lint)."""
    file = tree.by_path.get(VERIFIER)
    if file is None:
        return []
    text = file.data.decode("utf-8", errors="replace")
    found: list[Diagnostic] = []
    if OUTPUT_VARIABLE not in text:
        found.append(ARENA505.found(VERIFIER, 1, variable=OUTPUT_VARIABLE))
    offends, runs_workspace = _may_offend(text), may_run_workspace(text)
    if not offends and not runs_workspace:
        return found
    try:
        syntax = file.syntax()
    except (SyntaxError, ValueError) as exc:
        return [syntax_error(getattr(exc, "lineno", None), getattr(exc, "offset", None), getattr(exc, "msg", exc))]
    if runs_workspace:
        found.extend(check_workspace_code(syntax))
    if not offends:
        return found
    for node in ast.walk(syntax):
        kind = type(node)
        if kind is ast.Constant:
            if isinstance(node.value, str):
                found.extend(_check_string(node.value, node.lineno))
        elif kind in (ast.Import, ast.ImportFrom, ast.Call):
            found.extend(_check_imports(node))
        elif kind in (ast.List, ast.Tuple) and _is_pip_install(node):
            found.append(_installs("builds a pip install command", node.lineno))
    return found


def syntax_error(line: int | None, column: int | None, problem: object) -> Diagnostic:
    """ARENA501 at a place: verifier.py does not parse."""
    return ARENA501.found(VERIFIER, line, column, problem=problem)


@check(ARENA502, ARENA504, needs=Needs.PACKAGE)
def check_verifier_scripts(tree: PackageTree, package: TaskPackage) -> list[Diagnostic]:
    """Scripts in verifier data run at verification time too: no downloads piped to a shell, no installs (shell),
    and no reading of the agent's logs (shell and Python)."""
    roots = tuple(data.rstrip("/") for data in package.verifier_data)
    found: list[Diagnostic] = []
    for file in tree.files:
        in_data = any(file.relative == r or file.relative.startswith(r + "/") for r in roots)
        text = file.text if in_data else None
        script = bool(text) and (file.relative.endswith((".sh", ".bash")) or text.startswith("#!"))
        if text and (script or file.relative.endswith(".py")) and find_agent_log_path(text):
            found.extend(_agent_logs(file.relative, text))
        if not script or not _may_install(text):
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            code = line.split("#", 1)[0] if not line.startswith("#!") else ""
            if PIPE_TO_SHELL.search(code):
                found.append(pipe_to_shell_finding(file.relative, number, "in a script the verifier runs"))
            elif any(hint in code.lower() for hint in INSTALL_HINTS) or re.search(r"\b(?:uvx|pipx)\b", code):
                found.append(_installs_in_script(file.relative, number, code))
    return found


def _installs_in_script(relative: str, number: int, code: str) -> Diagnostic:
    """ARENA504 for a line of a test script that installs; its fix names the Dockerfile line to add where the line
    says what it installs."""
    python, debian = python_packages(code), debian_packages(code)
    lines = ([f"RUN apt-get update && apt-get install -y {' '.join(debian)}"] if debian else []) + \
        ([f"RUN python3 -m pip install --no-cache-dir {' '.join(python)}"] if python else [])
    if not lines or any(word.startswith("$") for word in python + debian):
        return ARENA504.found(relative, number, case="script", path=relative, command=code.strip()[:80])
    return ARENA504.found(relative, number, case="script_packages", path=relative, command=code.strip()[:80],
                          dockerfile_line="` and `".join(lines))


def _may_install(text: str) -> bool:
    """A whole-text pre-check that never misses a line the per-line checks below would report."""
    lowered = text.lower()
    return PIPE_TO_SHELL.search(text) is not None or any(hint in lowered for hint in INSTALL_HINTS) or \
        re.search(r"\b(?:uvx|pipx)\b", text) is not None


def _agent_logs(relative: str, text: str) -> list[Diagnostic]:
    """ARENA502 for each line of a script the verifier runs that names where the agent's logs are kept."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        match = AGENT_LOG_PATHS.search(line.split("#", 1)[0])
        if match:
            found.append(ARENA502.found(relative, number, case="script", path=relative, where=match.group(0)))
    return found


def _may_offend(text: str) -> bool:
    """A fast textual pre-check: without any of these words, or a network module's name on a line that imports, no
    node of the tree can trigger a finding."""
    lowered = text.lower()
    if any(word in lowered for word in _TRIGGER_WORDS):
        return True
    joined = text.replace("\\\n", " ")
    index = joined.find("import")
    while index != -1:
        end = joined.find("\n", index)
        if _NETWORK_NAME.search(joined, joined.rfind("\n", 0, index) + 1, end if end != -1 else len(joined)):
            return True
        index = joined.find("import", index + 6)
    return False


def _check_string(text: str, line: int) -> list[Diagnostic]:
    lowered = text.lower()
    found = []
    if any(hint in lowered for hint in TRANSCRIPT_HINTS):
        found.append(ARENA502.found(VERIFIER, line, text=repr(text[:60])))
    if any(hint in lowered for hint in INSTALL_HINTS):
        found.append(_installs(f"runs {text[:60]!r}", line))
    return found


def _check_imports(node: ast.AST) -> list[Diagnostic]:
    found = []
    for module in _imported(node):
        if module in NETWORK_MODULES or module.split(".")[0] in NETWORK_MODULES:
            found.append(ARENA503.found(VERIFIER, node.lineno, module=module))
        if module.split(".")[0] in INSTALL_MODULES:
            found.append(_installs(f"imports {module}", node.lineno))
    return found


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return [first.value]
    return []


def _is_pip_install(node: ast.List | ast.Tuple) -> bool:
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return any(w in ("pip", "pip3", "uv") for w in words) and "install" in words


def _installs(what: str, line: int) -> Diagnostic:
    return ARENA504.found(VERIFIER, line, case="verifier", what=what)
