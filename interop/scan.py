"""Find what an imported task does that the arena forbids or runs differently, with file:line, for the report."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from interop.sources import relative_to, walk_files

INSTALL = re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip|npm|yarn|pnpm|gem|cargo|go|conda|poetry)\s+(?:-\S+\s+)*"
                     r"(?:install|add)\b|\buv\s+(?:pip|add|sync|tool\s+install)\b|\bapt(?:-get)?\s+(?:-\S+\s+)*"
                     r"install\b|\bapk\s+add\b")
FETCH = re.compile(r"\b(?:curl|wget|uvx|git\s+clone)\b")
PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
LOCAL_SERVICE = re.compile(r"\blocalhost\b|\b127\.0\.0\.1\b")
AGENT_LOGS = re.compile(r"/logs/agent|trajector", re.IGNORECASE)
ORACLE_PATHS = re.compile(r"(?<![\w.-])/(?:solution|oracle|tests|verifier)/")
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Hit:
    """One line of a file that matters to the arena."""

    where: str
    text: str


def _lines(path: Path) -> list[tuple[int, str]]:
    if path.stat().st_size > _MAX_BYTES:
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    return [(n, line.strip()) for n, line in enumerate(text.split("\n"), start=1)
            if line.strip() and not line.strip().startswith("#")]


def scan_verifier(folder: Path, package: Path) -> tuple[list[str], list[Hit]]:
    """Report lines of the copied verifier files; also return the lines that install or download."""
    notes: list[str] = []
    fetches: list[Hit] = []
    for path in walk_files(folder, package):
        where = relative_to(path, package)
        for number, line in _lines(path):
            at = f"{where}:{number}"
            shown = line if len(line) <= 100 else line[:97] + "..."
            if PIPE_TO_SHELL.search(line):
                notes.append(f"{at}: pipes a download into a shell at verification time (`{shown}`); the verifier "
                             "has no network: install what it needs in environment/Dockerfile, pinned")
            elif INSTALL.search(line):
                notes.append(f"{at}: installs packages at verification time (`{shown}`); the verifier has no network "
                             "and must not install: install them in environment/Dockerfile, pinned")
            elif FETCH.search(line) and path.suffix in ("", ".sh", ".bash"):
                notes.append(f"{at}: downloads at verification time (`{shown}`); the verifier has no network")
            else:
                if LOCAL_SERVICE.search(line):
                    notes.append(f"{at}: talks to a local service (`{shown}`); the arena verifies in a fresh "
                                 "container from the agent's final files, without its processes or a network")
                if AGENT_LOGS.search(line):
                    notes.append(f"{at}: reads agent logs (`{shown}`); an arena verifier judges the final state only")
                continue
            fetches.append(Hit(at, shown))
    return notes, fetches


def scan_oracle(folder: Path, package: Path) -> list[str]:
    """Oracle scripts that name the source format's mount points, which do not exist in the arena."""
    notes = []
    for path in walk_files(folder, package):
        for number, line in _lines(path):
            match = ORACLE_PATHS.search(line)
            if match:
                notes.append(f"{relative_to(path, package)}:{number}: refers to {match.group(0)}; in the arena the "
                             "oracle's folder is /arena/oracle/ (use \"$(dirname \"$0\")\") and it runs in /workspace")
    return notes
