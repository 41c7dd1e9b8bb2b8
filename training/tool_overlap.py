"""Less idle time in TRL's rollout loop: every instance of a generation batch set up at once, and tool calls of
different rollouts overlapped.

TRL resets the batch's environments one after the other, and a reset waits for its instance to be generated and
committed (the first of its group); `start_instances` starts every instance of the batch on the rollout pool before
the first reset, so they are made concurrently. TRL's tool loop calls each rollout's tools one rollout at a time,
so the trainer waits on every sandbox round trip in turn. All of one turn's calls are known before the first is made
(the turn's completions are generated as one batch), so at the first call of a turn every rollout's calls are started
on a thread pool, each rollout's in its own order, and TRL's calls pick up their results; the results, their order
and the errors TRL sees are the same as when run one by one, since the rollouts act on separate sandboxes.

The time the trainer's thread spends blocked in tool calls is logged per step as `tools/blocked_s` (in
metrics.jsonl). ARENA_SERIAL_TOOLS=1 turns the overlap off (the baseline bench/tool_overlap.py compares against).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Protocol

SERIAL_VARIABLE = "ARENA_SERIAL_TOOLS"
BLOCKED_METRIC = "tools/blocked_s"
ToolCall = tuple[str, dict[str, Any]]  # a tool's name and its arguments
Tool = Callable[..., object]  # one of a rollout's tools, called with its arguments by name


class CallResult(Future[object]):
    """The result of one tool call, started ahead of TRL's call; it knows which call it is the result of."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__()
        self.call = call


class MakesInstances(Protocol):
    """What start_instances needs of the rollout pool (training.environment.RolloutPool)."""

    @property
    def executor(self) -> Executor: ...

    def initial_state(self, instance: int) -> object: ...


class TurnCalls:
    """One generation batch's tool calls: started together per turn, consumed in TRL's order."""

    def __init__(self, completions: list[list[dict[str, Any]]], tools: list[dict[str, Tool]], workers: int,
                 serial: bool) -> None:
        self.completions, self.tools, self.serial = completions, tools, serial
        self.pool = None if serial else ThreadPoolExecutor(max_workers=max(1, workers),
                                                           thread_name_prefix="arena-tools")
        self.started: dict[int, list[CallResult]] = {}  # per assistant message (by id): one future per call
        self.taken: dict[int, int] = {}
        self.blocked_s = 0.0
        self._lock = threading.Lock()

    def wrapped(self) -> list[dict[str, Tool]]:
        """The rollouts' tool dicts with every tool going through `call`."""
        return [{name: self._wrapper(rollout, name, tool) for name, tool in tools.items()}
                for rollout, tools in enumerate(self.tools)]

    def close(self) -> None:
        """Wait for anything still running (a call TRL rolled back still ran, as it would have serially)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def _wrapper(self, rollout: int, name: str, tool: Tool) -> Tool:
        def call(**arguments: object) -> object:
            started = time.perf_counter()
            try:
                future = None if self.serial else self._future(rollout, name, arguments)
                return future.result() if future is not None else tool(**arguments)
            finally:
                self.blocked_s += time.perf_counter() - started

        call.__name__ = name
        return call

    def _future(self, rollout: int, name: str, arguments: dict[str, Any]) -> CallResult | None:
        """This call's result, started with the whole turn's calls on its first call; None to call it directly."""
        message = self.completions[rollout][-1]
        with self._lock:
            if id(message) not in self.started:
                self._start_turn()
            futures = self.started.get(id(message), [])
            index = self.taken.get(id(message), 0)
            self.taken[id(message)] = index + 1
        if index >= len(futures) or futures[index].call != (name, arguments):
            return None
        return futures[index]

    def _start_turn(self) -> None:
        assert self.pool is not None
        for rollout, messages in enumerate(self.completions):
            message = messages[-1] if messages else {}
            if message.get("role") != "assistant" or not message.get("tool_calls") or id(message) in self.started:
                continue
            calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
                     if c.get("type") == "function" and c["function"]["name"] in self.tools[rollout]]
            self.started[id(message)] = self._run_in_order(rollout, calls)

    def _run_in_order(self, rollout: int, calls: list[ToolCall]) -> list[CallResult]:
        """One task per rollout runs its calls in their order; each call's result lands in its own future."""
        futures = [CallResult(call) for call in calls]

        def run() -> None:
            for (name, arguments), future in zip(calls, futures, strict=True):
                try:
                    future.set_result(self.tools[rollout][name](**arguments))
                except Exception as exc:  # TRL turns a tool's exception into an error result: raised where it calls
                    future.set_exception(exc)

        assert self.pool is not None
        self.pool.submit(run)
        return futures


def start_instances(pool: MakesInstances, rows: list[dict[str, Any]]) -> None:
    """Start making every instance the batch's rows name, on the rollout pool (a failure is seen by its reset)."""
    for instance in dict.fromkeys(int(row["instance"]) for row in rows if "instance" in row):
        pool.executor.submit(pool.initial_state, instance)


def overlapping_tools(trainer_class: type, workers: int, pool: MakesInstances | None = None) -> type:
    """A GRPOTrainer subclass that starts a batch's instances together (with `pool`) and overlaps the tool calls of
    different rollouts."""

    class OverlappingTools(trainer_class):  # type: ignore[misc]  # its base is an argument: TRL's trainer, lazily imported
        _sync_tool_dicts: list[dict[str, Tool]]  # TRL's: each rollout's tools by name

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]], *rest: object,
                                            **options: object) -> object:
            if pool is not None:
                start_instances(pool, inputs)
            return super()._generate_and_score_completions(inputs, *rest, **options)

        def _tool_call_loop(self, prompts: list[Any], prompt_ids: list[Any], completion_ids: list[Any],
                            completions: list[list[dict[str, Any]]], *rest: object) -> object:
            turn = TurnCalls(completions, self._sync_tool_dicts, workers, os.environ.get(SERIAL_VARIABLE) == "1")
            originals, self._sync_tool_dicts = self._sync_tool_dicts, turn.wrapped()
            try:
                return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *rest)
            finally:
                self._sync_tool_dicts = originals
                turn.close()
                mode = "train" if self.model.training else "eval"
                self._metrics[mode][BLOCKED_METRIC].append(turn.blocked_s)

    return OverlappingTools
