"""ARENA1xx: task.md, its encoding and its YAML frontmatter."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Keep, Replace, Write, example
from taskpkg.rules.rule import Category, Message, Rule, one

STATIC, E, W = Category.STATIC, Severity.ERROR, Severity.WARNING
TASK = "task.md"

ARENA100 = Rule(
    "ARENA100", STATIC, E, "task.md cannot be read as UTF-8 text",
    doc="task.md must be UTF-8 text of at most 256 KiB with something in it; otherwise its frontmatter and prompt "
        "cannot be read at all.",
    advice="Save `task.md` as UTF-8.",
    messages={
        "encoding": Message("{path} is not valid UTF-8 (byte 0x{byte:02x} at offset {offset})",
                            "Save the file as UTF-8."),
        "size": Message("{path} is {size} bytes; the limit is {limit}",
                        "Move long reference material into files under environment/ and point the prompt at them."),
        "empty": Message("{path} is empty",
                         "Run `arena new NAME --domain D` for a template, or copy a bundled package."),
    },
    failing=example(Write(TASK, b"---\nname: \xff\xfe\n---\n")),
    passing=example(Keep(TASK, "title: Total the figures in a generated file")),
)

ARENA101 = Rule(
    "ARENA101", STATIC, W, "task.md starts with a byte-order mark",
    doc="A UTF-8 byte-order mark before the opening `---` is invisible in most editors; the arena tolerates it, "
        "but other tools may not see the frontmatter.",
    advice="Save `task.md` without a byte-order mark.",
    messages=one("{path} starts with a UTF-8 byte-order mark", "Save the file as UTF-8 without BOM."),
    failing=example(Replace(TASK, "---\nschema_version", "\ufeff---\nschema_version")),
    passing=example(Keep(TASK, "---\nschema_version")),
)

ARENA102 = Rule(
    "ARENA102", STATIC, W, "task.md has CRLF line endings",
    doc="Windows line endings are read, but they make diffs noisy and reach the agent's prompt as stray `\\r`.",
    advice="Save `task.md` with LF line endings (`git config core.autocrlf input`).",
    messages=one("{path} uses CRLF line endings",
                 "Convert to LF endings (e.g. `dos2unix`, or git's core.autocrlf=input)."),
    failing=example(Replace(TASK, "\n", "\r\n", every=True, shown="---\\r\nschema_version: 1\\r\n...")),
    passing=example(Keep(TASK, "---\nschema_version: 1\n")),
)

ARENA103 = Rule(
    "ARENA103", STATIC, E, "frontmatter missing or unterminated",
    doc="task.md starts with YAML frontmatter between two `---` lines; the Markdown prompt follows the second.",
    advice="Start `task.md` with a line `---`, then the YAML, then a line `---`.",
    messages={
        "missing": Message("{path} does not start with a '---' line, so it has no frontmatter",
                           "Begin the file with '---', the YAML frontmatter, then a closing '---' line before the "
                           "prompt."),
        "unclosed": Message("the frontmatter is never closed", "Add a line '---' after the last frontmatter key."),
    },
    failing=example(Replace(TASK, "---\nschema_version", "schema_version",
                            shown="schema_version: 1\nname: sample-task\n...\n---")),
    passing=example(Keep(TASK, "---\nschema_version")),
)

ARENA104 = Rule(
    "ARENA104", STATIC, E, "YAML syntax error",
    doc="The frontmatter is not valid YAML. The finding gives the line and column where the parser stopped.",
    advice="Fix the YAML at the line shown (often an unquoted `:` or a tab).",
    messages=one("YAML syntax error: {problem}",
                 "Fix the YAML at this place; quote values that contain ': ', '#', or start with a special "
                 "character."),
    failing=example(Replace(TASK, "tags: []", "tags: [unclosed")),
    passing=example(Keep(TASK, "tags: []")),
)

ARENA105 = Rule(
    "ARENA105", STATIC, E, "YAML feature not allowed in frontmatter",
    doc="The frontmatter is plain data. Anchors and aliases (alias bombs), explicit tags (object construction), "
        "merge keys, non-string keys, duplicate keys (YAML silently keeps the last) and deep nesting are refused.",
    advice="Drop anchors, aliases, tags and duplicate keys: write each value out.",
    messages={
        "alias": Message("frontmatter uses an alias (*name), which the arena does not allow",
                         "Write the value out in full."),
        "tag": Message("frontmatter uses an explicit tag ({tag}), which the arena does not allow",
                       "Remove the tag; write plain values."),
        "merge": Message("frontmatter uses a merge key (<<), which the arena does not allow",
                         "Write the keys out in full."),
        "key": Message("frontmatter uses a non-string key ({key}), which the arena does not allow",
                       "Use plain words as keys, quoted if they look like numbers or booleans."),
        "value": Message("frontmatter uses a value that cannot be read ({problem}), which the arena does not allow",
                         "Quote the value."),
        "nesting": Message("frontmatter is nested deeper than {depth} levels", "Flatten the structure."),
        "duplicate": Message("duplicate key '{key}'", "Keep one of the two; YAML would silently drop the first."),
    },
    failing=example(Replace(TASK, "tags: []", "tags: &t []\nlabels: *t")),
    passing=example(Keep(TASK, "tags: []")),
)

ARENA106 = Rule(
    "ARENA106", STATIC, E, "frontmatter is not a mapping",
    doc="The frontmatter must be a mapping of keys to values, not a list, a scalar or nothing.",
    advice="The frontmatter must be a mapping of keys to values.",
    messages=one("the frontmatter is {kind}, not a mapping of keys to values",
                 "Write `key: value` lines between the '---' fences (see `arena schema`)."),
    failing=example(Write(TASK, "---\n- just\n- a list\n---\nbody\n")),
    passing=example(Keep(TASK, "---\nschema_version: 1\nname: ")),
)

ARENA110 = Rule(
    "ARENA110", STATIC, E, "unknown key",
    doc="Every frontmatter key is defined by the schema (`arena schema`); an unknown key is usually a typo, and is "
        "never silently ignored.",
    advice="Remove or correct the key; the message suggests the nearest known key.",
    messages={
        "guess": Message("unknown key '{key}'", "Did you mean '{guess}'? Unknown keys are errors, never ignored."),
        "": Message("unknown key '{key}'", "Allowed here: {allowed}. Unknown keys are errors, never ignored."),
    },
    failing=example(Replace(TASK, "difficulty: medium", "difficulty: medium\ndificulty: hard")),
    passing=example(Keep(TASK, "difficulty: medium")),
)

ARENA111 = Rule(
    "ARENA111", STATIC, E, "required key missing",
    doc="Every required key must be written out: nothing in the frontmatter has a silent default, least of all the "
        "limits.",
    advice="Add the key; every limit is required, nothing has a silent default (see docs/SPEC.md).",
    messages=one("required key '{key}' is missing", "Add `{name}:` under {where}. {description}"),
    failing=example(Replace(TASK, "license: Apache-2.0\n", "", shown="(no `license:` line)")),
    passing=example(Keep(TASK, "license: Apache-2.0\n")),
)

ARENA112 = Rule(
    "ARENA112", STATIC, E, "value has the wrong type or form",
    doc="A value does not have the type, range or form the schema requires (for example text where a number "
        "belongs, or a version written as a bare number).",
    advice="Give the value the type and form the message names (`arena schema` lists them).",
    messages={
        "enum": Message("{where} is {value}; it must be one of {allowed}", "Use one of the listed values."),
        "const": Message("{where} is {value}; it must be {expected}", "{description}"),
        "type": Message("{where}: {value} is not of type {wanted}",
                        "Write {kind} here (quote text, leave numbers bare). {description}"),
        "form": Message("{where}: {problem}", "{description}"),
    },
    failing=example(Replace(TASK, "cpus: 1", "cpus: lots")),
    passing=example(Keep(TASK, "cpus: 1")),
)

ARENA113 = Rule(
    "ARENA113", STATIC, E, "name does not match the folder",
    doc="A package's `name` is its folder's name under `environments/`, so every reference to it means one thing.",
    advice="Make `name` equal the folder name under `environments/`.",
    messages=one("name is '{name}' but the folder is '{folder}'",
                 "Rename the folder to environments/{name}/ or set `name: {folder}`."),
    failing=example(Replace(TASK, "name: sample-task", "name: other-task")),
    passing=example(Keep(TASK, "name: sample-task")),
)

ARENA114 = Rule(
    "ARENA114", STATIC, E, "unknown domain",
    doc="Every environment belongs to one of the arena's eight domains, the ones the held-out suite scores.",
    advice="Use one of the eight domains listed in docs/SPEC.md.",
    messages={
        "guess": Message("domain {value} is not one of the arena's eight domains",
                         "Did you mean '{guess}'? Choose one of: {domains}."),
        "": Message("domain {value} is not one of the arena's eight domains", "Choose one of: {domains}."),
    },
    failing=example(Replace(TASK, "domain: finance", "domain: fintech")),
    passing=example(Keep(TASK, "domain: finance")),
)

ARENA115 = Rule(
    "ARENA115", STATIC, E, "limits are inconsistent",
    doc="Limits that contradict each other make a package impossible to run as declared: the oracle must finish "
        "within the agent's time, and the scenes' turns within the episode's.",
    advice="Make the limits agree, for example `oracle_timeout_s` at most `agent_timeout_s`.",
    messages={
        "oracle_timeout": Message(
            "limits.oracle_timeout_s ({oracle}) exceeds limits.agent_timeout_s ({agent}): the task would not be "
            "shown solvable within the agent's limits", "Lower oracle_timeout_s or raise agent_timeout_s."),
        "scene_turns": Message("the scenes' max_turns add up to {turns}, more than limits.max_turns ({limit})",
                               "Lower the scenes' max_turns or raise limits.max_turns."),
    },
    failing=example(Replace(TASK, "oracle_timeout_s: 120", "oracle_timeout_s: 5000")),
    passing=example(Keep(TASK, "agent_timeout_s: 900\n  oracle_timeout_s: 120")),
)

ARENA116 = Rule(
    "ARENA116", STATIC, E, "instance generator missing or misplaced",
    doc="`instances.generator` names the Python file that makes each instance. It must exist, and lie outside "
        "`environment/` and `oracle/`, where the agent could read how instances (and answers) are made.",
    advice="Point `instances.generator` at a file in the package, outside `environment/`.",
    messages={
        "missing": Message("instances.generator '{generator}' is not a file inside the package",
                           "Point it at a Python file such as instance/generate.py."),
        "not_python": Message("instances.generator '{generator}' is not a Python file",
                              "The generator runs with python3; name a .py file."),
        "visible": Message("instances.generator '{generator}' lies under environment/ or oracle/, where the agent can "
                           "read it",
                           "Move it to its own folder, e.g. instance/generate.py."),
    },
    failing=example(Replace(TASK, "generator: instance/generate.py", "generator: instance/missing.py")),
    passing=example(Keep(TASK, "generator: instance/generate.py")),
)

ARENA118 = Rule(
    "ARENA118", STATIC, E, "verifier data missing or misplaced",
    doc="`verifier.data` lists what the verifier needs besides `verifier.py`; the arena copies it in only at "
        "verification time. Each entry must exist, and must not be part of the image, the oracle or the task.",
    advice="List only files or folders that exist in the package, outside `environment/`.",
    messages={
        "missing": Message("verifier.data '{entry}' does not exist inside the package",
                           "List files or folders of the package, relative to it."),
        "visible": Message("verifier.data '{entry}' is part of the image, the oracle or the task itself",
                           "Keep verifier data in its own folder; the agent must never see it."),
    },
    failing=example(Replace(TASK, "data: [instance]", "data: [environment]")),
    passing=example(Keep(TASK, "data: [instance]")),
)

ARENA119 = Rule(
    "ARENA119", STATIC, W, "few instances",
    doc="Post-training needs many distinct instances; a package with few of them teaches the answers, not the task.",
    advice="Generate at least 100 distinct instances from `ARENA_INSTANCE`.",
    messages=one("instances.count is {count}; RL training needs many distinct instances",
                 "Generate at least {minimum} instances from the seed."),
    failing=example(Replace(TASK, "count: 1000", "count: 10")),
    passing=example(Keep(TASK, "count: 1000")),
)

ARENA120 = Rule(
    "ARENA120", STATIC, E, "unsupported schema_version",
    doc="`schema_version` says which version of the package format the file follows; this arena reads version 1.",
    advice="Set `schema_version: 1`.",
    messages=one("schema_version is {value}; this arena reads version {version}",
                 "Set `schema_version: {version}` (see `arena schema`)."),
    failing=example(Replace(TASK, "schema_version: 1", "schema_version: 2")),
    passing=example(Keep(TASK, "schema_version: 1")),
)
