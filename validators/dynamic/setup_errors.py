"""Findings for an instance that could not be made (ARENA710): a prompt placeholder the generator does not print is
placed at its line of task.md, with the key it most likely meant, once for every instance it breaks."""

from __future__ import annotations

from typing import Any

from sandbox.outcomes import EpisodeResult
from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules.dynamic import ARENA710
from taskpkg.task_file import TASK_FILE
from validators.registry import Needs, check


@check(ARENA710, needs=Needs.ENGINE)
def setup_findings(package: TaskPackage, result: EpisodeResult) -> list[Diagnostic]:
    """ARENA710 for a setup failure: at each unfilled placeholder, or at the generator for any other failure."""
    if not result.unfilled:
        return [ARENA710.found(package.generator, instance=result.instance, error=result.error)]
    printed = ", ".join(map(str, result.prompt_values)) or "nothing"
    found = []
    for unfilled in package.unfilled(result.prompt_values):
        where: dict[str, Any] = {"key": unfilled.key, "printed": printed}
        found.append(ARENA710.found(TASK_FILE, unfilled.line, case="placeholder_guess", guess=unfilled.guess, **where)
                     if unfilled.guess else ARENA710.found(TASK_FILE, unfilled.line, case="placeholder", **where))
    return found
