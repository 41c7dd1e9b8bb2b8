"""Turn the source's prompts into the native body: one prompt as it is, or ordered turns as scenes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from interop.map.domain import slug
from interop.source_task import SourceTask, Turn

BRACES_KEY = "open_braces"
AGENT_ROLE, SPEAKER_ROLE = "agent", "user"
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_SCENE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass
class Body:
    """The Markdown body, the roles and scenes for the frontmatter, and the generator's prompt values."""

    text: str
    roles: list[dict] = field(default_factory=list)
    scenes: list[dict] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)


def build_body(source: SourceTask) -> Body:
    """The native body for the source's prompt or turns (literal `{{` escaped through an instance value)."""
    body = _scenes(source) if source.turns else Body(source.prompt.strip("\n") + "\n")
    if "{{" in body.text:
        body.text = body.text.replace("{{", "{{ instance." + BRACES_KEY + " }}")
        body.values[BRACES_KEY] = "{{"
        source.mapped(source.prompt_where, f"the prompt contains '{{{{', which the arena's templating reserves; "
                      f"written as {{{{ instance.{BRACES_KEY} }}}} (the generator prints '{{{{'), so the agent still "
                      "sees '{{'")
    return body


def _scenes(source: SourceTask) -> Body:
    names: list[str] = []
    sections: list[str] = []
    scenes: list[dict] = []
    several_roles = len({t.role for t in source.turns}) > 1
    demoted = False
    for number, turn in enumerate(source.turns, start=1):
        name = _unique(_scene_name(turn.scene), names)
        names.append(name)
        heading = f"Scene {number}: {turn.scene}" + (f" ({turn.role})" if several_roles else "")
        heading = " ".join(heading.split())[:120].rstrip("#").strip()
        text, lowered = _demote(turn)
        demoted = demoted or lowered
        sections.append(f"## {heading}\n\n{text.strip()}\n")
        scenes.append({"name": name, "role": SPEAKER_ROLE, "section": heading})
    if demoted:
        source.mapped(source.prompt_where, "'## ' headings inside scene prompts were written as '### ' (the native "
                      "body is cut into scenes at '## ' headings)")
    roles = [{"name": AGENT_ROLE, "kind": "agent", "description": "The model being trained; it plays every turn."},
             {"name": SPEAKER_ROLE, "kind": "scripted",
              "description": "Gives each imported scene's prompt, in the source's order."}]
    source.mapped(source.prompt_where, f"{len(scenes)} turns became scenes spoken by the scripted role "
                  f"'{SPEAKER_ROLE}' to the agent")
    return Body("\n".join(sections), roles, scenes)


def _scene_name(raw: str) -> str:
    name = slug(raw)[:32].strip("-") or "scene"
    return name if _SCENE_NAME.match(name) else f"s-{name}"[:32]


def _unique(name: str, taken: list[str]) -> str:
    if name not in taken:
        return name
    index = 2
    while f"{name[:28]}-{index}" in taken:
        index += 1
    return f"{name[:28]}-{index}"


def _demote(turn: Turn) -> tuple[str, bool]:
    lines, in_fence, changed = [], False, False
    for line in turn.text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and re.match(r"##\s", line):
            line, changed = "#" + line, True
        lines.append(line)
    return "\n".join(lines), changed
