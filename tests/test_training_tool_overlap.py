"""Tool calls of different rollouts overlap, with the same results, order and errors as one by one."""

from __future__ import annotations

import threading
import time

import pytest

from training.tool_overlap import TurnCalls

PAUSE = 0.15


def rollouts(log: list[tuple[int, str]], lock: threading.Lock) -> list[dict]:
    def tools(rollout: int) -> dict:
        def shell(command: str) -> str:
            time.sleep(PAUSE)
            with lock:
                log.append((rollout, command))
            if command == "fail":
                raise ValueError("bad command")
            return f"{rollout}:{command}"

        return {"shell": shell}

    return [tools(r) for r in range(3)]


def turn_of(commands: list[list[str]]) -> list[list[dict]]:
    return [[{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "shell", "arguments": {"command": c}}} for c in calls]}]
        for calls in commands]


def play(serial: bool) -> tuple[list, list[tuple[int, str]], float]:
    """What TRL's loop does: each rollout's calls in order, one rollout after the other."""
    log: list[tuple[int, str]] = []
    completions = turn_of([["a", "b"], ["c", "fail"], ["d", "e"]])
    turn = TurnCalls(completions, rollouts(log, threading.Lock()), workers=3, serial=serial)
    tools, results = turn.wrapped(), []
    for rollout, messages in enumerate(completions):
        for call in messages[-1]["tool_calls"]:
            try:
                results.append(tools[rollout]["shell"](**call["function"]["arguments"]))
            except ValueError as exc:
                results.append(f"error: {exc}")
        messages.append({"role": "tool", "content": "done"})
    turn.close()
    return results, log, turn.blocked_s


def test_overlapped_calls_give_what_serial_calls_give_in_a_fraction_of_the_wait() -> None:
    serial_results, serial_log, serial_wait = play(serial=True)
    results, log, wait = play(serial=False)
    assert results == serial_results == ["0:a", "0:b", "1:c", "error: bad command", "2:d", "2:e"]
    for rollout in range(3):  # each rollout's calls ran in its own order
        assert [c for r, c in log if r == rollout] == [c for r, c in serial_log if r == rollout]
    assert serial_wait == pytest.approx(6 * PAUSE, rel=0.3) and wait < serial_wait / 2
