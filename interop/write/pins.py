"""Pins at import: every Python package environment/Dockerfile installs without an exact version is pinned to the
newest version that satisfies the source's constraint, and the tools the tests installed at verification time are
installed at build time, pinned the same way.

Versions come from pip's own resolver, run once for all of them (`pip install --dry-run --report --no-deps`: the
named packages only, whose dependencies the image's own install resolves; wheels only, so no package code runs here)
against whatever registry pip is configured for, for the Python of the base image where the image names it. Where no
registry answers, the package is left as it is and the report's to-do names it (the static check's ARENA403 points at
the same line).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from interop.dockerfile_facts import DockerfileFacts, facts
from interop.source_task import SourceTask
from interop.write.fallbacks import ToolsToBake
from taskpkg.dockerfile_reader import parse, run_scripts
from taskpkg.installs import PIP_INSTALL, is_pinned, pip_arguments, requirement_name

DOCKERFILE = "environment/Dockerfile"
BAKE_START = "# >>> arena import: the tools the tests installed at verification time"
BAKE_END = "# <<< arena import"
RESOLVE_TIMEOUT_S = 300
# The Python a base image ships (python:X.Y, and the Debian and Ubuntu releases), for the resolver.
DISTRIBUTION_PYTHON = {"ubuntu:20.04": "3.8", "ubuntu:22.04": "3.10", "ubuntu:24.04": "3.12", "ubuntu:26.04": "3.13",
                       "debian:11": "3.9", "debian:bullseye": "3.9", "debian:12": "3.11", "debian:bookworm": "3.11",
                       "debian:13": "3.13", "debian:trixie": "3.13"}
_PYTHON_IMAGE = re.compile(r"(?:^|/)python:(?P<version>3\.\d+)")
_HAS_PIP = re.compile(r"\bpip3?\s+install\b|python3?\s+-m\s+pip\b|\bpython3-pip\b|\bensurepip\b")
_HAS_APT = re.compile(r"\bapt(?:-get)?\s")


def base_python(base: str | None) -> str | None:
    """The Python version of a base image, where the image's name says it."""
    if not base:
        return None
    match = _PYTHON_IMAGE.search(base)
    if match:
        return match.group("version")
    name = base.split("@", 1)[0].rsplit("/", 1)[-1]
    image, _, tag = name.partition(":")
    return DISTRIBUTION_PYTHON.get(f"{image}:{tag.split('-', 1)[0]}")


def resolve(requirements: list[str], python: str | None) -> dict[str, str]:
    """{project name: version} for the requirements pip's resolver could satisfy (the newest that fits each
    constraint, with wheels for `python`); names it could not resolve are missing."""
    if not requirements:
        return {}
    found = _pip_resolve(requirements, python)
    if found is None and len(requirements) > 1:  # one unresolvable package must not cost the others their pins
        found = {}
        for requirement in requirements:
            found.update(_pip_resolve([requirement], python) or {})
    return found or {}


