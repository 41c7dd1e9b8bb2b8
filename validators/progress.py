"""Progress of the dynamic checks' trials: a rich bar on a terminal, whole plain lines elsewhere (CI logs)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Advance = Callable[[str], None]


@contextmanager
def trial_progress(enabled: bool) -> Iterator[Callable[[str, int], Advance]]:
    """A factory of per-package progress callbacks: (package name, trials planned) → called once per trial done."""
    console = Console(stderr=True)
    if not enabled:
        yield lambda name, total: (lambda step: None)
        return
    if not console.is_terminal:
        lock = threading.Lock()  # trials finish on worker threads: one whole line at a time

        def plain(name: str, total: int) -> Advance:
            done = [0]

            def advance(step: str) -> None:
                with lock:
                    done[0] += 1
                    sys.stderr.write(f"arena: {name}: {step} ({done[0]}/{total})\n")
                    sys.stderr.flush()
            return advance
        yield plain
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        def rich_bar(name: str, total: int) -> Advance:
            task = bar.add_task(f"{name}: trials", total=total)
            return lambda step: bar.update(task, advance=1, description=f"{name}: {step}")
        yield rich_bar
