"""A small TOML writer for task.toml: scalars, arrays of scalars or inline tables, tables and arrays of tables."""

from __future__ import annotations

import json
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_CONTROL = re.compile("[\x7f\ud800-\udfff]")


def dumps(data: dict) -> str:
    """TOML text for data (keys in insertion order; tables after the scalars of their parent)."""
    lines: list[str] = []
    _table(data, (), lines)
    return "\n".join(lines).strip("\n") + "\n"


def _key(key: str) -> str:
    return key if _BARE.match(key) else _string(key)


def _string(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04X}", json.dumps(text, ensure_ascii=False))


def value(item: object) -> str:
    """A TOML value: string, integer, float, boolean, array or inline table."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        return repr(item)
    if isinstance(item, str):
        return _string(item)
    if isinstance(item, list):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, dict):
        return "{ " + ", ".join(f"{_key(k)} = {value(v)}" for k, v in item.items()) + " }" if item else "{}"
    raise TypeError(f"cannot write {item!r} as TOML")


def _is_table_array(item: object) -> bool:
    return isinstance(item, list) and bool(item) and all(isinstance(v, dict) for v in item)


def _table(data: dict, path: tuple[str, ...], lines: list[str]) -> None:
    for key, item in data.items():
        if not isinstance(item, dict) and not _is_table_array(item):
            lines.append(f"{_key(key)} = {value(item)}")
    for key, item in data.items():
        here = (*path, key)
        name = ".".join(_key(p) for p in here)
        if isinstance(item, dict):
            lines += ["", f"[{name}]"]
            _table(item, here, lines)
        elif _is_table_array(item):
            for element in item:
                lines += ["", f"[[{name}]]"]
                _table(element, here, lines)
