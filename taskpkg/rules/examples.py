"""A rule's examples: changes to the valid base package that make it fail or pass, shown in docs and run by tests.

The base package is the one `arena new NAME --domain finance` makes, with its TODO(arena) placeholders filled in. A
change that expects text in the base (Replace, Keep) fails loudly when the text is not there, so an example can never
silently stop showing what it documents. Rules that no package can show (the arena's or the engine's own faults)
describe a situation instead and name the test that produces it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Change(Protocol):
    """One edit to a package."""

    path: str

    def apply(self, root: Path) -> None:
        """Make the change in the package at root."""

    def describe(self) -> tuple[str, str]:
        """(where, text) to show a reader: the file it touches and what that file then holds."""


def visible(text: str | bytes) -> str:
    """Text as a reader should see it: bytes that are not UTF-8 and invisible characters (a byte-order mark, a
    carriage return, control characters) escaped; line breaks and tabs kept."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="backslashreplace")
    shown = "".join(c if c.isprintable() or c in "\n\t" else c.encode("unicode_escape").decode("ascii") for c in text)
    return shown.rstrip("\n")


def _read(root: Path, path: str, expected: str) -> str:
    text = (root / path).read_text(encoding="utf-8")
    if expected not in text:
        raise AssertionError(f"{expected!r} is not in {path} of the base package: update the rule's example")
    return text


@dataclass(frozen=True)
class Write:
    """Write a whole file (made with its folders)."""

    path: str
    content: str | bytes

    def apply(self, root: Path) -> None:
        target = root / self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = self.content if isinstance(self.content, bytes) else self.content.encode("utf-8")
        target.write_bytes(data)

    def describe(self) -> tuple[str, str]:
        return self.path, visible(self.content)


@dataclass(frozen=True)
class Replace:
    """Replace text of a base file: the first occurrence, or every one. `shown` is what a reader sees, if not `new`."""

    path: str
    old: str
    new: str
    every: bool = False
    shown: str = ""

    def apply(self, root: Path) -> None:
        text = _read(root, self.path, self.old)
        (root / self.path).write_bytes(text.replace(self.old, self.new, -1 if self.every else 1).encode("utf-8"))

    def describe(self) -> tuple[str, str]:
        return self.path, self.shown or visible(self.new)


@dataclass(frozen=True)
class Append:
    """Add lines at the end of a base file."""

    path: str
    text: str

    def apply(self, root: Path) -> None:
        target = root / self.path
        target.write_text(target.read_text(encoding="utf-8").rstrip("\n") + "\n" + self.text, encoding="utf-8")

    def describe(self) -> tuple[str, str]:
        return f"{self.path} (at the end)", visible(self.text)


@dataclass(frozen=True)
class Keep:
    """Change nothing: the base file already holds `text`, which is what a reader is shown."""

    path: str
    text: str

    def apply(self, root: Path) -> None:
        _read(root, self.path, self.text)

    def describe(self) -> tuple[str, str]:
        return self.path, visible(self.text)


@dataclass(frozen=True)
class Remove:
    """Delete a file or folder of the base package; "." deletes the package folder itself."""

    path: str

    def apply(self, root: Path) -> None:
        target = root / self.path
        shutil.rmtree(target) if target.is_dir() else target.unlink()

    def describe(self) -> tuple[str, str]:
        if self.path == ".":
            return "(the package folder)", "(absent: `arena check environments/nowhere`)"
        return self.path, "(absent)"


@dataclass(frozen=True)
class Copy:
    """Copy a file of the base package to another place in it."""

    source: str
    path: str

    def apply(self, root: Path) -> None:
        (root / self.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / self.source, root / self.path)

    def describe(self) -> tuple[str, str]:
        return self.path, f"(a copy of {self.source})"


@dataclass(frozen=True)
class Link:
    """A symbolic link."""

    path: str
    target: str

    def apply(self, root: Path) -> None:
        os.symlink(self.target, root / self.path)

    def describe(self) -> tuple[str, str]:
        return self.path, f"(a symbolic link to {self.target})"


@dataclass(frozen=True)
class Fifo:
    """A named pipe, standing for every special file (pipes, sockets, devices)."""

    path: str

    def apply(self, root: Path) -> None:
        os.mkfifo(root / self.path)

    def describe(self) -> tuple[str, str]:
        return self.path, "(a named pipe)"


@dataclass(frozen=True)
class Grow:
    """A file of `size` bytes (sparse, so it costs no disk)."""

    path: str
    size: int

    def apply(self, root: Path) -> None:
        with (root / self.path).open("wb") as handle:
            handle.truncate(self.size)

    def describe(self) -> tuple[str, str]:
        return self.path, f"({self.size // 2**20} MiB of data)"


@dataclass(frozen=True)
class Example:
    """A package that shows a rule: the base package with `changes` made, and for dynamic rules the tamper `probes`
    to run besides the core trials, on `instances` instances. An example no package can show has a `situation`
    instead, and `tested_by` names the test (tests/FILE.py::NAME) that creates the situation and asserts the rule."""

    changes: tuple[Change, ...] = ()
    probes: tuple[str, ...] = ()
    situation: str = ""
    tested_by: str = ""
    instances: int = 1

    def __post_init__(self) -> None:
        if bool(self.situation) != bool(self.tested_by) or (self.situation and self.changes):
            raise ValueError("an example is either changes to the base package, or a situation with the test that "
                             "makes it")

    def apply(self, root: Path) -> None:
        """Make the example's changes to a copy of the base package at root."""
        if self.situation:
            raise ValueError(f"this example is a situation, not a package: {self.situation}")
        for change in self.changes:
            change.apply(root)

    @property
    def unchanged(self) -> bool:
        """Whether the example is the base package itself (only Keep changes)."""
        return not self.situation and all(isinstance(change, Keep) for change in self.changes)


def example(*changes: Change, probes: tuple[str, ...] = (), instances: int = 1) -> Example:
    """An example made of changes to the base package (dynamic: run with `probes`, on `instances` instances)."""
    return Example(tuple(changes), probes, instances=instances)


def situation(text: str, tested_by: str) -> Example:
    """An example no package can show, and the test that makes it."""
    return Example(situation=text, tested_by=tested_by)
