"""How many CPU threads torch uses, and how its idle threads wait, on a machine that others may share.

torch's CPU build runs each operation on an OpenMP team (GNU libgomp) whose idle threads spin while they wait.
When other processes hold the cores (tests, Docker builds, another training run: a load average above the core
count), a spinning team is descheduled mid-operation and a small model slows down tenfold: one 40-token reply of the
135M model measured 32-122 s with torch's default two threads at a load average of 7-9 on 2 cores, against 6-13 s
with one thread (docs/TRAINING.md, "CPU threads"). So, unless the user set them:

- `OMP_WAIT_POLICY=PASSIVE` (idle threads sleep instead of spinning), set before torch is first imported;
- one thread per core that the load average leaves free, at least one (`ARENA_TORCH_THREADS=N` fixes it).

Imports nothing heavy; torch only when asked to set the count.
"""

from __future__ import annotations

import math
import os
import sys

THREADS_VARIABLE = "ARENA_TORCH_THREADS"
WAIT_VARIABLE = "OMP_WAIT_POLICY"


def prepare_environment() -> None:
    """Make idle OpenMP threads sleep rather than spin; only effective before torch is imported, and only where the
    user has not chosen a policy."""
    if "torch" not in sys.modules:
        os.environ.setdefault(WAIT_VARIABLE, "PASSIVE")


def thread_count(cores: int | None = None, load: float | None = None) -> int:
    """ARENA_TORCH_THREADS when set (a positive integer), else the cores the 1-minute load average leaves free,
    rounded, between 1 and the core count."""
    chosen = os.environ.get(THREADS_VARIABLE, "").strip()
    if chosen:
        try:
            return max(1, int(chosen))
        except ValueError:
            raise ValueError(f"{THREADS_VARIABLE}={chosen!r}: give a whole number of threads, e.g. 1") from None
    cores = cores or os.cpu_count() or 1
    load = os.getloadavg()[0] if load is None else load
    return max(1, min(cores, math.floor(cores - load + 0.5)))


def use_cpu_threads() -> int:
    """Set torch's intra-op thread count for this process (see the module's docstring); returns it."""
    prepare_environment()
    import torch

    count = thread_count()
    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    return count
