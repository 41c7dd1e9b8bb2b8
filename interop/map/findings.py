"""What an imported task's tests and oracle do that the arena forbids or runs differently, with file:line.

Each finding is a to-do at the package file the author edits (`verifier_data/test.sh:12`); where the static check
reports the same place (installs, downloads piped into a shell, reading the agent's logs), `arena import` shows it
once. Also here: the packages a Dockerfile installs (`installed_tools`), which the import's resolution of guarded
install fallbacks (interop.map.guards, interop.write.fallbacks) leaves out of what it adds to the image.
"""

from __future__ import annotations

import re
from pathlib import Path

from interop.dockerfile_facts import instructions
from interop.files import relative_to, walk_files
from taskpkg.installs import PIPE_TO_SHELL, debian_packages, python_packages, requirement_name
from taskpkg.paths import AGENT_LOG_PATHS

INSTALL = re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip|npm|yarn|pnpm|gem|cargo|go|conda|poetry)\s+(?:-\S+\s+)*"
                     r"(?:install|add)\b|\buv\s+(?:pip|add|sync|tool\s+install)\b|\bapt(?:-get)?\s+(?:-\S+\s+)*"
                     r"install\b|\bapk\s+add\b")
FETCH = re.compile(r"\b(?:curl|wget|uvx|pipx|git\s+clone)\b")
LOCAL_SERVICE = re.compile(r"\blocalhost\b|\b127\.0\.0\.1\b")
ORACLE_PATHS = re.compile(r"(?<![\w.-])/(?:solution|oracle|tests|verifier)/")
SHELL_SUFFIXES = ("", ".sh", ".bash")
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
_APK_ADD = re.compile(r"\bapk\s+add\b(?P<args>[^;&|]*)")
_MAX_BYTES = 256 * 1024


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
        words = python_packages(item.arguments) + debian_packages(item.arguments) + _apk_packages(item.arguments)
        for word in words:
            name = requirement_name(word)
            for alias in {name, name.removeprefix("python3-"), name.replace("-", "_")}:
                tools.setdefault(alias, item.line)
    return tools


def _apk_packages(line: str) -> list[str]:
    return [w for match in _APK_ADD.finditer(line) for w in match.group("args").split() if not w.startswith("-")]
