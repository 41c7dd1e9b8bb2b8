"""The one frontmatter reader: a Markdown document that opens with YAML between two `---` lines.

`split_frontmatter` cuts the document in two; `read_frontmatter` also parses the YAML with the strict loader (no
aliases, tags, duplicate keys; see strict_yaml) and requires a mapping. Every line it reports, in errors and in the
key-to-line map, is a line of the whole document. task.md is read with it, and so can any other format that puts
YAML frontmatter on Markdown (BenchFlow's task.md): callers catch FrontmatterError, whose `finding(file)` is the
diagnostic and whose `line`, `message` and `fix` are there for messages of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskpkg import strict_yaml
from taskpkg.rules.rule import RuleViolation
from taskpkg.rules.task_file import ARENA103, ARENA106
from taskpkg.strict_yaml import YamlDocument

FENCE = "---"


class FrontmatterError(RuleViolation):
    """The frontmatter cannot be read: ARENA103 (no fences), ARENA104/105 (its YAML) or ARENA106 (not a mapping), at
    a line of the document."""


@dataclass(frozen=True)
class Split:
    """A document cut at its fences: the YAML text (starting at `yaml_first_line`) and the body after the closing
    fence (starting at `body_first_line`), both 1-based lines of the document."""

    yaml_text: str
    yaml_first_line: int
    body: str
    body_first_line: int


@dataclass(frozen=True)
class Frontmatter:
    """Parsed frontmatter: a mapping with the document line of every key and list item, and the body."""

    document: YamlDocument
    body: str
    body_first_line: int

    @property
    def data(self) -> dict[str, Any]:
        """The frontmatter mapping."""
        assert isinstance(self.document.data, dict)
        return self.document.data

    def line_of(self, path: strict_yaml.Path) -> int | None:
        """The document line of a key path (or of its nearest ancestor that has one)."""
        return self.document.line_of(path)


def split_frontmatter(text: str, path: str = "task.md") -> Split:
    """Cut text (LF line endings) at its `---` fences; `path` names the file in the error. Raises FrontmatterError."""
    lines = text.split("\n")
    if lines[0].rstrip() != FENCE:
        raise FrontmatterError(ARENA103, "missing", 1, None, path=path)
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE), None)
    if closing is None:
        raise FrontmatterError(ARENA103, "unclosed", 1, None)
    return Split("\n".join(lines[1:closing]), 2, "\n".join(lines[closing + 1:]), closing + 2)


def read_frontmatter(text: str, path: str = "task.md") -> Frontmatter:
    """Split text and parse its frontmatter strictly into a mapping. Raises FrontmatterError."""
    split = split_frontmatter(text, path)
    offset = split.yaml_first_line - 1
    try:
        parsed = strict_yaml.load(split.yaml_text)
    except strict_yaml.StrictYamlError as exc:
        line = exc.line + offset if exc.line is not None else None
        raise FrontmatterError(exc.rule, exc.case, line, exc.column, **exc.fields) from None
    if not isinstance(parsed.data, dict):
        kind = type(parsed.data).__name__ if parsed.data is not None else "empty"
        raise FrontmatterError(ARENA106, "", split.yaml_first_line, None, kind=kind)
    document = YamlDocument(parsed.data, {key: line + offset for key, line in parsed.lines.items()})
    return Frontmatter(document, split.body, split.body_first_line)
