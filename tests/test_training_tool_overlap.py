"""Tool calls of different rollouts overlap, with the same results, order and errors as one by one."""

from __future__ import annotations

import threading
import time

from training.tool_overlap import TurnCalls

PAUSE = 0.15


class Gauge:
    """How many calls run at the same time, at most."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def __exit__(self, *_: object) -> None:
        with self.lock:
            self.now -= 1


def rollouts(log: list[tuple[int, str]], lock: threading.Lock, gauge: Gauge) -> list[dict]:
    def tools(rollout: int) -> dict:
        def shell(command: str) -> str:
            with gauge:
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


def play(serial: bool) -> tuple[list, list[tuple[int, str]], int]:
    """What TRL's loop does: each rollout's calls in order, one rollout after the other."""
    log: list[tuple[int, str]] = []
    gauge = Gauge()
    completions = turn_of([["a", "b"], ["c", "fail"], ["d", "e"]])
    turn = TurnCalls(completions, rollouts(log, threading.Lock(), gauge), workers=3, serial=serial)
    tools, results = turn.wrapped(), []
    for rollout, messages in enumerate(completions):
        for call in messages[-1]["tool_calls"]:
            try:
                results.append(tools[rollout]["shell"](**call["function"]["arguments"]))
            except ValueError as exc:
                results.append(f"error: {exc}")
        messages.append({"role": "tool", "content": "done"})
    turn.close()
    assert turn.blocked_s > 0  # the trainer's wait is measured (bench/tool_overlap.py compares it)
    return results, log, gauge.most


def test_overlapped_calls_give_what_serial_calls_give_running_side_by_side() -> None:
    serial_results, serial_log, serial_most = play(serial=True)
    results, log, most = play(serial=False)
    assert results == serial_results == ["0:a", "0:b", "1:c", "error: bad command", "2:d", "2:e"]
    for rollout in range(3):  # each rollout's calls ran in its own order
        assert [c for r, c in log if r == rollout] == [c for r, c in serial_log if r == rollout]
    assert serial_most == 1 and most > 1  # one call at a time in TRL's loop; rollouts side by side overlapped


def test_a_batch_starts_all_its_instances_at_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from training.tool_overlap import start_instances

    class Pool:
        def __init__(self) -> None:
            self.executor = ThreadPoolExecutor(max_workers=4)
            self.made: list[int] = []

            self.gauge = Gauge()

        def initial_state(self, instance: int) -> int:
            with self.gauge:
                time.sleep(PAUSE)
            self.made.append(instance)
            return instance

    pool = Pool()
    start_instances(pool, [{"instance": i} for i in (5, 5, 7, 9, 7, 11)])
    pool.executor.shutdown(wait=True)
    assert sorted(pool.made) == [5, 7, 9, 11] and pool.gauge.most > 1  # each instance once, side by side