def _pip_resolve(requirements: list[str], python: str | None) -> dict[str, str] | None:
    with tempfile.TemporaryDirectory(prefix="arena-pins-") as scratch:
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
                   "--only-binary=:all:", "--quiet", "--report", "-", "--target", str(Path(scratch) / "target"),
                   "--retries", "1", "--timeout", "15", "--disable-pip-version-check", "--no-input",
                   *(["--python-version", python] if python else []), *requirements]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, check=False)
            report = json.loads(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
            return None
    if not isinstance(report, dict):
        return None
    wanted = {requirement_name(r) for r in requirements}
    return {requirement_name(item["metadata"]["name"]): item["metadata"]["version"]
            for item in report.get("install", []) if requirement_name(item["metadata"]["name"]) in wanted}


def unpinned_in(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, requirement) of every package a RUN line or heredoc installs with pip unpinned."""
    found = []
    for instruction in parse(text).instructions:
        if instruction.keyword != "RUN":
            continue
        for script in run_scripts(instruction):
            for line, command in script.lines():
                last = instruction.end_line if script.joined else line
                for match in PIP_INSTALL.finditer(command):
                    found += [(line, last, word) for word in pip_arguments(match.group("args"))[0]
                              if not is_pinned(word) and not word.startswith("$") and requirement_name(word)]
    return found


def settle_image(source: SourceTask, folder: Path, bake: ToolsToBake) -> None:
    """Pin environment/Dockerfile's unpinned pip installs and append the tools to bake, in one resolution."""
    dockerfile = folder / DOCKERFILE
    text = dockerfile.read_text(encoding="utf-8")
    loose = unpinned_in(text)
    wanted = [word for _, _, word in loose] + [r for r in bake.python.values() if not is_pinned(r)]
    found = facts(text)
    python = base_python(found.base)
    versions = resolve(list(dict.fromkeys(wanted)), python)
    lines = text.split("\n")
    for first, last, word in loose:
        _pin_line(source, lines, first, last, word, versions, python)
    text = "\n".join(lines)
    if bake.python or bake.debian:
        text = _append_bake(source, text, bake, versions, found)
    dockerfile.write_text(text, encoding="utf-8")


def _pinned(requirement: str, versions: dict[str, str]) -> str | None:
    """requirement pinned to its resolved version (extras kept), or None when it has none."""
    version = versions.get(requirement_name(requirement))
    head = re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?", requirement)
    return f"{head.group(0)}=={version}" if version and head else None


def _pin_line(source: SourceTask, lines: list[str], first: int, last: int, word: str, versions: dict[str, str],
              python: str | None) -> None:
    where = f"{DOCKERFILE}:{first}"
    pinned = _pinned(word, versions)
    token = re.compile(rf"(?<![\w.=<>~!\[-]){re.escape(word)}(?![\w.=<>~!\[\],-])")
    for index in range(first - 1, min(last, len(lines))):
        if pinned and token.search(lines[index]):
            lines[index] = token.sub(lambda _: pinned, lines[index], count=1)
            source.mapped(where, f"pip installs {word!r} without an exact version: pinned to {pinned}, the newest "
                          f"that satisfies it{_for(python)} (pip's resolver, at import)")
            return
    source.todo(where, f"pip installs {word!r} without an exact version, and pip's resolver found none to pin it to "
                "(no registry answered, or no release fits): pin it (NAME==VERSION) so rebuilds are identical")


def _append_bake(source: SourceTask, text: str, bake: ToolsToBake, versions: dict[str, str],
                 found: DockerfileFacts) -> str:
    """The bake block at the end of the Dockerfile: as root, pip (and apt) installs, then the image's USER again."""
    python = [_pinned(r, versions) or r for r in bake.python.values()]
    debian = list(bake.debian)
    lines = [f"{BAKE_START} ({', '.join(bake.places)}),", "# installed at build time: the verifier has no network."]
    if found.user and found.user not in ("root", "0"):
        lines.append("USER root")
    if python and not (_HAS_PIP.search(text) or _PYTHON_IMAGE.search(found.base or "")):
        if _HAS_APT.search(text) or re.match(r"^(?:[\w.-]+/)*(?:debian|ubuntu)[:@]", found.base or ""):
            debian.append("python3-pip")
        else:
            source.todo(DOCKERFILE, "the image may lack pip, which installs the tools the tests need: install it "
                        "before the arena import block")
    if debian:
        lines.append("RUN apt-get update && apt-get install -y --no-install-recommends " + " ".join(debian)
                     + " && rm -rf /var/lib/apt/lists/*")
    pip_line = text.rstrip("\n").count("\n") + 2 + len(lines)  # where the pip line lands in the Dockerfile
    if python:
        lines.append("RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir " + " ".join(python))
    if found.user and found.user not in ("root", "0"):
        lines.append(f"USER {found.user}")
    lines.append(BAKE_END)
    for requirement in python:
        if not is_pinned(requirement):
            source.todo(f"{DOCKERFILE}:{pip_line}", f"the tests need {requirement!r}, which pip's resolver found no "
                        "version of to pin it to: pin it (NAME==VERSION)")
    return text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def _for(python: str | None) -> str:
    return f" for Python {python} (the base image's)" if python else " for this machine's Python"
