"""The one Dockerfile reader, on dockerfile-parse: instructions with their lines, heredoc bodies, the working
directory and stage of each instruction, what COPY and ADD put where in the image, and the scripts a RUN executes.

dockerfile-parse splits instructions (continuation lines, comments, the escape directive) but reads heredoc bodies
(`RUN <<EOF ... EOF`) as instructions of their own; `parse` gives each body back to the instruction that opens it.
Shell text is read as far as a static check can: simple commands split at `&&`, `||`, `;`, `|` and newlines, with
`sh -c '...'` unwrapped. Lines are 1-based lines of the Dockerfile throughout.
"""

from __future__ import annotations

import fnmatch
import io
import json
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from dockerfile_parse import DockerfileParser

HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})
PYTHONS = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "(", ")"})
_PREFIXES = frozenset({"sudo", "exec", "env", "time", "nice", "nohup", "command"})
_REDIRECT = re.compile(r">>?\s*(\S+)")


@dataclass(frozen=True)
class Heredoc:
    """A here-document of an instruction: its delimiter, its body, and the Dockerfile line its body starts on."""

    name: str
    body: str
    first_line: int


@dataclass(frozen=True)
class Instruction:
    """One instruction. `arguments` is the text after the keyword with continuation lines joined (heredoc bodies
    apart, in `heredocs`); `workdir` is the working directory it runs in; `stage` counts FROMs (-1 before the first)."""

    keyword: str
    arguments: str
    line: int
    end_line: int
    stage: int
    workdir: str
    heredocs: tuple[Heredoc, ...] = ()

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction (`RUN ["sh", "-c", "..."]`), else None."""
        text = self.arguments.strip()
        if not text.startswith("["):
            return None
        try:
            words = json.loads(text)
        except json.JSONDecodeError:
            return None
        return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else None

    def words(self) -> tuple[dict[str, str], list[str]]:
        """`--flag=value` options and the remaining words (the exec form's array, or the shell form split)."""
        words = self.exec_form() or split_words(self.arguments)
        flags = {}
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            flags[name] = value
        return flags, words


@dataclass(frozen=True)
class Script:
    """Shell text to check, and where its lines are: `file` (None: the Dockerfile) and the line of its first line.
    `joined` is True where the text is one instruction's continuation lines joined (all of it is at `first_line`)."""

    text: str
    file: str | None
    first_line: int
    joined: bool = False

    def lines(self) -> Iterator[tuple[int, str]]:
        """(line, command text) for each logical line: backslash continuations joined, comments dropped."""
        if self.joined:
            yield self.first_line, self.text
            return
        pending, start = "", self.first_line
        for number, raw in enumerate(self.text.split("\n"), start=self.first_line):
            if not pending:
                start = number
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            line = pending + raw
            pending = ""
            if line.strip() and not line.lstrip().startswith("#"):
                yield start, line


@dataclass(frozen=True)
class Copied:
    """What one COPY or ADD puts into the image: build-context sources (or one inline heredoc) at `destination`."""

    sources: tuple[str, ...]
    destination: str
    into_folder: bool
    inline: Heredoc | None
    line: int


@dataclass
class Dockerfile:
    """A parsed Dockerfile."""

    instructions: list[Instruction]
    copies: dict[int, list[Copied]] = field(default_factory=dict)  # by stage

    def stage_names(self) -> set[str]:
        """The names given with `FROM image AS name`, lower-cased."""
        names = set()
        for instruction in self.instructions:
            _, words = instruction.words() if instruction.keyword == "FROM" else ({}, [])
            if len(words) >= 3 and words[1].upper() == "AS":
                names.add(words[2].lower())
        return names

    def final_workdir(self) -> tuple[str | None, int | None]:
        """The WORKDIR the final stage sets last, and its line (None, None when it sets none)."""
        found: tuple[str | None, int | None] = (None, None)
        for instruction in self.instructions:
            if instruction.keyword == "FROM":
                found = (None, None)
            elif instruction.keyword == "WORKDIR":
                found = (_workdir_after(instruction), instruction.line)
        return found

    def source_of(self, image_path: str, before: Instruction, context_files: set[str]) -> str | Heredoc | None:
        """The build-context file (a path relative to the context) or inline heredoc that is at image_path when
        `before` runs, as far as this stage's COPY and ADD instructions show; None when none put it there."""
        image_path = posixpath.normpath(image_path)
        for copied in reversed(self.copies.get(before.stage, [])):
            if copied.line >= before.line:
                continue
            found = _resolve(copied, image_path, context_files)
            if found is not None:
                return found
        return None


def parse(text: str) -> Dockerfile:
    """Parse Dockerfile text. Never raises: what cannot be read is left out."""
    structure = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8", "surrogateescape")), env_replace=False)
    raw_lines = text.split("\n")
    dockerfile = Dockerfile([])
    stage, workdir, skip_to = -1, "/", -1
    for item in structure.structure:
        if item["startline"] <= skip_to or item["instruction"] == "COMMENT":
            continue
        keyword = item["instruction"].upper()
        heredocs, end = _heredocs(item["value"], raw_lines, item["endline"]) if keyword in ("RUN", "COPY", "ADD") \
            else ((), item["endline"])
        skip_to = end
        if keyword == "FROM":
            stage, workdir = stage + 1, "/"
        instruction = Instruction(keyword, item["value"].strip(), item["startline"] + 1, end + 1, stage, workdir,
                                  heredocs)
        dockerfile.instructions.append(instruction)
        if keyword == "WORKDIR":
            workdir = _workdir_after(instruction)
        elif keyword in ("COPY", "ADD"):
            copied = _copied(instruction)
            if copied is not None:
                dockerfile.copies.setdefault(stage, []).append(copied)
        elif keyword == "RUN":
            for path, heredoc in files_written(instruction).items():
                dockerfile.copies.setdefault(stage, []).append(Copied((), path, False, heredoc, instruction.line))
    return dockerfile


def _heredocs(value: str, raw_lines: list[str], endline: int) -> tuple[tuple[Heredoc, ...], int]:
    """The heredocs an instruction opens, read from the raw lines after it, and the 0-based line where it ends."""
    found = []
    line = endline + 1
    for match in HEREDOC.finditer(value):
        strip_tabs, name = match.group(1) == "-", match.group(3)
        body, start = [], line
        while line < len(raw_lines):
            candidate = raw_lines[line].lstrip("\t") if strip_tabs else raw_lines[line]
            line += 1
            if candidate.rstrip("\r") == name:
                break
            body.append(candidate)
        found.append(Heredoc(name, "\n".join(body), start + 1))
    return tuple(found), (line - 1 if found else endline)


def _workdir_after(instruction: Instruction) -> str:
    path = instruction.arguments.strip().strip("\"'") or "/"
    return posixpath.normpath(posixpath.join(instruction.workdir, path))


def _copied(instruction: Instruction) -> Copied | None:
    flags, words = instruction.words()
    if "from" in flags or len(words) < 2:
        return None
    destination = words[-1]
    absolute = posixpath.normpath(posixpath.join(instruction.workdir, destination))
    inline = instruction.heredocs[0] if instruction.heredocs else None
    sources = tuple(posixpath.normpath(w.lstrip("/")) for w in words[:-1] if not HEREDOC.fullmatch(w))
    into_folder = (destination.endswith(("/", "/.")) or destination == "." or absolute == instruction.workdir
                   or len(sources) + len(instruction.heredocs) > 1 or any(ch in s for s in sources for ch in "*?["))
    return Copied(sources, absolute, into_folder, inline, instruction.line)


def _resolve(copied: Copied, image_path: str, context_files: set[str]) -> str | Heredoc | None:
    if copied.inline is not None:  # COPY <<NAME dest/ makes dest/NAME
        target = posixpath.join(copied.destination, copied.inline.name) if copied.into_folder else copied.destination
        return copied.inline if target == image_path else None
    if image_path == copied.destination and not copied.into_folder and copied.sources[0] in context_files:
        return copied.sources[0]
    if not image_path.startswith(copied.destination.rstrip("/") + "/"):
        return None
    rest = image_path[len(copied.destination.rstrip("/")) + 1:]
    for source in copied.sources:
        prefix = "" if source == "." else source + "/"
        if prefix + rest in context_files:  # a folder copied: its contents land under the destination
            return prefix + rest
        matches = [f for f in context_files if fnmatch.fnmatch(f, source) and posixpath.basename(f) == rest]
        if copied.into_folder and matches:
            return matches[0]
    return None


_SHELL_QUOTING = re.compile(r"[\"'\\]")
_SHELL_QUOTING_OR_COMMENT = re.compile(r"[\"'\\#]")
_TOKENS = re.compile(r"[;&|()]+|[^\s;&|()]+")


def split_words(text: str) -> list[str]:
    """Shell words of text; unbalanced quotes fall back to splitting at whitespace. (Text without quotes or
    backslashes splits at whitespace, as shlex would split it, without shlex's cost.)"""
    if not _SHELL_QUOTING.search(text):
        return text.split()
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def commands(text: str) -> list[list[str]]:
    """The simple commands of shell text, as words: split at `&&`, `||`, `;`, `|` and newlines outside quotes,
    `sh -c '...'` unwrapped, `sudo`/`env`/`VAR=x` prefixes dropped."""
    found: list[list[str]] = []
    for line in text.split("\n"):
        for words in _simple_commands(line):
            while words and (words[0] in _PREFIXES or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
                words.pop(0)
            if len(words) >= 3 and posixpath.basename(words[0]) in SHELLS and words[1] == "-c":
                found.extend(commands(words[2]))
            elif words:
                found.append(words)
    return found


def _simple_commands(line: str) -> list[list[str]]:
    if not _SHELL_QUOTING_OR_COMMENT.search(line):  # words and runs of `;&|()`, as shlex splits them below
        groups: list[list[str]] = [[]]
        for token in _TOKENS.findall(line):
            if token in _SEPARATORS:
                groups.append([])
            else:
                groups[-1].append(token)
        return [g for g in groups if g]
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    groups: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SEPARATORS:
                groups.append([])
            else:
                groups[-1].append(token)
    except ValueError:  # unbalanced quotes: words as far as they go
        pass
    return [g for g in groups if g]


def executed_scripts(text: str, workdir: str) -> list[tuple[str, str, str]]:
    """(image path, "shell" or "python", working directory) of each script a line of shell runs: `sh X`, `bash X`,
    `. X`, `source X`, `python3 X`, or `X` run by its path (`./X`, `/opt/X`); `cd DIR` moves the working directory."""
    found = []
    for words in commands(text):
        program = posixpath.basename(words[0])
        rest = [w for w in words[1:] if not w.startswith("-")]
        if program == "cd" and len(rest) == 1:
            workdir = posixpath.normpath(posixpath.join(workdir, rest[0]))
            continue
        if (program in SHELLS or words[0] in (".", "source")) and rest:
            path, kind = rest[0], "shell"
        elif PYTHONS.match(program) and rest and rest[0].endswith(".py") and "-c" not in words and "-m" not in words:
            path, kind = rest[0], "python"
        elif "/" in words[0] and not words[0].startswith("$"):
            path, kind = words[0], "python" if words[0].endswith(".py") else "shell"
        else:
            continue
        found.append((posixpath.normpath(posixpath.join(workdir, path)), kind, workdir))
    return found


def run_scripts(instruction: Instruction) -> list[Script]:
    """The shell a RUN instruction runs: its command line (exec form unwrapped), and every heredoc body a shell
    reads (`RUN <<EOF`, `RUN bash <<EOF`); bodies fed to other programs (`python3 <<EOF`, `cat <<EOF`) are data."""
    words = instruction.exec_form()
    if words is not None:
        if len(words) >= 3 and posixpath.basename(words[0]) in SHELLS and words[1] == "-c":
            return [Script(words[2], None, instruction.line, joined=True)]
        return [Script(shlex.join(words), None, instruction.line, joined=True)]
    command = HEREDOC.sub("", instruction.arguments).strip()
    scripts = [Script(command, None, instruction.line, joined=True)] if command else []
    program = posixpath.basename(split_words(command)[0]) if split_words(command) else ""
    if not command or (program in SHELLS and "-c" not in split_words(command)):
        scripts += [Script(h.body, None, h.first_line) for h in instruction.heredocs]
    return scripts


def files_written(instruction: Instruction) -> dict[str, Heredoc]:
    """Files a RUN writes from a heredoc (`cat <<EOF > /opt/x.sh`, `tee /opt/x.sh <<EOF`), by image path."""
    if not instruction.heredocs:
        return {}
    command = HEREDOC.sub("", instruction.arguments)
    words = split_words(command)
    target = None
    if words and words[0] == "cat":
        redirect = _REDIRECT.search(command)
        target = redirect.group(1) if redirect else None
    elif words and words[0] == "tee" and len(words) > 1:
        target = next((w for w in words[1:] if not w.startswith("-")), None)
    if target is None:
        return {}
    return {posixpath.normpath(posixpath.join(instruction.workdir, target)): instruction.heredocs[0]}
