"""The prompt body: `## ` sections, `{{ instance.KEY }}` placeholders and rendering."""

from __future__ import annotations

import re
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
INSTANCE_KEY = re.compile(r"^\s*instance\.([A-Za-z_][A-Za-z0-9_]*)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_SECTION = re.compile(r"^##\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Section:
    """A `## ` section: its heading, its text, and the 1-based line of the heading within the body."""

    heading: str
    text: str
    line: int


@dataclass(frozen=True)
class Placeholder:
    """A `{{ … }}` occurrence; `key` is set when it is a valid `instance.KEY` reference."""

    raw: str
    key: str | None
    line: int


def split_sections(body: str) -> tuple[str, list[Section]]:
    """Return the preamble (text before the first `## ` heading) and the sections, ignoring fenced code."""
    preamble: list[str] = []
    sections: list[tuple[str, int, list[str]]] = []
    in_fence = False
    for number, line in enumerate(body.split("\n"), start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _SECTION.match(line)
        if match:
            sections.append((match.group(1), number, []))
        elif sections:
            sections[-1][2].append(line)
        else:
            preamble.append(line)
    return "\n".join(preamble).strip(), [Section(h, "\n".join(t).strip(), n) for h, n, t in sections]


def placeholders(text: str) -> list[Placeholder]:
    """Every `{{ … }}` in text with its 1-based line."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        key = INSTANCE_KEY.match(match.group(1))
        found.append(Placeholder(match.group(0), key.group(1) if key else None, text.count("\n", 0, match.start()) + 1))
    return found


class MissingValue(KeyError):
    """The prompt needs an instance value the generator did not print."""


def render(text: str, values: dict[str, object]) -> str:
    """Fill `{{ instance.KEY }}` from values. Raises MissingValue naming the first missing key."""

    def fill(match: re.Match[str]) -> str:
        key = INSTANCE_KEY.match(match.group(1))
        if key is None:
            return match.group(0)
        if key.group(1) not in values:
            raise MissingValue(key.group(1))
        return str(values[key.group(1)])

    return PLACEHOLDER.sub(fill, text)
