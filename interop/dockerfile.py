"""What the import needs to know about a Dockerfile: its final WORKDIR and whether the image has python3."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PYTHON = re.compile(r"python", re.IGNORECASE)
ARENA_WORKSPACE = "/workspace"


@dataclass(frozen=True)
class DockerfileFacts:
    """WORKDIR of the final stage (with its line) and whether python appears anywhere."""

    workdir: str | None
    workdir_line: int | None
    mentions_python: bool


def instructions(text: str) -> list[tuple[str, str, int]]:
    """(KEYWORD, arguments, first line) for every instruction, continuation lines joined, comments dropped."""
    found: list[tuple[str, str, int]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not pending:
            start = number
        pending.append(line[:-1] if line.endswith("\\") else line)
        if not line.endswith("\\"):
            keyword, _, arguments = " ".join(pending).partition(" ")
            found.append((keyword.upper(), arguments.strip(), start))
            pending = []
    return found


def facts(text: str) -> DockerfileFacts:
    """Read the facts from Dockerfile text."""
    workdir, workdir_line = None, None
    for keyword, arguments, line in instructions(text):
        if keyword == "FROM":
            workdir, workdir_line = None, None
        elif keyword == "WORKDIR":
            path = arguments.strip().strip("\"'")
            workdir = path if path.startswith("/") or workdir is None else f"{workdir.rstrip('/')}/{path}"
            workdir_line = line
    return DockerfileFacts(workdir, workdir_line, bool(_PYTHON.search(text)))
