"""Render native frontmatter as YAML the strict parser accepts, in the layout of the bundled packages."""

from __future__ import annotations

import json
import re

Path = tuple[str | int, ...]
FLOW_MAPPINGS = frozenset({"network"})
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9 _./()+@'-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def scalar(value: object) -> str:
    """A YAML scalar: plain when unambiguous, else a double-quoted string."""
    if isinstance(value, bool) or value is None:
        raise TypeError(f"unexpected frontmatter value {value!r}")
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and not text.endswith(" ") and text.lower() not in _YAML_WORDS and " '" not in text:
        return text
    return quoted(text)


def quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes plus \\u escapes for characters YAML will not take raw)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(text, ensure_ascii=False))


def render(data: dict, comments: dict[Path, str], quote: frozenset[str] = frozenset({"version"})) -> str:
    """The frontmatter text (without the `---` fences); comments are placed after the values they belong to."""
    lines: list[str] = []
    _mapping(data, (), 0, lines, comments, quote)
    return "\n".join(lines) + "\n"


def _note(comments: dict[Path, str], path: Path) -> str:
    return f"  # {comments[path]}" if path in comments else ""


def _value(value: object, key: str, quote: frozenset[str]) -> str:
    return quoted(str(value)) if key in quote else scalar(value)


def _flow(item: dict) -> str:
    return "{" + ", ".join(f"{k}: {scalar(v)}" for k, v in item.items()) + "}"


def _commented(comments: dict[Path, str], path: Path) -> bool:
    return any(p[: len(path)] == path for p in comments)


def _mapping(data: dict, path: Path, indent: int, lines: list[str], comments: dict[Path, str],
             quote: frozenset[str]) -> None:
    pad = " " * indent
    for key, value in data.items():
        here = (*path, key)
        if isinstance(value, dict):
            if key in FLOW_MAPPINGS and not _commented(comments, here):
                lines.append(f"{pad}{key}: {_flow(value)}")
            else:
                lines.append(f"{pad}{key}:{_note(comments, here)}")
                _mapping(value, here, indent + 2, lines, comments, quote)
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value) and value:
            lines.append(f"{pad}{key}:{_note(comments, here)}")
            for index, item in enumerate(value):
                _list_item(item, (*here, index), indent + 2, lines, comments, quote)
        elif isinstance(value, list):
            lines.append(f"{pad}{key}: [{', '.join(scalar(v) for v in value)}]{_note(comments, here)}")
        else:
            lines.append(f"{pad}{key}: {_value(value, key, quote)}{_note(comments, here)}")


def _list_item(item: dict, path: Path, indent: int, lines: list[str], comments: dict[Path, str],
               quote: frozenset[str]) -> None:
    pad = " " * indent
    if not _commented(comments, path):
        lines.append(f"{pad}- {_flow(item)}")
        return
    for number, (key, value) in enumerate(item.items()):
        lead = "- " if number == 0 else "  "
        lines.append(f"{pad}{lead}{key}: {_value(value, key, quote)}{_note(comments, (*path, key))}")
