"""Read task.md: decode it, then split and parse its frontmatter with the one reader (taskpkg.frontmatter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from taskpkg.diagnostics import Diagnostic
from taskpkg.frontmatter import FrontmatterError, read_frontmatter
from taskpkg.rules.task_file import ARENA100, ARENA101, ARENA102
from taskpkg.strict_yaml import YamlDocument

TASK_FILE = "task.md"
MAX_TASK_BYTES = 256 * 1024


@dataclass
class TaskDocument:
    """task.md split in two: the frontmatter (its lines are lines of task.md) and the body, which starts at
    `body_first_line`."""

    frontmatter: YamlDocument | None
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
    doc = TaskDocument(frontmatter=None, body="", body_first_line=1)
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
    try:
        parsed = read_frontmatter(text, TASK_FILE)
    except FrontmatterError as exc:
        doc.diagnostics.append(exc.finding(TASK_FILE))
        return doc
    doc.frontmatter, doc.body, doc.body_first_line = parsed.document, parsed.body, parsed.body_first_line
    return doc
