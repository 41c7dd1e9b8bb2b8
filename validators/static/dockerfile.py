"""Dockerfile checks: pinned bases and packages, no remote code, nothing secret copied into the image."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from taskpkg.diagnostics import Diagnostic
from taskpkg.model import TaskPackage
from taskpkg.rules.dockerfile import (
    ARENA401,
    ARENA402,
    ARENA403,
    ARENA404,
    ARENA405,
    ARENA406,
    ARENA407,
    ARENA408,
)
from taskpkg.shared_files import shared_reason
from validators.static.files import PackageFile, PackageTree

RULES = (ARENA401, ARENA402, ARENA403, ARENA404, ARENA405, ARENA406, ARENA407, ARENA408)
DOCKERFILE = "environment/Dockerfile"
PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(?P<args>[^;&|]*)")
APT_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b(?P<args>[^;&|]*)")
# Options of pip and `uv pip install` that take a value (the next word is not a package).
PIP_OPTIONS_WITH_VALUE = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
    "--target", "-t", "--prefix", "--root", "--src", "-e", "--editable", "--python", "-p", "--python-version",
    "--platform", "--python-platform", "--implementation", "--abi", "--trusted-host", "--index", "--default-index",
    "--index-strategy", "--keyring-provider", "--cache-dir", "--cert", "--client-cert", "--proxy", "--timeout",
    "--retries", "--log", "--progress-bar", "--upgrade-strategy", "--only-binary", "--no-binary", "--report",
    "--exists-action", "--config-settings", "-C", "--config-setting", "--override", "--build-constraint", "-b",
    "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--reinstall-package", "--upgrade-package",
    "-P", "--refresh-package", "--no-build-package", "--no-binary-package", "--only-binary-package", "--group",
    "--extra", "--torch-backend", "--directory", "--project", "--config-file",
})
_LOCAL_SOURCE = re.compile(r"^(?:\.{1,2}(?:/|$)|/|~|file:|git\+|https?://)|\.(?:whl|tar\.gz|zip)$")
_REDIRECT = re.compile(r"^\d*[<>]")


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction with its 1-based starting line."""

    keyword: str
    arguments: str
    line: int


