"""The validated task package as typed, immutable objects. Built only by taskpkg.loader."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from taskpkg.body import Section, placeholders, render, split_sections

AGENT_KIND = "agent"
DEFAULT_AGENT_ROLE = "agent"


@dataclass(frozen=True)
class Author:
    """A package author."""

    name: str
    github: str


@dataclass(frozen=True)
class Limits:
    """Every limit a package declares; none has a default."""

    build_timeout_s: int
    agent_timeout_s: int
    oracle_timeout_s: int
    verifier_timeout_s: int
    max_turns: int
    cpus: float
    memory_mb: int
    storage_mb: int
    pids: int


@dataclass(frozen=True)
class Role:
    """A participant: the agent, or a scripted role that speaks its scenes' sections."""

    name: str
    kind: str
    description: str = ""


@dataclass(frozen=True)
class Scene:
    """One step of the episode: `role` speaks `section` to the agent."""

    name: str
    role: str
    section: str
    max_turns: int | None = None


@dataclass(frozen=True)
class ScenePrompt:
    """What the agent is shown at the start of a scene."""

    scene: str
    speaker: str
    speaker_kind: str
    text: str
    max_turns: int | None


@dataclass(frozen=True)
class Unfilled:
    """A prompt placeholder the generator's values do not fill: its key, its line in task.md, and the printed key it
    most likely meant (None when none is close)."""

    key: str
    line: int
    guess: str | None


@dataclass(frozen=True)
class TaskPackage:
    """A package that passed parsing and cross-reference checks."""

    root: Path
    name: str
    title: str
    version: str
    authors: tuple[Author, ...]
    license: str
    domain: str
    tags: tuple[str, ...]
    difficulty: str
    canary: str
    limits: Limits
    instance_count: int
    generator: str
    oracle_entrypoint: str
    verifier_data: tuple[str, ...]
    roles: tuple[Role, ...]
    scenes: tuple[Scene, ...]
    body: str
    body_first_line: int = 1  # the line of task.md the body starts on

    @classmethod
    def from_frontmatter(cls, root: Path, data: dict[str, Any], body: str, body_first_line: int = 1) -> TaskPackage:
        """Build from schema-valid frontmatter; defaults roles/scenes to one agent scene over the whole body."""
        roles = tuple(Role(r["name"], r["kind"], r.get("description", "")) for r in data.get("roles", ()))
        scenes = tuple(Scene(s["name"], s["role"], s["section"], s.get("max_turns")) for s in data.get("scenes", ()))
        return cls(
            root=root,
            name=data["name"],
            title=data["title"],
            version=data["version"],
            authors=tuple(Author(a["name"], a["github"]) for a in data["authors"]),
            license=data["license"],
            domain=data["domain"],
            tags=tuple(data["tags"]),
            difficulty=data["difficulty"],
            canary=data["canary"],
            limits=Limits(**data["limits"]),
            instance_count=data["instances"]["count"],
            generator=data["instances"]["generator"],
            oracle_entrypoint=data["oracle"]["entrypoint"],
            verifier_data=tuple(data.get("verifier", {}).get("data", ())),
            roles=roles or (Role(DEFAULT_AGENT_ROLE, AGENT_KIND),),
            scenes=scenes,
            body=body,
            body_first_line=body_first_line,
        )

    @property
    def environment_dir(self) -> Path:
        """The Docker build context."""
        return self.root / "environment"

    @property
    def oracle_dir(self) -> Path:
        """The reference solution's folder."""
        return self.root / "oracle"

    @property
    def verifier_file(self) -> Path:
        """The verifier script."""
        return self.root / "verifier.py"

    def hidden_paths(self) -> tuple[str, ...]:
        """Package-relative paths the agent must never see: verifier, oracle, generator (and its folder), data."""
        generator_folder = PurePosixPath(self.generator).parent.as_posix()
        folder = (generator_folder,) if generator_folder != "." else ()
        data = tuple(d.rstrip("/") for d in self.verifier_data)
        return ("verifier.py", "oracle", self.generator, *folder, *data)

    def sections(self) -> tuple[str, list[Section]]:
        """The body's preamble and `## ` sections."""
        return split_sections(self.body)

    def scene_prompts(self, values: dict[str, object]) -> list[ScenePrompt]:
        """The messages the agent sees, scene by scene, with instance values filled in."""
        agent = next(r for r in self.roles if r.kind == AGENT_KIND)
        if not self.scenes:
            return [ScenePrompt("main", agent.name, AGENT_KIND, render(self.body.strip(), values), None)]
        preamble, sections = self.sections()
        by_heading = {s.heading: s for s in sections}
        kinds = {r.name: r.kind for r in self.roles}
        prompts = []
        for index, scene in enumerate(self.scenes):
            text = by_heading[scene.section].text
            if preamble and index == 0:
                text = f"{preamble}\n\n{text}"
            prompts.append(ScenePrompt(scene.name, scene.role, kinds[scene.role], render(text, values),
                                       scene.max_turns))
        return prompts

    def unfilled(self, values: dict[str, object]) -> list[Unfilled]:
        """Every `{{ instance.KEY }}` of the prompt that values do not fill, in order, with its task.md line."""
        printed = [str(key) for key in values]
        return [Unfilled(p.key, self.body_first_line + p.line - 1,
                         next(iter(difflib.get_close_matches(p.key, printed, n=1, cutoff=0.6)), None))
                for p in placeholders(self.body) if p.key is not None and p.key not in values]
