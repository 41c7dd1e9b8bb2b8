"""Source locations for messages: the line of a key in YAML frontmatter or in a TOML file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

Key = tuple[str | int, ...]
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.-]+)\s*=")
_MAX_DEPTH = 32


@dataclass
class Locator:
    """Maps key paths to 1-based lines of one file; `where(path)` renders `file:line` (or just the file)."""

    file: str
    lines: dict[Key, int] = field(default_factory=dict)

    def line(self, path: Key) -> int | None:
        """The line of path, or of its nearest ancestor that has one."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None

    def where(self, path: Key = ()) -> str:
        """`file:line` for a key path."""
        line = self.line(path)
        return f"{self.file}:{line}" if line is not None else self.file


def yaml_locator(file: str, text: str, first_line: int) -> Locator:
    """Lines of every key and list item of YAML text that starts at `first_line` of `file`."""
    locator = Locator(file)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return locator
    if root is not None:
        _walk(root, (), locator, first_line - 1, 0)
    return locator


def _walk(node: Node, path: Key, locator: Locator, offset: int, depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            key = (*path, str(key_node.value))
            locator.lines.setdefault(key, key_node.start_mark.line + 1 + offset)
            _walk(value_node, key, locator, offset, depth + 1)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            key = (*path, index)
            locator.lines.setdefault(key, item.start_mark.line + 1 + offset)
            _walk(item, key, locator, offset, depth + 1)


def toml_locator(file: str, text: str) -> Locator:
    """Lines of the keys of a TOML file: `[table]` headers and `key =` lines under them (not inline tables)."""
    locator = Locator(file)
    table: Key = ()
    counts: dict[Key, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        header = _TABLE.match(raw)
        if header:
            parts = tuple(_unquote(p) for p in header.group(1).split("."))
            if raw.lstrip().startswith("[["):
                index = counts.get(parts, 0)
                counts[parts] = index + 1
                table = (*parts, index)
            else:
                table = _indexed(parts, counts)
            locator.lines.setdefault(table, number)
            continue
        assign = _ASSIGN.match(raw)
        if assign:
            key = (*table, *(_unquote(p) for p in assign.group(1).split(".")))
            locator.lines.setdefault(key, number)
    return locator


def _indexed(parts: tuple[str, ...], counts: dict[Key, int]) -> Key:
    """A sub-table of an array of tables (`[steps.agent]`) belongs to its latest element."""
    for end in range(len(parts), 0, -1):
        prefix = parts[:end]
        if prefix in counts:
            return (*prefix, counts[prefix] - 1, *parts[end:])
    return parts


def _unquote(part: str) -> str:
    part = part.strip()
    return part[1:-1] if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'" else part
