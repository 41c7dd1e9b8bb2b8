"""BenchFlow's task.md body: the prompt (bare, or under `## prompt`), role/scene sections and prompts/ sidecars."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from interop.files import read_text
from interop.read.tables import Table
from interop.source_task import InteropError, SourceTask, Turn

SECTION = re.compile(r"^##\s+(prompt|role:[A-Za-z0-9_.-]+|scene:[A-Za-z0-9_.-]+|user-persona)\s*$",
                     re.IGNORECASE | re.MULTILINE)
_ESCAPED = re.compile(r"^\\(##\s+(?:prompt|role:[A-Za-z0-9_.-]+|scene:[A-Za-z0-9_.-]+|user-persona)\s*)$",
                      re.IGNORECASE | re.MULTILINE)


@dataclass
class Prompts:
    """The base prompt and the role-, scene- and user-specific prompts."""

    instruction: str
    roles: dict[str, str] = field(default_factory=dict)
    scenes: dict[str, str] = field(default_factory=dict)
    persona: str | None = None


def _unescape(text: str) -> str:
    return _ESCAPED.sub(r"\1", text).strip()


def split_body(body: str, root: Path) -> Prompts:
    """Split the body as BenchFlow does; prompts/ sidecar files override the body's sections."""
    matches = list(SECTION.finditer(body))
    if not matches:
        prompts = Prompts(body.strip())
    else:
        sections: dict[str, str] = {}
        for index, match in enumerate(matches):
            prefix, colon, rest = match.group(1).strip().partition(":")
            key = f"{prefix.lower()}{colon}{rest}"
            if key in sections:
                raise InteropError("task.md", f"has the section '## {key}' twice", "Keep one of them.",
                                   body.count("\n", 0, match.start()) + 1)
            end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
            sections[key] = body[match.end():end]
        preamble = body[: matches[0].start()]
        prompts = Prompts(_unescape(sections.get("prompt", preamble)),
                          {k[5:]: _unescape(v) for k, v in sections.items() if k.startswith("role:")},
                          {k[6:]: _unescape(v) for k, v in sections.items() if k.startswith("scene:")},
                          _unescape(sections["user-persona"]) if "user-persona" in sections else None)
    sidecars = root / "prompts"
    for path in sorted(sidecars.glob("*.md")) if sidecars.is_dir() else []:
        stem, text = path.name[:-3], read_text(path, root).strip()
        if stem == "user-persona":
            prompts.persona = text
        elif stem.startswith("role."):
            prompts.roles[stem[5:]] = text
        elif stem.startswith("scene."):
            prompts.scenes[stem[6:]] = text
    return prompts


REPLACE_ORDER = ("turn", "scene", "role", "base")
APPEND_ORDER = ("base", "role", "scene", "turn")


def composition(block: Table) -> tuple[str, tuple[str, ...]]:
    """`benchflow.prompt`: replace (the first part present wins, the default) or append (all parts, in order)."""
    policy = block.table("prompt")
    mode = policy.text("composition") or "replace"
    if mode not in ("replace", "append"):
        raise InteropError("task.md", f"benchflow.prompt.composition is {mode!r}", "Use append or replace.",
                           policy.locator.line((*policy.path, "composition")))
    order = policy.get("order") or list(APPEND_ORDER if mode == "append" else REPLACE_ORDER)
    policy.report_unread()
    return mode, tuple(str(part) for part in order)


def resolve_turns(source: SourceTask, top: Table, prompts: Prompts, policy: tuple[str, tuple[str, ...]]) -> None:
    """The prompts the model gets, in order, from `agents.roles` and `scenes` (BenchFlow's composition rules)."""
    roles = top.table("agents").table("roles")
    role_names = [str(name) for name in roles.data]
    roles.read.update(roles.data)
    turns: list[Turn] = []
    for index, raw in enumerate(top.array("scenes")):
        scene = Table(raw, ("scenes", index), top.locator, source)
        name = scene.text("name") or f"scene-{index}"
        raw_turns = [_turn(scene, i, t) for i, t in enumerate(scene.array("turns"))]
        listed = scene.array("roles") or [role for role, _ in raw_turns] or role_names
        pairs = raw_turns or [(str(role), None) for role in listed]
        for role, text in pairs:
            parts = {"base": prompts.instruction, "role": prompts.roles.get(role), "scene": prompts.scenes.get(name),
                     "turn": text}
            turns.append(Turn(name, role, _compose(parts, *policy)))
        scene.lose("skills_dir", "has no arena equivalent")
        scene.report_unread()
    played = sorted({t.role for t in turns} | (set(role_names) if not turns else set()))
    if len(played) > 1:
        source.lost(top.where("agents"), f"roles {', '.join(played)} are all played by models in BenchFlow; the "
                    "arena trains one model, which plays every turn in order (scenes spoken by the scripted role "
                    "'user')")
    if role_names:
        source.lost(top.where("agents"), "agents.roles (which agent and model play each role) has no arena "
                    "equivalent: the arena decides the model")
    if len(turns) > 1:
        source.turns = turns
    elif turns:
        source.prompt = turns[0].text
    if prompts.persona is not None or top.has("user"):
        top.lose("user", "(a simulated user) is not supported: arena scripted roles speak fixed text")
        source.lost("task.md", "the user persona prompt is not used: arena scripted roles speak fixed text")


def _turn(scene: Table, index: int, raw: object) -> tuple[str, str | None]:
    """One turn of a scene: a role name alone, or {role, prompt}; InteropError naming it otherwise."""
    if isinstance(raw, str):
        return raw, None
    if isinstance(raw, dict) and isinstance(raw.get("role"), str):
        prompt = raw.get("prompt")
        return raw["role"], prompt if isinstance(prompt, str) else None
    raise InteropError("task.md", f"'{'.'.join(map(str, (*scene.path, 'turns', index)))}' must be a role name or a "
                       "table with role and prompt", "Write the turn as `- role` or `- {role: ..., prompt: ...}`.",
                       scene.locator.line((*scene.path, "turns", index)))


def _compose(parts: dict[str, str | None], mode: str, order: tuple[str, ...]) -> str:
    present = [parts[p].strip() for p in order if parts.get(p) and str(parts[p]).strip()]
    if mode == "replace":
        return present[0] if present else ""
    return "\n\n".join(present)
