"""Path safety: resolve a package-relative path without ever leaving the package."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath


def resolve_inside(root: Path, relative: str) -> Path | None:
    """Return root/relative resolved, or None when it is absolute, climbs out with '..', or a link leads outside."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        return None
    candidate = root.joinpath(*pure.parts)
    if not any(p.is_symlink() for p in (candidate, *candidate.parents[: len(pure.parts) - 1])):
        return candidate
    real_root = os.path.realpath(root)
    real = os.path.realpath(candidate)
    if real != real_root and not real.startswith(real_root + os.sep):
        return None
    return Path(real)


def is_under(relative: str, folder: str) -> bool:
    """Whether a package-relative path lies in (or is) the given top-level folder."""
    parts = PurePosixPath(relative).parts
    return bool(parts) and parts[0] == folder


# Where a source format keeps the agent's own logs and transcript, which a verifier must never read (docs/SPEC.md,
# "Runtime contract": a verifier judges the final state only). Paths, not loose words: a task about a projectile's
# trajectory is not reading the agent's.
AGENT_LOG_PATHS = re.compile(r"/logs/agent(?![\w-])|(?<![\w-])agent[-_]trajectory\.jsonl?(?![\w-])|"
                             r"/agent[-_]logs?(?![\w-])|\.bash_history(?![\w-])|(?<![\w-])agent\.log(?![\w-])")


def find_agent_log_path(text: str) -> re.Match[str] | None:
    """AGENT_LOG_PATHS.search(text), fast on long texts: every match holds `agent` (at most 6 characters in) or
    `bash_history` (1 in), so the pattern is tried only where those start, not at every position of the text."""
    found = None
    for anchor, offsets in (("agent", (6, 1, 0)), ("bash_history", (1,))):
        index = text.find(anchor)
        while index != -1 and (found is None or index < found.start() + 6):
            match = next((m for back in offsets if index >= back
                          for m in [AGENT_LOG_PATHS.match(text, index - back)] if m), None)
            if match and (found is None or match.start() < found.start()):
                found = match
            index = text.find(anchor, index + 1)
    return found