def parse(text: str) -> list[Instruction]:
    """Split a Dockerfile into instructions, joining continuation lines and dropping comments."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        joined = " ".join(p for p in pending if p)
        keyword, _, arguments = joined.partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip(), start))
        pending = []
    return instructions


def check_dockerfile(tree: PackageTree, package: TaskPackage | None) -> list[Diagnostic]:
    """Run every Dockerfile check (nothing when the Dockerfile is missing: the file checks report that)."""
    text = tree.text_of(DOCKERFILE)
    if text is None:
        return []
    instructions = parse(text)
    found: list[Diagnostic] = []
    stages: set[str] = set()
    if not any(i.keyword == "FROM" for i in instructions):
        found.append(ARENA408.found(DOCKERFILE, 1, case="missing"))
    for instruction in instructions:
        if instruction.keyword == "FROM":
            found.extend(_check_from(instruction, stages))
        elif instruction.keyword == "RUN":
            found.extend(_check_run(tree, instruction))
        elif instruction.keyword == "ADD" and re.search(r"(?:^|\s)(?:https?|ftp)://", instruction.arguments):
            found.append(ARENA405.found(DOCKERFILE, instruction.line))
        elif instruction.keyword in ("CMD", "ENTRYPOINT") and PIPE_TO_SHELL.search(instruction.arguments):
            found.append(pipe_to_shell_finding(DOCKERFILE, instruction.line, "at run time"))
    found.extend(_check_environment_scripts(tree.files))
    if package is not None:
        found.extend(_check_copied_secrets(package, tree.files))
    return found


def _check_from(instruction: Instruction, stages: set[str]) -> list[Diagnostic]:
    words = [w for w in instruction.arguments.split() if not w.startswith("--")]
    if not words:
        return [ARENA408.found(DOCKERFILE, instruction.line, case="empty")]
    image = words[0]
    if len(words) >= 3 and words[1].upper() == "AS":
        stages.add(words[2].lower())
    if image == "scratch" or image.lower() in stages:
        return []
    name, _, digest = image.partition("@")
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else None
    unpinned = ("argument" if "$" in image else None if digest else "untagged" if tag is None
                else "latest" if tag == "latest" else None)
    if unpinned:
        return [ARENA401.found(DOCKERFILE, instruction.line, case=unpinned, image=image)]
    if not digest:
        return [ARENA402.found(DOCKERFILE, instruction.line, image=image)]
    return []


def _check_run(tree: PackageTree, instruction: Instruction) -> list[Diagnostic]:
    found = []
    command = instruction.arguments
    if PIPE_TO_SHELL.search(command):
        found.append(pipe_to_shell_finding(DOCKERFILE, instruction.line, "while building"))
    for match in PIP_INSTALL.finditer(command):
        for problem in _unpinned_pip(tree, match.group("args")):
            found.append(problem(DOCKERFILE, instruction.line))
    for match in APT_INSTALL.finditer(command):
        words = [w for w in _split(match.group("args")) if not w.startswith("-")]
        loose = [w for w in words if "=" not in w]
        if loose:
            found.append(ARENA404.found(DOCKERFILE, instruction.line, packages=", ".join(loose[:8])))
    return found


def _unpinned_pip(tree: PackageTree, arguments: str) -> list[Callable[[str, int], Diagnostic]]:
    """ARENA403 findings still to be placed (at the Dockerfile line that installs), one per unpinned package."""
    problems: list[Callable[[str, int], Diagnostic]] = []
    words = _split(arguments)
    index = 0
    while index < len(words):
        word = words[index]
        if word in PIP_OPTIONS_WITH_VALUE:
            if word in ("-r", "--requirement") and index + 1 < len(words):
                problems.extend(_unpinned_requirements(tree, words[index + 1]))
            index += 2
            continue
        if _REDIRECT.match(word):
            break
        if not word.startswith("-") and "==" not in word and not _LOCAL_SOURCE.search(word) and "@" not in word:
            problems.append(partial(ARENA403.found, case="package", package=word))
        index += 1
    return problems


def _unpinned_requirements(tree: PackageTree, name: str) -> list[Callable[[str, int], Diagnostic]]:
    text = tree.text_of(f"environment/{name}")
    if text is None:
        return []
    problems: list[Callable[[str, int], Diagnostic]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        requirement = line.split("#", 1)[0].strip()
        if requirement and not requirement.startswith("-") and "==" not in requirement:
            problems.append(partial(ARENA403.found, case="requirement", path=f"environment/{name}", number=number,
                                    requirement=requirement))
    return problems


def _split(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def pipe_to_shell_finding(file: str, line: int, when: str) -> Diagnostic:
    """ARENA407 at a place; `when` says when the download would run ("while building", ...)."""
    return ARENA407.found(file, line, when=when)


def _check_environment_scripts(files: list[PackageFile]) -> list[Diagnostic]:
    found = []
    for file in files:
        if file.relative.startswith("environment/") and file.relative.endswith(".sh") and file.text:
            for number, line in enumerate(file.text.split("\n"), start=1):
                if PIPE_TO_SHELL.search(line):
                    found.append(pipe_to_shell_finding(file.relative, number, "in a script of the image"))
    return found


def _check_copied_secrets(package: TaskPackage, files: list[PackageFile]) -> list[Diagnostic]:
    """Files in the build context that are the verifier, oracle, generator or verifier data (same name or bytes)."""
    hidden_roots = package.hidden_paths()
    hidden: dict[str, str] = {}
    for file in files:
        if file.relative.startswith("environment/"):
            continue
        if file.size and any(file.relative == h or file.relative.startswith(h + "/") for h in hidden_roots):
            hidden[file.digest] = file.relative
    found = []
    for file in files:
        if not file.relative.startswith("environment/"):
            continue
        copy_of = hidden.get(file.digest) if file.size else None
        if copy_of and shared_reason(package, copy_of, file.relative):
            continue
        if copy_of or file.relative.rsplit("/", 1)[-1] == "verifier.py":
            found.append(ARENA406.found(file.relative, case="copy", path=file.relative, source=copy_of) if copy_of
                         else ARENA406.found(file.relative, case="verifier", path=file.relative))
    return found

