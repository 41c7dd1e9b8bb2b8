"""Guarded install fallbacks in the copied tests, resolved at import: the tools they install go into the image at
build time (pinned, by interop.write.pins), the guard's switch is set for the verifier, and the installing branch is
commented out line by line, so the verifier needs no network (interop.map.guards says which guards are read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from interop.files import relative_to, walk_files
from interop.map.findings import SHELL_SUFFIXES, installed_tools
from interop.map.guards import GuardedInstall, guarded_installs
from interop.source_task import SourceTask
from taskpkg.installs import is_pinned, requirement_name

MARK = ": # arena import, installed at build time instead:"


@dataclass
class ToolsToBake:
    """What the image must install for the tests: Python requirements by project name, Debian packages, the switches
    to set for the verifier, and the places they came from."""

    python: dict[str, str] = field(default_factory=dict)
    debian: list[str] = field(default_factory=list)
    switches: dict[str, str] = field(default_factory=dict)
    places: list[str] = field(default_factory=list)

    def add_python(self, requirement: str) -> None:
        """Add a requirement; a pinned one wins over an unpinned one of the same project."""
        name = requirement_name(requirement)
        if name and (name not in self.python or (is_pinned(requirement) and not is_pinned(self.python[name]))):
            self.python[name] = requirement


def resolve_fallbacks(source: SourceTask, folder: Path, data: Path) -> ToolsToBake:
    """Neutralise every resolvable guarded fallback in the test scripts under data; return what the image must
    install instead (tools the Dockerfile already installs are left out)."""
    installed = installed_tools((folder / "environment" / "Dockerfile").read_text(encoding="utf-8", errors="replace"))
    bake = ToolsToBake()
    for path in walk_files(data, folder):
        if path.suffix not in SHELL_SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = text.split("\n")
        where = relative_to(path, folder)
        for fallback in guarded_installs(text):
            if not _resolvable(fallback, installed, source, where):
                continue
            for index in range(fallback.first - 1, fallback.last):
                indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
                lines[index] = f"{indent}{MARK} {lines[index].strip()}" if lines[index].strip() else lines[index]
            _record(bake, fallback, installed, source, where)
        if any(MARK in line for line in lines):
            path.write_text("\n".join(lines), encoding="utf-8")
    return bake


def _resolvable(fallback: GuardedInstall, installed: dict[str, int], source: SourceTask, where: str) -> bool:
    """Whether the image can stand in for the branch: it does nothing else than install, and either the guard has a
    switch to set or every tool the guard asks for will be there."""
    span = _span(where, fallback)
    if fallback.blockers:
        source.todo(span, f"the install fallback behind `{fallback.guard}` (line {fallback.guard_line}) stays: "
                    f"{'; '.join(fallback.blockers)}; install what it needs in environment/Dockerfile and delete it")
        return False
    if not fallback.resolvable:
        return False
    provided = set(installed) | {requirement_name(r) for r in fallback.python} | set(fallback.debian)
    missing = [tool for tool in fallback.tools if tool.lower() not in provided]
    if fallback.switch is None and missing:
        source.todo(span, f"the install fallback behind `{fallback.guard}` (line {fallback.guard_line}) stays: it "
                    f"installs no {', '.join(missing)}; install it in environment/Dockerfile and delete the branch")
        return False
    return True


def _record(bake: ToolsToBake, fallback: GuardedInstall, installed: dict[str, int], source: SourceTask,
            where: str) -> None:
    own = ToolsToBake()
    for requirement in fallback.python:
        own.add_python(requirement)
    new = [r for name, r in own.python.items() if name not in installed]
    new_debian = [p for p in fallback.debian if p not in installed]
    for requirement in new:
        bake.add_python(requirement)
    bake.debian += [p for p in new_debian if p not in bake.debian]
    if fallback.switch:
        bake.switches[fallback.switch] = "1"
    span = _span(where, fallback)
    bake.places.append(span)
    already = sorted({requirement_name(r) for r in fallback.python} - {requirement_name(r) for r in new})
    parts = [f"environment/Dockerfile installs {', '.join(new + new_debian)} at build time" if new + new_debian else "",
             f"environment/Dockerfile already installs {', '.join(already)}" if already else "",
             f"verifier.py sets {fallback.switch}=1 for the tests" if fallback.switch else ""]
    source.mapped(span, f"the install fallback behind `{fallback.guard}` (line {fallback.guard_line}) is resolved "
                  f"at import: {'; '.join(p for p in parts if p)}; the branch is commented out, so the tests need "
                  "no network")


def _span(where: str, fallback: GuardedInstall) -> str:
    """`file:first-last`, or `file:line` for a branch of one line."""
    lines = str(fallback.first) if fallback.first == fallback.last else f"{fallback.first}-{fallback.last}"
    return f"{where}:{lines}"
