"""What an imported task's tests and oracle do that the arena forbids or runs differently, with file:line.

Each finding is a to-do at the package file the author edits (`verifier_data/test.sh:12`); where the static check
reports the same place (installs, downloads piped into a shell, reading the agent's logs), `arena import` shows it
once. Also here: the verifier shim's guarded network fallback (`if python3 -c "import pytest"; then ... else pip
install ...; fi`), which is unreachable when the image provides the guarded tool, so it is commented out rather than
reported.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from interop.dockerfile import instructions
from interop.files import relative_to, walk_files
from taskpkg.paths import AGENT_LOG_PATHS

INSTALL = re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip|npm|yarn|pnpm|gem|cargo|go|conda|poetry)\s+(?:-\S+\s+)*"
                     r"(?:install|add)\b|\buv\s+(?:pip|add|sync|tool\s+install)\b|\bapt(?:-get)?\s+(?:-\S+\s+)*"
                     r"install\b|\bapk\s+add\b")
FETCH = re.compile(r"\b(?:curl|wget|uvx|pipx|git\s+clone)\b")
PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
LOCAL_SERVICE = re.compile(r"\blocalhost\b|\b127\.0\.0\.1\b")
ORACLE_PATHS = re.compile(r"(?<![\w.-])/(?:solution|oracle|tests|verifier)/")
SHELL_SUFFIXES = ("", ".sh", ".bash")
# `if <guard>; then`: the guard asks whether a tool is there (command -v / which / type / hash X, python -c
# "import X", python -m X --version, X --version).
_IF = re.compile(r"^\s*(?:el)?if\s+(?P<neg>!\s+)?(?P<guard>.+?)\s*;?\s*then\s*$")
_GUARDS = (re.compile(r"^(?:command\s+-v|which|type|hash)\s+(?P<tool>[\w.-]+)"),
           re.compile(r"^python3?\s+-c\s+[\"']\s*import\s+(?P<tool>[\w.]+)"),
           re.compile(r"^python3?\s+-m\s+(?P<tool>[\w.-]+)\s+--version"),
           re.compile(r"^(?P<tool>[\w.-]+)\s+--version"))
_INSTALLERS = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip|apt(?:-get)?|apk|uv\s+tool)\s+(?:-\S+\s+)*"
                         r"(?:install|add)\b(?P<args>[^;&|]*)")
# What a line of the tests does at verification that the arena's verifier cannot: the first that matches of these
# (pattern, in shell scripts only, what to say) ...
_ONE_OF = (
    (PIPE_TO_SHELL, False, "pipes a download into a shell at verification time (`{}`); the verifier has no network: "
                           "install what it needs in environment/Dockerfile, pinned"),
    (INSTALL, False, "installs packages at verification time (`{}`); the verifier has no network and must not "
                     "install: install them in environment/Dockerfile, pinned"),
    (FETCH, True, "downloads at verification time (`{}`); the verifier has no network: put what it fetches in "
                  "environment/Dockerfile"),
)
# ... and each of these.
_ALSO = (
    (LOCAL_SERVICE, "talks to a local service (`{}`); the arena verifies in a fresh container from the agent's "
                    "final files, without its processes or a network"),
    (AGENT_LOG_PATHS, "reads the agent's logs (`{}`); a verifier judges the final state only, never the transcript: "
                      "check the files the task asks for instead"),
)
_COMMENT = re.compile(r"(?:^|(?<=\s))#.*$")
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Fallback:
    """A branch of a test script that runs only when the image lacks `tool` (1-based lines, inclusive)."""

    first: int
    last: int
    tool: str
    guard_line: int
    installed_line: int


def shown(line: str, limit: int = 100) -> str:
    """A line for a message: whole, or cut at a word boundary and marked."""
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + " …"


def _lines(path: Path) -> list[tuple[int, str]]:
    if path.stat().st_size > _MAX_BYTES:
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    code = ((n, _COMMENT.sub("", line).strip()) for n, line in enumerate(text.split("\n"), start=1))
    return [(n, line) for n, line in code if line]


def scan_verifier(folder: Path, package: Path) -> list[str]:
    """To-dos for the copied verifier files: installs, downloads, local services, the agent's logs."""
    todo: list[str] = []
    for path in walk_files(folder, package):
        where = relative_to(path, package)
        shell = path.suffix in SHELL_SUFFIXES
        if path.name == "Dockerfile" or not (shell or path.suffix == ".py"):
            continue  # only what runs at verification: scripts and Python (docs and data may mention anything)
        for number, line in _lines(path):
            first = next((what for pattern, shell_only, what in _ONE_OF
                          if pattern.search(line) and (shell or not shell_only)), None)
            found = [first] if first else []
            found += [what for pattern, what in _ALSO if pattern.search(line)]
            todo += [f"{where}:{number}: {what.format(shown(line))}" for what in found]
    return todo


