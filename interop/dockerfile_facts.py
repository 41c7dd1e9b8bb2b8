"""What interop needs to know about a Dockerfile: its instructions, final WORKDIR and USER, and whether the image has
python3; and the lines it appends (a separate verifier image's setup).

A small splitter (continuation lines joined, comments dropped) is enough here: only FROM, WORKDIR, USER, COPY, RUN,
ENV and ARG are read, and every line that is not understood is reported rather than guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PYTHON = re.compile(r"python", re.IGNORECASE)
ARENA_WORKSPACE = "/workspace"


@dataclass(frozen=True)
class Instruction:
    """One instruction: KEYWORD, its arguments (continuations joined), and its first line."""

    keyword: str
    arguments: str
    line: int


@dataclass(frozen=True)
class DockerfileFacts:
    """The final stage's base image, WORKDIR (with its line) and USER, and whether python appears anywhere."""

    base: str | None
    workdir: str | None
    workdir_line: int | None
    user: str | None
    mentions_python: bool


def instructions(text: str) -> list[Instruction]:
    """Every instruction of a Dockerfile, continuation lines joined, comments dropped."""
    found: list[Instruction] = []
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
            found.append(Instruction(keyword.upper(), arguments.strip(), start))
            pending = []
    return found


def joined_path(workdir: str | None, path: str) -> str:
    """An absolute path for path, relative to workdir (as WORKDIR and COPY resolve it)."""
    path = path.strip().strip("\"'")
    if path.startswith("/") or workdir is None:
        return path if path.startswith("/") else f"/{path}"
    return f"{workdir.rstrip('/')}/{path}" if path not in (".", "./") else workdir


def facts(text: str) -> DockerfileFacts:
    """Read the facts from Dockerfile text."""
    base = workdir = user = None
    workdir_line = None
    for item in instructions(text):
        if item.keyword == "FROM":
            words = [w for w in item.arguments.split() if not w.startswith("--")]
            base, workdir, workdir_line, user = (words[0] if words else None), None, None, None
        elif item.keyword == "WORKDIR":
            workdir, workdir_line = joined_path(workdir, item.arguments), item.line
        elif item.keyword == "USER":
            user = item.arguments.strip()
    return DockerfileFacts(base, workdir, workdir_line, user, bool(_PYTHON.search(text)))
