"""Handing an accepted `/arena train` to the commands workflow's protected launch job, as step outputs."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from bot.actions import LaunchTraining

SHA = re.compile(r"^[0-9a-f]{40}$")


def handoff_launcher(env: Mapping[str, str]) -> Callable[[LaunchTraining], str] | None:
    """With ARENA_LAUNCH_HANDOFF=1 and GITHUB_OUTPUT set: a launcher that hands an accepted `/arena train` to the
    workflow's protected launch job as step outputs train=true, pr=N, sha=SHA; otherwise None (not configured)."""
    output = env.get("GITHUB_OUTPUT")
    if env.get("ARENA_LAUNCH_HANDOFF") != "1" or not output:
        return None

    def launch(action: LaunchTraining) -> str:
        pr, sha = int(action.pr), str(action.pinned_sha)
        if not SHA.match(sha):
            raise ValueError(f"not a commit SHA: {sha!r}")
        with open(output, "a", encoding="utf-8") as handle:
            handle.write(f"train=true\npr={pr}\nsha={sha}\n")
        return "handed to this workflow's launch job, which waits for approval of the gpu-training environment"

    return launch
