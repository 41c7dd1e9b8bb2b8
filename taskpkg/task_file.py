"""Read task.md: decode it, split the frontmatter from the body, and parse the frontmatter strictly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from taskpkg import strict_yaml
from taskpkg.checks import check
from taskpkg.diagnostics import Diagnostic

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
        found.append(check("ARENA101").found(
            f"{file} starts with a UTF-8 byte-order mark", "Save the file as UTF-8 without BOM.", file, 1))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        found.append(check("ARENA100").found(
            f"{file} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            "Save the file as UTF-8.", file, line))
        return None, found
    if "\r\n" in text:
        found.append(check("ARENA102").found(
            f"{file} uses CRLF line endings", "Convert to LF endings (e.g. `dos2unix`, or git's core.autocrlf=input).",
            file, text[: text.index("\r\n")].count("\n") + 1))
        text = text.replace("\r\n", "\n")
    return text, found


def read_task_file(package_dir: Path) -> TaskDocument:
    """Read and split package_dir/task.md. Problems come back as diagnostics, never as exceptions."""
    path = package_dir / TASK_FILE
    doc = TaskDocument(frontmatter=None, frontmatter_first_line=2, body="", body_first_line=1)
    size = path.stat().st_size
    if size > MAX_TASK_BYTES:
        doc.diagnostics.append(check("ARENA100").found(
            f"{TASK_FILE} is {size} bytes; the limit is {MAX_TASK_BYTES}",
            "Move long reference material into files under environment/ and point the prompt at them.", TASK_FILE))
        return doc
    text, found = decode(path.read_bytes(), TASK_FILE)
    doc.diagnostics.extend(found)
    if text is None:
        return doc
    if not text.strip():
        doc.diagnostics.append(check("ARENA100").found(
            f"{TASK_FILE} is empty", "Run `arena new NAME --domain D` for a template, or copy a bundled package.",
            TASK_FILE, 1))
        return doc
    lines = text.split("\n")
    if lines[0].rstrip() != FENCE:
        doc.diagnostics.append(check("ARENA103").found(
            f"{TASK_FILE} does not start with a '---' line, so it has no frontmatter",
            "Begin the file with '---', the YAML frontmatter, then a closing '---' line before the prompt.",
            TASK_FILE, 1))
        return doc
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE), None)
    if closing is None:
        doc.diagnostics.append(check("ARENA103").found(
            "the frontmatter is never closed", "Add a line '---' after the last frontmatter key.", TASK_FILE, 1))
        return doc
    doc.body = "\n".join(lines[closing + 1:])
    doc.body_first_line = closing + 2
    try:
        doc.frontmatter = strict_yaml.load("\n".join(lines[1:closing]))
    except strict_yaml.StrictYamlError as exc:
        check_id = "ARENA104" if exc.kind == "syntax" else "ARENA105"
        line = exc.line + 1 if exc.line is not None else None
        doc.diagnostics.append(check(check_id).found(exc.message, exc.fix, TASK_FILE, line, exc.column))
        return doc
    if not isinstance(doc.frontmatter.data, dict):
        kind = type(doc.frontmatter.data).__name__ if doc.frontmatter.data is not None else "empty"
        doc.diagnostics.append(check("ARENA106").found(
            f"the frontmatter is {kind}, not a mapping of keys to values",
            "Write `key: value` lines between the '---' fences (see `arena schema`).", TASK_FILE, 2))
        doc.frontmatter = None
    return doc
