"""Small files the import writes: the one-instance generator and the oracle wrappers."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from interop.map.body import BRACES_KEY

MARK = "Written by `arena import`"


def generator_text(values: dict[str, str]) -> str:
    """instance/generate.py for a task with one fixed instance: writes nothing and prints the prompt's values."""
    why = textwrap.fill(f"It prints {{\"{BRACES_KEY}\": \"{{{{\"}} because the prompt contains literal double "
                        "braces, which the arena's prompt templating reserves; the import wrote them as "
                        f"{{{{ instance.{BRACES_KEY} }}}}.", 116) + "\n" if values else ""
    return f'''"""{MARK}: the source format has a single, fixed instance and no generator.

So this writes no files (the instance is what the environment's image holds) and prints the prompt's values.
{why}Replace it with a real generator to give the task many instances (see docs/SPEC.md).
"""

import json

print(json.dumps({json.dumps(values)}))
'''


def bash_wrapper(script: str, interpreter: str) -> str:
    """An oracle entrypoint for sh that runs a script needing another interpreter (e.g. #!/bin/bash)."""
    return f'''#!/bin/sh
# {MARK}: the arena runs the oracle's entrypoint with sh, but {script} asks for {interpreter}.
exec {interpreter} "$(dirname "$0")/{script}" "$@"
'''


def runs_solve_sh(entry: Path) -> bool:
    """Whether an oracle entrypoint is the import's wrapper that only runs solve.sh (by solve.sh's own #!)."""
    text = entry.read_text(encoding="utf-8", errors="replace") if entry.is_file() else ""
    return MARK in text and re.search(r'(?m)^exec \S+ "\$\(dirname "\$0"\)/solve\.sh" "\$@"$', text) is not None


def steps_oracle(steps: list[tuple[str, str]]) -> str:
    """An oracle entrypoint that runs each step's solution in order, as Harbor's oracle does for multi-step tasks."""
    calls = "".join(f'run "$here/steps/{name}/{script}"\n' for name, script in steps)
    return f'''#!/bin/sh
# {MARK}: runs each step's reference solution in order, as Harbor's oracle does.
set -e
here="$(cd "$(dirname "$0")" && pwd)"
run() {{
    if head -n 1 "$1" | grep -q bash && command -v bash >/dev/null 2>&1; then bash "$1"; else sh "$1"; fi
}}
{calls}'''


def missing_oracle(fmt: str, why: str) -> str:
    """A placeholder oracle the static check points at (line 2): the source has no usable reference solution."""
    return f'''#!/bin/sh
# TODO(arena import): {why} ({fmt}); write one here that solves the task from its files.
exit 1
'''


def dockerfile_from_image(image: str) -> str:
    """A Dockerfile for a task that names a prebuilt image instead of shipping one."""
    return f"# {MARK}: the source names the prebuilt image {json.dumps(image)} instead of a Dockerfile.\nFROM {image}\n"
