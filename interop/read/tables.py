"""Reading a foreign config table: typed values with their places, and every key nobody asked for reported."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from interop.source_task import InteropError, SourceTask
from taskpkg import strict_yaml

Key = tuple[str | int, ...]
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.-]+)\s*=")


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


def yaml_table(file: str, text: str, first_line: int) -> tuple[dict, Locator]:
    """YAML read by taskpkg's strict reader (no aliases, tags, merge keys or duplicate keys: a hostile file cannot
    grow), as a mapping with the line of every key; `first_line` is the file's line where the YAML text starts."""
    try:
        document = strict_yaml.load(text)
    except strict_yaml.StrictYamlError as exc:
        line = exc.line + first_line - 1 if exc.line is not None else None
        raise InteropError(file, exc.message, exc.fix, line) from None
    if document.data is None:
        return {}, Locator(file)
    if not isinstance(document.data, dict):
        raise InteropError(file, "is not a mapping of keys", "Write `key: value` lines.", first_line)
    return document.data, Locator(file, {path: line + first_line - 1 for path, line in document.lines.items()})


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


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG])B?\s*$", re.IGNORECASE)
_MB = {"K": 1 / 1024, "M": 1, "G": 1024}


class Table:
    """One mapping of the source config; `get` marks keys as read, `report_unread` lists the rest as unmapped."""

    def __init__(self, data: Any, path: Key, locator: Locator, source: SourceTask) -> None:
        if data is not None and not isinstance(data, dict):
            raise InteropError(locator.file, f"'{dotted(path)}' must be a table of keys", "Fix its form.",
                               locator.line(path))
        self.data: dict = data or {}
        self.path = path
        self.locator = locator
        self.source = source
        self.read: set[str] = set()

    def where(self, key: str | None = None) -> str:
        """`file:line` of a key of this table (or of the table)."""
        return self.locator.where((*self.path, key) if key else self.path)

    def has(self, key: str) -> bool:
        """Whether the key is present (and not null)."""
        return self.data.get(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        """The raw value of a key (marked as read)."""
        self.read.add(key)
        value = self.data.get(key)
        return default if value is None else value

    def items(self, key: str) -> list:
        """A list value (empty when absent); a single value stands for a list of one (`tags = "x"`)."""
        value = self.get(key, [])
        return value if isinstance(value, list) else [value]

    def array(self, key: str) -> list:
        """A value that must be a list (empty when absent); InteropError naming the key otherwise."""
        value = self.get(key, [])
        if not isinstance(value, list):
            raise InteropError(self.locator.file, f"'{dotted((*self.path, key))}' is {value!r}, not a list",
                               "Give a list ([...] or [[...]] tables).", self.locator.line((*self.path, key)))
        return value

    def table(self, key: str) -> Table:
        """A sub-table (empty when absent)."""
        return Table(self.get(key), (*self.path, key), self.locator, self.source)

    def number(self, key: str) -> float | None:
        """A positive number (int or float), or None when absent."""
        value = self.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise InteropError(self.locator.file, f"'{dotted((*self.path, key))}' is {value!r}, not a positive number",
                               "Give a positive number.", self.locator.line((*self.path, key)))
        return float(value)

    def size_mb(self, key: str, legacy: str) -> float | None:
        """A size in MiB from `key` (a number) or the legacy `legacy` string such as '2G'."""
        if self.has(key):
            return self.number(key)
        text = self.get(legacy)
        if text is None:
            return None
        match = _SIZE.match(str(text))
        if not match:
            raise InteropError(self.locator.file, f"'{dotted((*self.path, legacy))}' is {text!r}, not a size",
                               "Write e.g. 2G or 512M, or use the *_mb key.", self.locator.line((*self.path, legacy)))
        return float(match.group(1)) * _MB[match.group(2).upper()]

    def text(self, key: str) -> str | None:
        """A string value, or None."""
        value = self.get(key)
        return None if value is None else str(value)

    def lose(self, key: str, what: str) -> None:
        """Report a present key the native package does not carry."""
        self.read.add(key)
        if self.has(key) and self.data[key] not in ({}, []):
            self.source.lost(self.where(key), f"{dotted((*self.path, key))} {what}")

    def report_unread(self, what: str = "is not part of the arena's format; ignored") -> None:
        """Report every key nobody read."""
        for key in self.data:
            if key not in self.read:
                self.source.lost(self.where(key), f"unknown key '{dotted((*self.path, key))}' {what}")


def dotted(path: Key) -> str:
    """`a.b[0].c` for a key path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
