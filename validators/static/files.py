"""File-tree checks: required files, links, sizes, binaries, credentials and scaffold placeholders."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from taskpkg.checks import check
from taskpkg.diagnostics import Diagnostic

CHECK_IDS = ("ARENA002", "ARENA003", "ARENA004", "ARENA005", "ARENA006", "ARENA007", "ARENA202")
MAX_FILES = 500
MAX_TOTAL_BYTES = 20 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
SCAN_BYTES = 1024 * 1024
REQUIRED = (("environment/Dockerfile", "file"), ("verifier.py", "file"), ("oracle", "folder"))
IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
PLACEHOLDER_MARK = "TODO(arena)"
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("an OpenAI or Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}\b")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
)


@dataclass(frozen=True)
class PackageFile:
    """A regular file of the package, with its package-relative POSIX path."""

    relative: str
    path: Path
    size: int


def walk(root: Path) -> tuple[list[PackageFile], list[Diagnostic]]:
    """List the package's regular files without following links; report escaping links and special files."""
    files: list[PackageFile] = []
    found: list[Diagnostic] = []
    real_root = root.resolve()
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in sorted(dirnames) + sorted(filenames):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                target = path.resolve()
                if target != real_root and real_root not in target.parents:
                    found.append(check("ARENA003").found(
                        f"{relative} is a symbolic link to {os.readlink(path)}, outside the package",
                        "Replace the link with the file itself, or remove it.", relative))
                continue
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                found.append(check("ARENA007").found(
                    f"{relative} is not a regular file (a device, pipe or socket)", "Remove it.", relative))
                continue
            if not name.endswith(".pyc"):
                files.append(PackageFile(relative, path, info.st_size))
    return files, found


def check_files(root: Path, files: list[PackageFile]) -> list[Diagnostic]:
    """Run every file-tree check over the walked files."""
    found = [
        check("ARENA002").found(f"{required} ({kind}) is missing", f"Add {required}; see docs/SPEC.md.", required)
        for required, kind in REQUIRED
        if not _present(root / required, kind)
    ]
    total = sum(f.size for f in files)
    if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
        found.append(check("ARENA004").found(
            f"the package has {len(files)} files and {total} bytes; the limits are {MAX_FILES} files and "
            f"{MAX_TOTAL_BYTES} bytes", "Generate data in the instance generator instead of committing it.", "."))
    for file in files:
        if file.size > MAX_FILE_BYTES:
            found.append(check("ARENA004").found(
                f"{file.relative} is {file.size} bytes; one file may be at most {MAX_FILE_BYTES}",
                "Generate large data at instance setup instead of committing it.", file.relative))
            continue
        found.extend(_scan(file))
    return found


def _present(path: Path, kind: str) -> bool:
    return path.is_file() if kind == "file" else path.is_dir()


def _scan(file: PackageFile) -> list[Diagnostic]:
    with file.path.open("rb") as handle:
        head = handle.read(SCAN_BYTES)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        return [check("ARENA005").found(
            f"{file.relative} is a binary file", "Prefer text formats or generating the file at instance setup; "
            "binary blobs cannot be reviewed.", file.relative)]
    found = []
    for label, pattern in SECRET_PATTERNS:
        for match in pattern.finditer(text):
            found.append(check("ARENA006").found(
                f"{file.relative} contains what looks like {label}",
                "Remove it and revoke it now: it is public once pushed. Packages never need credentials.",
                file.relative, text.count("\n", 0, match.start()) + 1))
    start = text.find(PLACEHOLDER_MARK)
    while start != -1:
        line_no = text.count("\n", 0, start) + 1
        end = text.find("\n", start)
        request = text[start + len(PLACEHOLDER_MARK): end if end != -1 else len(text)].lstrip(" :").strip()
        found.append(check("ARENA202").found(
            f"placeholder from `arena new` still here: {request[:120] or 'TODO(arena)'}",
            "Do what it asks, then delete the TODO(arena) marker.", file.relative, line_no))
        start = text.find(PLACEHOLDER_MARK, start + len(PLACEHOLDER_MARK))
    return found
