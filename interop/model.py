"""What a reader extracts from a foreign task, format-neutral, with where each value came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


@dataclass
class SourceTask:
    """A foreign task read into the fields the native package needs. Readers fill it; the importer maps it."""

    fmt: str
    root: Path
    config_file: str
    name: Sourced | None = None
    title: Sourced | None = None
    version: Sourced | None = None
    authors: list[SourceAuthor] = field(default_factory=list)
    license: Sourced | None = None
    categories: list[Sourced] = field(default_factory=list)
    tags: list[Sourced] = field(default_factory=list)
    difficulty: Sourced | None = None
    limits: dict[str, Sourced] = field(default_factory=dict)
    format_defaults: dict[str, float] = field(default_factory=dict)
    network: list[Sourced] = field(default_factory=list)
    prompt: str = ""
    prompt_where: str = ""
    turns: list[Turn] = field(default_factory=list)
    environment_dir: Path | None = None
    docker_image: Sourced | None = None
    workdir: str | None = None
    oracle_dir: Path | None = None
    oracle_steps: list[tuple[str, Path]] = field(default_factory=list)
    verifier_dirs: list[Path] = field(default_factory=list)
    test_script: str = "test.sh"
    verifier_mount: str = "/tests"
    verifier_links: tuple[str, ...] = ()
    verifier_env: dict[str, str] = field(default_factory=dict)
    canary: Sourced | None = None
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lost(self, where: str, what: str) -> None:
        """Record something of the source the native package does not carry, and what to do about it."""
        self.unmapped.append(f"{where}: {what}")
