"""File-tree checks: required files, links, sizes, binaries, credentials, git attributes and scaffold placeholders."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from taskpkg.diagnostics import Diagnostic
from taskpkg.digest import CACHE_DIRS
from taskpkg.rules.package_files import ARENA002, ARENA003, ARENA004, ARENA005, ARENA006, ARENA007, ARENA009
from taskpkg.rules.prompt import ARENA202
from taskpkg.task_file import TASK_FILE
from validators.registry import Needs, check

MAX_FILES = 500
MAX_TOTAL_BYTES = 20 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
REQUIRED = (("environment/Dockerfile", "file"), ("verifier.py", "file"), ("oracle", "folder"))
IGNORED_DIRS = CACHE_DIRS  # tools' caches: neither checked nor part of the digest
PLACEHOLDER = re.compile(r"TODO\(arena(?P<imported> import)?\)")
SECRET_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # (what it is, literals one of which it must contain, the pattern): the literals make the scan cheap.
    ("a private key", ("PRIVATE KEY-----",), re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("an AWS access key id", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("an OpenAI or Anthropic API key", ("sk-",), re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}\b")),
    ("a Hugging Face token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("a Slack token", ("xox",), re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
)


@dataclass
class PackageFile:
    """A regular file of the package, with its package-relative POSIX path; its bytes are read at most once."""

    relative: str
    path: Path
    size: int

    @cached_property
    def data(self) -> bytes:
        """The file's bytes (at most MAX_FILE_BYTES)."""
        with self.path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES)

    @cached_property
    def text(self) -> str | None:
        """The file as UTF-8 text, or None for a binary file."""
        try:
            text = self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return None if "\x00" in text else text

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the file's bytes."""
        return hashlib.sha256(self.data).hexdigest()

    def syntax(self) -> ast.Module:
        """The file's Python syntax tree, parsed once for every check that reads it. Raises SyntaxError or
        ValueError (NUL bytes) as ast.parse does."""
        parsed = self._parsed
        if isinstance(parsed, ast.Module):
            return parsed
        raise parsed

    @cached_property
    def _parsed(self) -> ast.Module | SyntaxError | ValueError:
        try:
            return ast.parse(self.data, filename=self.relative)
        except (SyntaxError, ValueError) as exc:
            return exc


