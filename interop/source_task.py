"""What a reader extracts from a foreign task (format-neutral, every value with its place), the import's result, and
the one exception interop raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHFLOW, HARBOR, TERMINAL_BENCH, NATIVE = "benchflow", "harbor", "terminal-bench", "native"
FORMAT_NAMES = {BENCHFLOW: "BenchFlow", HARBOR: "Harbor", TERMINAL_BENCH: "Terminal-Bench (older format)"}


class InteropError(ValueError):
    """An import or export cannot proceed; `str()` reads `FILE:LINE: problem. Fix: ...`."""

    def __init__(self, file: str, problem: str, fix: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {problem}. Fix: {fix}")


class PackageHasErrors(InteropError):
    """The native package to export does not pass the loader; `arena check` shows every error."""


@dataclass(frozen=True)
class Sourced:
    """A value and its place in the source (`task.toml:12`)."""

    value: Any
    where: str


@dataclass(frozen=True)
class SourceAuthor:
    """An author as the source names them; `github` only when the source gives a handle."""

    name: str
    github: str | None
    where: str


@dataclass(frozen=True)
class Turn:
    """One prompt given to the model, in order: the source's scene, the role it addresses, the text."""

    scene: str
    role: str
    text: str


@dataclass(frozen=True)
class Placement:
    """A verifier file the source's verifier image held outside its tests folder: put there at verification."""

    source: str
    target: str


@dataclass
class VerifierImage:
    """What a separate verifier image (Harbor `environment_mode = "separate"`) adds to the agent's image."""

    dockerfile: str
    lines: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    placements: list[Placement] = field(default_factory=list)
    workdir: str | None = None


@dataclass
class ImportReport:
    """The three lists `arena import` prints, each entry `where: what`.

    mapped: what the package carries and where it came from (defaults included, saying so).
    lost: what the source has that the package does not carry.
    todo: what the author must still do; where an entry names a package file and line, the static check reports the
    same place, so the CLI shows it once.
    """

    mapped: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)


@dataclass
class SourceTask:
    """A foreign task read into the fields the native package needs. Readers fill it; map/ and write/ use it."""

    fmt: str
    root: Path
    config_file: str
    name: Sourced | None = None
    title: Sourced | None = None
    version: Sourced | None = None
    authors: list[SourceAuthor] = field(default_factory=list)
    license: Sourced | None = None
    domain_hints: list[tuple[str, Sourced]] = field(default_factory=list)
    tags: list[Sourced] = field(default_factory=list)
    difficulty: Sourced | None = None
    limits: dict[str, Sourced] = field(default_factory=dict)
    format_defaults: dict[str, float] = field(default_factory=dict)
    network: list[Sourced] = field(default_factory=list)
    prompt: str = ""
    prompt_where: str = ""
    turns: list[Turn] = field(default_factory=list)
    environment_dir: Path | None = None
    environment_exclude: frozenset[str] = frozenset()
    docker_image: Sourced | None = None
    workdir: str | None = None
    oracle_dir: Path | None = None
    oracle_file: Path | None = None
    oracle_missing: str | None = None
    oracle_steps: list[tuple[str, Path]] = field(default_factory=list)
    verifier_dirs: list[Path] = field(default_factory=list)
    verifier_files: list[Path] = field(default_factory=list)
    verifier_exclude: frozenset[str] = frozenset()
    test_script: str = "test.sh"
    verifier_mount: str = "/tests"
    verifier_links: tuple[str, ...] = ()
    verifier_env: dict[str, str] = field(default_factory=dict)
    reward_from: str = "reward-file"
    verifier_separate: str | None = None
    verifier_image_ref: Sourced | None = None
    verifier_image: VerifierImage | None = None
    canary: Sourced | None = None
    report: ImportReport = field(default_factory=ImportReport)

    def mapped(self, where: str, what: str) -> None:
        """Record what the package carries and where it came from."""
        self.report.mapped.append(f"{where}: {what}")

    def lost(self, where: str, what: str) -> None:
        """Record something of the source the native package does not carry."""
        self.report.lost.append(f"{where}: {what}")

    def todo(self, where: str, what: str) -> None:
        """Record something the author must still do, at the place to edit."""
        self.report.todo.append(f"{where}: {what}")


@dataclass
class ImportResult:
    """Where the package was written, from which format, and the import's report."""

    package_path: Path
    source_format: str
    report: ImportReport = field(default_factory=ImportReport)

    def todo_except(self, places: set[str]) -> list[str]:
        """The to-do entries whose `file:line` is not among places (those the static check already reports)."""
        return [entry for entry in self.report.todo if entry.split(": ", 1)[0] not in places]
