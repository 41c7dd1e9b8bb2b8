"""torch's CPU threads on a shared machine: one per core the load leaves free (at least one), idle ones sleeping."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agents.backends.local_threads import THREADS_VARIABLE, thread_count


def test_the_cores_the_load_leaves_free_at_least_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert thread_count(cores=2, load=0.3) == 2
    assert thread_count(cores=2, load=1.2) == 1
    assert thread_count(cores=2, load=9.0) == 1
    assert thread_count(cores=16, load=4.0) == 12
    assert thread_count(cores=16, load=0.0) == 16


def test_a_chosen_count_wins_and_a_bad_one_says_what_to_give(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    assert thread_count(cores=2, load=9.0) == 3
    monkeypatch.setenv(THREADS_VARIABLE, "many")
    with pytest.raises(ValueError, match="ARENA_TORCH_THREADS='many': give a whole number"):
        thread_count()


def test_importing_the_backends_makes_idle_threads_sleep_before_torch_loads_unless_chosen() -> None:
    pytest.importorskip("torch")
    probe = ("import os, agents.backends, torch; from agents.backends.local_threads import use_cpu_threads; "
             "print(os.environ.get('OMP_WAIT_POLICY'), use_cpu_threads(), torch.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | {THREADS_VARIABLE: "1"}
    assert subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["PASSIVE", "1", "1"]
    chosen = "import os, agents.backends; print(os.environ['OMP_WAIT_POLICY'])"
    assert subprocess.run([sys.executable, "-c", chosen], env=env | {"OMP_WAIT_POLICY": "ACTIVE"},
                          capture_output=True, text=True, check=True).stdout.strip() == "ACTIVE"
