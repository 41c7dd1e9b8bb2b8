"""ARENA2xx: the prompt body, its placeholders, roles and scenes."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Append, Keep, Replace, Write, example
from taskpkg.rules.rule import Category, Message, Rule, one

STATIC, E, W = Category.STATIC, Severity.ERROR, Severity.WARNING
TASK = "task.md"
_ROLES = "roles:\n  - {name: agent, kind: agent}\n  - {name: customer, kind: scripted}\n"
_SCENE = "scenes:\n  - {name: opening, role: customer, section: Opening}\n"


def _scenes(roles: str, scenes: str) -> Replace:
    """Roles and scenes added to the base package's frontmatter, just before `verifier:`."""
    return Replace(TASK, "verifier:\n", f"{roles}{scenes}verifier:\n", shown=roles + scenes)


ARENA201 = Rule(
    "ARENA201", STATIC, E, "prompt is empty",
    doc="The Markdown after the frontmatter is what the agent is told to do; without it there is no task.",
    advice="Write the prompt below the frontmatter.",
    messages=one("the prompt (the Markdown after the frontmatter) is empty",
                 "Write the task for the agent below the closing '---'."),
    failing=example(Replace(TASK, "The file `/workspace/numbers.txt` holds {{ instance.count }} integers, one per "
                                  "line. Write their sum, as a plain\ninteger, to `/workspace/answer.txt`.\n", "",
                            shown="---\n(nothing after the frontmatter)")),
    passing=example(Keep(TASK, "Write their sum, as a plain\ninteger, to `/workspace/answer.txt`.")),
)

ARENA202 = Rule(
    "ARENA202", STATIC, E, "scaffold placeholder left in the package",
    doc="`arena new` marks everything a contributor must write with `TODO(arena)`, and `arena import` marks what the "
        "source task lacked with `TODO(arena import)`; each one left is reported with its line and what it asks for.",
    advice="Replace every `TODO(arena)` that `arena new` left and every `TODO(arena import)` that `arena import` "
           "wrote.",
    messages={
        "": Message("placeholder from `arena new` still here: {request}",
                    "Do what it asks, then delete the TODO(arena) marker."),
        "import": Message("placeholder written by `arena import` still here: {request}",
                          "Do what it asks, then delete the TODO(arena import) marker."),
    },
    failing=example(Write("environment/notes.md", "TODO(arena): describe the data\n")),
    passing=example(Write("environment/notes.md", "numbers.txt holds one integer per line.\n")),
)

ARENA203 = Rule(
    "ARENA203", STATIC, E, "template placeholder not allowed",
    doc="The prompt may name the instance's values as `{{ instance.KEY }}`, filled in from what the generator "
        "prints. Any other `{{ ... }}` would reach the agent as literal braces.",
    advice="Use only `{{ instance.KEY }}` placeholders.",
    messages=one("placeholder {placeholder} is not of the form {{{{ instance.KEY }}}}",
                 "Use {{{{ instance.KEY }}}} with a key your generator prints, or remove the braces."),
    failing=example(Replace(TASK, "Write their sum", "Write {{ answer }} their sum")),
    passing=example(Keep(TASK, "holds {{ instance.count }} integers")),
)

ARENA204 = Rule(
    "ARENA204", STATIC, E, "scene names an undeclared role",
    doc="Each scene is spoken by a role declared under `roles`.",
    advice="Declare the role under `roles`, or name a declared one.",
    messages=one("scene '{scene}' is spoken by role '{role}', which is not declared",
                 "Declare it under `roles`, or use one of: {roles}."),
    failing=example(_scenes("roles:\n  - {name: agent, kind: agent}\n", _SCENE), Append(TASK, "## Opening\nHello.\n")),
    passing=example(_scenes(_ROLES, _SCENE), Append(TASK, "## Opening\nHello.\n")),
)

ARENA205 = Rule(
    "ARENA205", STATIC, E, "scene names a missing section",
    doc="A scene's `section` is a `## ` heading of the prompt body: the text that role says in that scene.",
    advice="Add a `## ` section with that heading, or name an existing one.",
    messages={
        "guess": Message("scene '{scene}' speaks section '{section}', but the body has no '## {section}' heading",
                         "Did you mean '{guess}'? Add the heading to the body or fix the section name."),
        "": Message("scene '{scene}' speaks section '{section}', but the body has no '## {section}' heading",
                    "Add the heading to the body or fix the section name."),
    },
    failing=example(_scenes(_ROLES, _SCENE + "  - {name: reply, role: customer, section: Openin}\n"),
                    Append(TASK, "## Opening\nHello.\n")),
    passing=example(_scenes(_ROLES, _SCENE), Append(TASK, "## Opening\nHello.\n")),
)

ARENA206 = Rule(
    "ARENA206", STATIC, E, "roles or scenes are inconsistent",
    doc="Exactly one role is the trained agent (`kind: agent`); role and scene names are unique; scripted roles "
        "need scenes to speak in.",
    advice="Declare exactly one role of kind `agent`, and unique role and scene names.",
    messages={
        "duplicate": Message("{kind} '{name}' is declared twice", "Give every {kind} its own name."),
        "agents": Message("{count} roles have kind 'agent'; exactly one must",
                          "Mark the trained model's role `kind: agent` and every other role `kind: scripted`."),
        "silent": Message("scripted roles are declared but no scenes give them anything to say",
                          "Add `scenes` naming which section each role speaks, or remove the scripted roles."),
    },
    failing=example(_scenes("roles:\n  - {name: agent, kind: agent}\n  - {name: agent2, kind: agent}\n",
                            "scenes:\n  - {name: opening, role: agent, section: Opening}\n"),
                    Append(TASK, "## Opening\nHello.\n")),
    passing=example(_scenes("roles:\n  - {name: agent, kind: agent}\n  - {name: agent2, kind: scripted}\n",
                            "scenes:\n  - {name: opening, role: agent2, section: Opening}\n"),
                    Append(TASK, "## Opening\nHello.\n")),
)

ARENA207 = Rule(
    "ARENA207", STATIC, W, "section not used by any scene",
    doc="With scenes, the agent sees only the preamble and the sections its scenes speak; a section no scene names "
        "is never shown to anyone.",
    advice="Give the section to a scene, or remove it.",
    messages=one("section '## {section}' is not spoken in any scene, so the agent never sees it",
                 "Add a scene for it, move its text into the preamble, or remove it."),
    failing=example(_scenes(_ROLES, _SCENE), Append(TASK, "## Opening\nHello.\n\n## Unused\nNobody says this.\n")),
    passing=example(_scenes(_ROLES, _SCENE), Append(TASK, "## Opening\nHello.\n")),
)
