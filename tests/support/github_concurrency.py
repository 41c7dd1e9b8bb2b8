"""GitHub Actions' documented concurrency rule, to run a workflow's own concurrency settings against a burst of events.

The rule (docs, "Control the concurrency of workflows and jobs"): there can be at most one running and one pending
job or workflow in a concurrency group at any time. A run queued while another of its group is in progress is
pending; any run already pending in that group is cancelled and the new one takes its place. With
`cancel-in-progress: true` the running one is cancelled too. Group names compare without regard to case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.support.github_expr import evaluate

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")


@dataclass(frozen=True)
class Arrival:
    """A run (or job) entering the queue: its name, its concurrency group (None: no group) and whether it cancels
    the one in progress."""

    name: str
    group: str | None
    cancel_in_progress: bool = False


def group_of(concurrency: object, event: dict) -> tuple[str | None, bool]:
    """A `concurrency:` value (a group string or a mapping) evaluated for one event: (group, cancel-in-progress)."""
    if concurrency is None:
        return None, False
    spec = {"group": concurrency} if isinstance(concurrency, str) else dict(concurrency)
    context = {"github": {"event": event}}
    group = _EXPRESSION.sub(lambda m: str(evaluate(m.group(1), context)), str(spec["group"]))
    return group, bool(spec.get("cancel-in-progress", False))


def queue(arrivals: list[Arrival]) -> dict[str, str]:
    """Each arrival's fate ("runs" or "cancelled") when all of them arrive before the first of each group ends (a
    launch waiting for a maintainer's approval keeps its run in progress for hours)."""
    fate: dict[str, str] = {}
    running: dict[str, str] = {}
    pending: dict[str, str] = {}
    for arrival in arrivals:
        fate[arrival.name] = "runs"
        if arrival.group is None:
            continue
        group = arrival.group.lower()
        if group not in running:
            running[group] = arrival.name
            continue
        if group in pending:
            fate[pending.pop(group)] = "cancelled"
        if arrival.cancel_in_progress:
            fate[running[group]] = "cancelled"
            running[group] = arrival.name
        else:
            pending[group] = arrival.name
    return fate