@dataclass
class PackageTree:
    """Every regular file of a package, found without following links, plus what the walk itself found wrong."""

    root: Path
    files: list[PackageFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @cached_property
    def by_path(self) -> dict[str, PackageFile]:
        """Files by package-relative path."""
        return {f.relative: f for f in self.files}

    def contents_read(self) -> dict[str, bytes]:
        """The whole contents of the files read so far, by relative path (for a digest that reads nothing twice)."""
        return {f.relative: f.__dict__["data"] for f in self.files if "data" in f.__dict__ and f.size <= MAX_FILE_BYTES}

    def text_of(self, relative: str) -> str | None:
        """The text of a file of the package, or None when it is missing or binary."""
        file = self.by_path.get(relative)
        return file.text if file else None


@check(ARENA003, ARENA007, needs=Needs.FOLDER)
def walk(root: Path) -> PackageTree:
    """List the package's regular files without following links; report escaping links and special files."""
    tree = PackageTree(root)
    _walk_folder(tree, root, "", os.path.realpath(root))
    return tree


def _walk_folder(tree: PackageTree, folder: Path, prefix: str, real_root: str) -> None:
    with os.scandir(folder) as entries:
        ordered = sorted(entries, key=lambda e: e.name)
    for entry in ordered:
        relative = prefix + entry.name
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if target != real_root and not target.startswith(real_root + os.sep):
                tree.diagnostics.append(ARENA003.found(relative, path=relative, target=os.readlink(entry.path)))
        elif entry.is_dir():
            if entry.name not in IGNORED_DIRS:
                _walk_folder(tree, Path(entry.path), relative + "/", real_root)
        elif not entry.is_file():
            tree.diagnostics.append(ARENA007.found(relative, path=relative))
        elif not entry.name.endswith(".pyc"):
            tree.files.append(PackageFile(relative, Path(entry.path), entry.stat().st_size))


@check(ARENA002, ARENA004, ARENA005, ARENA006, ARENA009, ARENA202, needs=Needs.FOLDER)
def check_files(tree: PackageTree, with_git: bool = True) -> list[Diagnostic]:
    """Run every file-tree check over the walked files (without asking git for attributes when with_git is False:
    git_attributes_many asks once for many packages)."""
    root, files = tree.root, tree.files
    found = [ARENA002.found(required, path=required, kind=kind) for required, kind in REQUIRED
             if not _present(root / required, kind)]
    total = sum(f.size for f in files)
    if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
        found.append(ARENA004.found(".", case="package", files=len(files), size=total, max_files=MAX_FILES,
                                    max_size=MAX_TOTAL_BYTES))
    for file in files:
        if file.size > MAX_FILE_BYTES:
            found.append(ARENA004.found(file.relative, case="file", path=file.relative, size=file.size,
                                        max_size=MAX_FILE_BYTES))
            continue
        found.extend(_scan(file))
    found.extend(git_attributes_many([tree])[0] if with_git else _own_git_attributes(files))
    return found


def _own_git_attributes(files: list[PackageFile]) -> list[Diagnostic]:
    """ARENA009 for each `.gitattributes` the package carries."""
    return [ARENA009.found(f.relative, case="file", path=f.relative) for f in files
            if PurePosixPath(f.relative).name == ".gitattributes"]


def git_attributes_many(trees: list[PackageTree]) -> list[list[Diagnostic]]:
    """ARENA009 for each package: a `.gitattributes` in it, else any attribute git gives one of its files (the
    repository's `.gitattributes` files and `.git/info/attributes`; nothing outside a git work tree). Git is asked
    once for all the packages of one folder (a package that is its own repository, once for itself)."""
    found = [_own_git_attributes(tree.files) for tree in trees]
    groups: dict[Path, list[int]] = {}
    for index, tree in enumerate(trees):
        if tree.files and not found[index]:
            own_repository = (tree.root / ".git").exists()
            groups.setdefault(tree.root if own_repository else tree.root.parent, []).append(index)
    for folder, members in groups.items():
        prefixes = {index: "" if trees[index].root == folder else trees[index].root.name + "/" for index in members}
        paths = [prefixes[index] + f.relative for index in members for f in trees[index].files]
        owner = {prefix: index for index, prefix in prefixes.items()}
        for path, attribute, value in _git_check_attr(folder, paths):
            prefix = path.split("/", 1)[0] + "/" if "" not in owner else ""
            if prefix in owner:
                relative = path[len(prefix):]
                found[owner[prefix]].append(ARENA009.found(relative, case="repository", path=relative,
                                                           attribute=attribute, value=value))
    return found


def _git_check_attr(folder: Path, paths: list[str]) -> list[tuple[str, str, str]]:
    """(path, attribute, value) of the first attribute git gives each path that has any, asked from folder."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "check-attr", "--all", "-z", "--stdin"],
                              input="\0".join(paths) + "\0", capture_output=True, text=True, timeout=30,
                              env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:  # not a git work tree: nothing can apply
        return []
    fields = done.stdout.split("\0")
    found, seen = [], set()
    for path, attribute, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        if path and path not in seen:
            seen.add(path)
            found.append((path, attribute, value))
    return found


def _present(path: Path, kind: str) -> bool:
    return path.is_file() if kind == "file" else path.is_dir()


def _scan(file: PackageFile) -> list[Diagnostic]:
    text = file.text
    if text is None:  # task.md that is not text is ARENA100, found by the loader
        return [] if file.relative == TASK_FILE else [ARENA005.found(file.relative, path=file.relative)]
    found = []
    for label, literals, pattern in SECRET_PATTERNS:
        if not any(literal in text for literal in literals):
            continue
        for match in pattern.finditer(text):
            found.append(ARENA006.found(file.relative, text.count("\n", 0, match.start()) + 1, path=file.relative,
                                        what=label))
    if "TODO(arena" in text:
        found.extend(_placeholders(file, text))
    return found


def _placeholders(file: PackageFile, text: str) -> list[Diagnostic]:
    """ARENA202 for every `TODO(arena)` (left by `arena new`) and `TODO(arena import)` (written by `arena import`)."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        end = text.find("\n", match.end())
        request = text[match.end(): end if end != -1 else len(text)].lstrip(" :").strip()
        found.append(ARENA202.found(file.relative, text.count("\n", 0, match.start()) + 1,
                                    case="import" if match.group("imported") else "",
                                    request=request[:120] or match.group(0)))
    return found
