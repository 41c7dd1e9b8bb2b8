"""Map a SourceTask onto the native package: the frontmatter (with comments for task.md) and the body.

Every value says where it came from in the import's report: `metadata` (name, title, version, tags, difficulty,
authors, licence), `domain` (proposed from the task's own metadata), `limits` (with the format's defaults), `body`
(one prompt, or turns as scenes). `findings` reads the copied tests and oracle for what the arena runs differently.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from interop.map.body import Body, build_body
from interop.map.domain import choose_domain
from interop.map.limits import map_limits
from interop.map.metadata import (
    choose_authors,
    choose_difficulty,
    choose_license,
    choose_name,
    choose_tags,
    choose_title,
    choose_version,
)
from interop.source_task import InteropError, SourceTask

GENERATOR = "instance/generate.py"


@dataclass
class Plan:
    """The package to write: its name, frontmatter (oracle and verifier are added by write/), comments and body."""

    name: str
    frontmatter: dict
    body: Body
    comments: dict = field(default_factory=dict)


def map_task(source: SourceTask, name: str | None, domain: str | None, github: str | None,
             license: str | None) -> Plan:
    """The native frontmatter and body for source; raises InteropError where a value cannot be chosen."""
    comments: dict = {}
    package_name = choose_name(source, name)
    chosen_domain = choose_domain(source, domain)
    body = build_body(source)
    if not body.text.strip():
        raise InteropError(source.prompt_where or source.config_file, "the prompt is empty",
                           "Write the task for the agent.")
    limits, limit_notes = map_limits(source)
    comments.update({("limits", key): text for key, text in limit_notes.items()})
    frontmatter = {
        "schema_version": 1, "name": package_name, "title": choose_title(source, package_name),
        "version": choose_version(source), "authors": choose_authors(source, github, comments),
        "license": choose_license(source, license, comments), "domain": chosen_domain, "tags": choose_tags(source),
    }
    difficulty, difficulty_note = choose_difficulty(source)
    if difficulty_note:
        comments[("difficulty",)] = difficulty_note
    frontmatter |= {"difficulty": difficulty, "canary": _canary(source), "limits": limits,
                    "network": {"agent": "none", "verifier": "none"},
                    "instances": {"count": 1, "generator": GENERATOR}}
    comments[("instances", "count")] = "one fixed instance: the source has no generator"
    if body.roles:
        frontmatter |= {"roles": body.roles, "scenes": body.scenes}
    _network(source)
    source.todo("task.md", "instances.count is 1: the source format has no instance generator, so `arena check` "
                "warns ARENA119 (few instances); write a generator for many instances before training on the task")
    return Plan(package_name, frontmatter, body, comments)


def _canary(source: SourceTask) -> str:
    if source.canary:
        source.mapped(source.canary.where, f"canary GUID {source.canary.value} reused")
        return str(source.canary.value)
    made = str(uuid.uuid4())
    source.mapped(source.config_file, f"no canary GUID in the source: made {made}")
    return made


def _network(source: SourceTask) -> None:
    for policy in source.network:
        source.lost(policy.where, f"{policy.value}: the arena runs the agent and the verifier with no network "
                    "(network: {agent: none, verifier: none}); the task must work offline, with everything it needs "
                    "installed in environment/Dockerfile")
