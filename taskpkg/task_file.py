"""Read task.md: decode it, split the frontmatter from the body, and parse the frontmatter strictly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from taskpkg import strict_yaml
from taskpkg.diagnostics import Diagnostic
from taskpkg.rules.task_file import ARENA100, ARENA101, ARENA102, ARENA103, ARENA106

TASK_FILE = "task.md"
MAX_TASK_BYTES = 256 * 1024
FENCE = "---"


@dataclass
class TaskDocument:
    """task.md split in two. `body_first_line` is the 1-based line of task.md where the body starts."""

    frontmatter: strict_yaml.YamlDocument | None
    frontmatter_first_line: int
    body: str
    body_first_line: int
    diagnostics: list[Diagnostic] = field(default_factory=list)


def decode(raw: bytes, file: str) -> tuple[str | None, list[Diagnostic]]:
    """Decode UTF-8 text, tolerating (with warnings) a byte-order mark and CRLF endings."""
    found: list[Diagnostic] = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        found.append(ARENA101.found(file, 1, path=file))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        found.append(ARENA100.found(file, line, case="encoding", path=file, byte=raw[exc.start], offset=exc.start))
        return None, found
    if "\r\n" in text:
        found.append(ARENA102.found(file, text[: text.index("\r\n")].count("\n") + 1, path=file))
        text = text.replace("\r\n", "\n")
    return text, found


def read_task_file(package_dir: Path) -> TaskDocument:
    """Read and split package_dir/task.md. Problems come back as diagnostics, never as exceptions."""
    path = package_dir / TASK_FILE
    doc = TaskDocument(frontmatter=None, frontmatter_first_line=2, body="", body_first_line=1)
    size = path.stat().st_size
    if size > MAX_TASK_BYTES:
        doc.diagnostics.append(ARENA100.found(TASK_FILE, case="size", path=TASK_FILE, size=size, limit=MAX_TASK_BYTES))
        return doc
    text, found = decode(path.read_bytes(), TASK_FILE)
    doc.diagnostics.extend(found)
    if text is None:
        return doc
    if not text.strip():
        doc.diagnostics.append(ARENA100.found(TASK_FILE, 1, case="empty", path=TASK_FILE))
        return doc
    lines = text.split("\n")
    if lines[0].rstrip() != FENCE:
        doc.diagnostics.append(ARENA103.found(TASK_FILE, 1, case="missing", path=TASK_FILE))
        return doc
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE), None)
    if closing is None:
        doc.diagnostics.append(ARENA103.found(TASK_FILE, 1, case="unclosed"))
        return doc
    doc.body = "\n".join(lines[closing + 1:])
    doc.body_first_line = closing + 2
    try:
        doc.frontmatter = strict_yaml.load("\n".join(lines[1:closing]))
    except strict_yaml.StrictYamlError as exc:
        line = exc.line + 1 if exc.line is not None else None
        doc.diagnostics.append(exc.finding(TASK_FILE, line))
        return doc
    if not isinstance(doc.frontmatter.data, dict):
        kind = type(doc.frontmatter.data).__name__ if doc.frontmatter.data is not None else "empty"
        doc.diagnostics.append(ARENA106.found(TASK_FILE, 2, kind=kind))
        doc.frontmatter = None
    return doc
