"""Which environment packages a change touches: classify changed paths, or ask git for them between two commits.

Used by the validate workflow (`arena changed`) to pick the packages to check, and by the bot to decide whether a pull
request is one environment. Paths are untrusted: a file name may hold spaces, newlines, `$(...)` or anything else git
allows, so git is asked for NUL-separated names (`-z`) and nothing here passes a path through a shell.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from taskpkg.discover import DEFAULT_ROOT
from taskpkg.scaffold import NAME_PATTERN

ENVIRONMENTS = DEFAULT_ROOT.as_posix()


class GitError(Exception):
    """git could not list the changes (a bad ref, not a repository, git missing); the message says which."""


@dataclass(frozen=True)
class ChangeSet:
    """The package folders a change touches, and every changed path that lies in no package folder."""

    packages: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    @property
    def single_package(self) -> bool:
        """Whether the change is exactly one environments/<name>/ folder and nothing else."""
        return len(self.packages) == 1 and not self.outside

    @property
    def package_paths(self) -> list[str]:
        """The touched package folders as repository paths, `environments/<name>`."""
        return [f"{ENVIRONMENTS}/{name}" for name in self.packages]

    def to_dict(self) -> dict:
        """The JSON form (what `arena changed --format json` prints)."""
        return {"packages": self.package_paths, "outside": self.outside, "single_package": self.single_package}


def valid_package_name(name: str) -> bool:
    """Whether a folder name is a legal package name (the same rule `arena new` and task.md's `name` follow)."""
    return 3 <= len(name) <= 48 and NAME_PATTERN.match(name) is not None


def package_of(path: str) -> str | None:
    """The package a repository path lies in, or None: `environments/<name>/<something>` with a legal name."""
    parts = PurePosixPath(path).parts
    if len(parts) < 3 or parts[0] != ENVIRONMENTS or ".." in parts:
        return None
    return parts[1] if valid_package_name(parts[1]) else None


def classify_changes(paths: list[str]) -> ChangeSet:
    """Sort changed repository paths into the packages they touch (sorted, unique) and the paths outside any package.

    A file directly in environments/ (a README), or in a folder whose name is not a legal package name (which is
    never a package the arena checks), counts as outside. Duplicate paths are kept once, in first-seen order.
    """
    packages: set[str] = set()
    outside: dict[str, None] = {}
    for path in paths:
        name = package_of(path)
        if name is None:
            outside[path] = None
        else:
            packages.add(name)
    return ChangeSet(packages=sorted(packages), outside=list(outside))


def changed_paths(base: str, head: str = "HEAD", repo: Path | str = ".") -> list[str]:
    """Every path that differs between the merge base of base and head, and head (what a pull request changes).

    Renames are listed as a deletion plus an addition, so both the old and the new path count. Raises GitError.
    """
    for ref in (base, head):
        if not ref or ref.startswith("-") or "\0" in ref:
            raise GitError(f"not a git revision: {ref!r}")
    command = ["git", "-C", str(repo), "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff",
               f"{base}...{head}", "--"]
    try:
        done = subprocess.run(command, capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git could not run: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        raise GitError(f"git diff {base}...{head} failed: {message}")
    return [name.decode("utf-8", "surrogateescape") for name in done.stdout.split(b"\0") if name]


def changes_between(base: str, head: str = "HEAD", repo: Path | str = ".") -> ChangeSet:
    """The packages and outside paths a change from base to head touches (three-dot: since their merge base)."""
    return classify_changes(changed_paths(base, head, repo))
