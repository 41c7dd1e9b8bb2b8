"""Dockerfile checks: pinned bases and packages, no remote code, nothing secret copied into the image.

The Dockerfile is read by taskpkg.dockerfile_reader. Install lines are checked wherever a RUN runs them: its command,
its heredoc scripts, and scripts put into the image by COPY, ADD or a heredoc that it runs (`sh /opt/install.sh`)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from functools import partial

from taskpkg.diagnostics import Diagnostic
from taskpkg.dockerfile_reader import (
    Dockerfile,
    Heredoc,
    Instruction,
    Script,
    executed_scripts,
    parse,
    run_scripts,
)
from taskpkg.installs import APT_INSTALL, PIP_INSTALL, PIPE_TO_SHELL, debian_packages, is_pinned, pip_arguments
from taskpkg.package import TaskPackage
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
from validators.registry import Needs, check
from validators.static.files import PackageFile, PackageTree

DOCKERFILE = "environment/Dockerfile"
CONTEXT = "environment/"
MAX_SCRIPT_DEPTH = 8


@check(ARENA401, ARENA402, ARENA403, ARENA404, ARENA405, ARENA407, ARENA408, needs=Needs.FOLDER)
def check_dockerfile(tree: PackageTree) -> list[Diagnostic]:
    """Run every Dockerfile check but the copied secrets' (nothing when the Dockerfile is missing: the file checks
    report that)."""
    text = tree.text_of(DOCKERFILE)
    if text is None:
        return []
    parsed = parse(text)
    found: list[Diagnostic] = []
    stages: set[str] = set()
    if not any(i.keyword == "FROM" for i in parsed.instructions):
        found.append(ARENA408.found(DOCKERFILE, 1, case="missing"))
    builder = _RunChecker(tree, parsed)
    for instruction in parsed.instructions:
        if instruction.keyword == "FROM":
            found.extend(_check_from(instruction, stages))
        elif instruction.keyword == "RUN":
            found.extend(builder.check(instruction))
        elif instruction.keyword == "ADD" and re.search(r"(?:^|\s)(?:https?|ftp)://", instruction.arguments):
            found.append(ARENA405.found(DOCKERFILE, instruction.line))
        elif instruction.keyword in ("CMD", "ENTRYPOINT") and PIPE_TO_SHELL.search(instruction.arguments):
            found.append(pipe_to_shell_finding(DOCKERFILE, instruction.line, "at run time"))
    found.extend(_check_environment_scripts(tree.files, builder.followed))
    return found


def _check_from(instruction: Instruction, stages: set[str]) -> list[Diagnostic]:
    _, words = instruction.words()
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


class _RunChecker:
    """Install-line checks on what RUN executes: its command, its heredoc scripts, and the scripts it runs that
    COPY, ADD or a heredoc put into the image (followed into the scripts they run in turn)."""

    def __init__(self, tree: PackageTree, parsed: Dockerfile) -> None:
        self.tree, self.parsed = tree, parsed
        self.context = {f.relative.removeprefix(CONTEXT) for f in tree.files if f.relative.startswith(CONTEXT)}
        self.followed: set[str] = set()

    def check(self, instruction: Instruction) -> list[Diagnostic]:
        """Findings for one RUN instruction and everything it runs."""
        found: list[Diagnostic] = []
        for script in run_scripts(instruction):
            found += self._script(script, instruction, instruction.workdir, "while building", set(), 0)
        return found

    def _script(self, script: Script, run: Instruction, workdir: str, when: str, seen: set[str],
                depth: int) -> list[Diagnostic]:
        file = script.file or DOCKERFILE
        found = []
        for line, text in script.lines():
            found += self._line(text, file, line, when, run)
            for path, kind, cwd in executed_scripts(text, workdir):
                source = self.parsed.source_of(path, run, self.context)
                key = source if isinstance(source, str) else f"{DOCKERFILE}:{getattr(source, 'first_line', '')}"
                if source is None or kind != "shell" or key in seen or depth >= MAX_SCRIPT_DEPTH:
                    continue
                seen.add(key)
                runs = f"while building (run by {DOCKERFILE}:{run.line})"
                if isinstance(source, str):
                    self.followed.add(CONTEXT + source)
                    followed = self.tree.text_of(CONTEXT + source)
                    if followed is not None:
                        found += self._script(Script(followed, CONTEXT + source, 1), run, cwd, runs, seen,
                                              depth + 1)
                else:
                    found += self._script(Script(source.body, None, source.first_line), run, cwd, runs, seen,
                                          depth + 1)
        return found

    def _line(self, command: str, file: str, line: int, when: str, run: Instruction) -> list[Diagnostic]:
        found = []
        if PIPE_TO_SHELL.search(command):
            found.append(pipe_to_shell_finding(file, line, when))
        for match in PIP_INSTALL.finditer(command):
            for problem in _unpinned_pip(self._requirements(run), match.group("args")):
                found.append(problem(file, line))
        for match in APT_INSTALL.finditer(command):
            loose = [w for w in debian_packages(match.group(0)) if "=" not in w]
            if loose:
                found.append(ARENA404.found(file, line, packages=", ".join(loose[:8])))
        return found

    def _requirements(self, run: Instruction) -> Callable[[str], tuple[str, str] | None]:
        """A requirements file named with -r: (package path, text), found where COPY put it, else in the context."""

        def read(name: str) -> tuple[str, str] | None:
            source = self.parsed.source_of(posixpath.join(run.workdir, name), run, self.context)
            relative = CONTEXT + (source if isinstance(source, str) else posixpath.normpath(name))
            text = source.body if isinstance(source, Heredoc) else self.tree.text_of(relative)
            return (relative if not isinstance(source, Heredoc) else DOCKERFILE, text) if text is not None else None

        return read


def _unpinned_pip(requirements: Callable[[str], tuple[str, str] | None],
                  arguments: str) -> list[Callable[[str, int], Diagnostic]]:
    """ARENA403 findings still to be placed (at the Dockerfile line that installs), one per unpinned package."""
    named, files = pip_arguments(arguments)
    problems: list[Callable[[str, int], Diagnostic]] = []
    for file in files:
        problems.extend(_unpinned_requirements(requirements(file)))
    problems += [partial(ARENA403.found, case="package", package=word) for word in named if not is_pinned(word)]
    return problems


def _unpinned_requirements(found: tuple[str, str] | None) -> list[Callable[[str, int], Diagnostic]]:
    if found is None:
        return []
    path, text = found
    problems: list[Callable[[str, int], Diagnostic]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        requirement = line.split("#", 1)[0].strip()
        if requirement and not requirement.startswith("-") and "==" not in requirement:
            problems.append(partial(ARENA403.found, case="requirement", path=path, number=number,
                                    requirement=requirement))
    return problems


def pipe_to_shell_finding(file: str, line: int, when: str) -> Diagnostic:
    """ARENA407 at a place; `when` says when the download would run ("while building", ...)."""
    return ARENA407.found(file, line, when=when)


def _check_environment_scripts(files: list[PackageFile], followed: set[str]) -> list[Diagnostic]:
    """Shell scripts of the build context that no RUN was seen to run (those are checked as RUN runs them)."""
    found = []
    for file in files:
        if file.relative.startswith(CONTEXT) and file.relative.endswith(".sh") and file.text and \
                file.relative not in followed:
            for number, line in enumerate(file.text.split("\n"), start=1):
                if PIPE_TO_SHELL.search(line):
                    found.append(pipe_to_shell_finding(file.relative, number, "in a script of the image"))
    return found


@check(ARENA406, needs=Needs.PACKAGE)
def check_copied_secrets(tree: PackageTree, package: TaskPackage) -> list[Diagnostic]:
    """Files in the build context that are the verifier, oracle, generator or verifier data (same name or bytes).
    Only files of a size both sides have are hashed: files of different sizes cannot be copies."""
    files = tree.files
    hidden_roots = package.hidden_paths()
    image = [file for file in files if file.relative.startswith("environment/")]
    sizes = {file.size for file in image if file.size}
    hidden: dict[str, str] = {}
    hidden_sizes: set[int] = set()
    for file in files:
        if file.relative.startswith("environment/") or file.size not in sizes:
            continue
        if any(file.relative == h or file.relative.startswith(h + "/") for h in hidden_roots):
            hidden[file.digest] = file.relative
            hidden_sizes.add(file.size)
    found = []
    for file in image:
        copy_of = hidden.get(file.digest) if file.size in hidden_sizes else None
        if copy_of and shared_reason(package, copy_of, file.relative):
            continue
        if copy_of or file.relative.rsplit("/", 1)[-1] == "verifier.py":
            found.append(ARENA406.found(file.relative, case="copy", path=file.relative, source=copy_of) if copy_of
                         else ARENA406.found(file.relative, case="verifier", path=file.relative))
    return found