def scan_oracle(folder: Path, package: Path) -> list[str]:
    """To-dos for oracle scripts that name the source format's mount points, which do not exist in the arena."""
    todo = []
    for path in walk_files(folder, package):
        for number, line in _lines(path):
            match = ORACLE_PATHS.search(line)
            if match:
                todo.append(f"{relative_to(path, package)}:{number}: refers to {match.group(0)}; in the arena the "
                            "oracle's folder is /arena/oracle/ (use \"$(dirname \"$0\")\") and it runs in /workspace")
    return todo


def installed_tools(dockerfile_text: str) -> dict[str, int]:
    """Packages the image installs (pip, uv, apt, apk), by name, with the line that installs each.

    Debian's python3-X installs the module X too; version pins and extras are dropped from the names.
    """
    tools: dict[str, int] = {}
    for item in instructions(dockerfile_text):
        if item.keyword != "RUN":
            continue
        for match in _INSTALLERS.finditer(item.arguments):
            for word in _words(match.group("args")):
                if word.startswith(("-", "$", ".", "/")) or ">" in word:
                    continue
                name = re.split(r"[=<>!~\[;@ ]", word, maxsplit=1)[0].lower()
                for alias in {name, name.removeprefix("python3-"), name.replace("_", "-")}:
                    tools.setdefault(alias, item.line)
    return tools


def unreachable_fallbacks(text: str, provided: dict[str, int]) -> list[Fallback]:
    """Branches of a shell script guarded by a tool check whose tool the image provides: they never run."""
    lines = text.split("\n")
    found: list[Fallback] = []
    for index, raw in enumerate(lines):
        match = _IF.match(raw)
        tool = _guarded_tool(match.group("guard")) if match and raw.lstrip().startswith("if") else None
        installed = provided.get(tool.lower()) or provided.get(tool.lower().replace("_", "-")) if tool else None
        if tool is None or installed is None:
            continue
        branch = _branches(lines, index)
        if branch is None:
            continue
        then_end, else_start, fi = branch
        if match.group("neg"):
            first, last = index + 2, then_end + 1
        elif else_start is not None:
            first, last = else_start + 2, fi
        else:
            continue
        if first <= last:
            found.append(Fallback(first, last, tool, index + 1, installed))
    return found


def _guarded_tool(guard: str) -> str | None:
    guard = re.sub(r"\s*(?:>\s*/dev/null|2>&1|&>\s*/dev/null|2>\s*/dev/null)", "", guard).strip()
    for pattern in _GUARDS:
        match = pattern.match(guard)
        if match:
            return match.group("tool").split(".")[0]
    return None


def _branches(lines: list[str], start: int) -> tuple[int, int | None, int] | None:
    """(last line of the then-branch, the else line, the fi line), 0-based, for the if at start; None if unclear."""
    depth, else_at = 0, None
    for index in range(start + 1, len(lines)):
        words = lines[index].strip().split()
        head = words[0] if words else ""
        if head == "if" and not re.search(r";\s*fi\s*$", lines[index]):
            depth += 1
        elif head == "fi" or head.startswith("fi;"):
            if depth == 0:
                return (else_at - 1 if else_at is not None else index - 1), else_at, index
            depth -= 1
        elif head == "elif" and depth == 0:
            return None
        elif head == "else" and depth == 0:
            else_at = index
    return None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()
