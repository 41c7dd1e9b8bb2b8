"""Benchmark: the rollout loop's idle time in tool calls on the CPU recipe, TRL's loop (each rollout's calls one
rollout at a time) vs. calls overlapped across rollouts (training/tool_overlap.py).

The trainer's thread is idle while a tool call runs in a sandbox. This drives exactly what TRL's tool loop does, on
real sandbox episodes of the package with the cpu-small recipe's settings (G rollouts of one instance, its command
time-out, output limit and `episodes.concurrency`): per turn, every rollout's tool calls in rollout order through the
rollouts' tool dicts, wrapped by `TurnCalls` in serial mode (the baseline: the calls as TRL makes them) or overlapped.
The model is replaced by a fixed script of calls (the same in both modes: inspect the files, write an answer, check
it; each shell command given `--command-seconds` of its own work), so the two modes do identical sandbox work.
Prints the trainer's blocked seconds per group for each mode and the ratio serial / overlapped (median over
rounds; the first call of a rollout includes waiting for its container).

    .venv/bin/python bench/tool_overlap.py [--package tests/fixtures/training/echo-word] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.sandbox import Sandbox  # noqa: E402
from taskpkg.loader import load_package  # noqa: E402
from training.environment import ArenaEnvironment, RolloutPool, finish  # noqa: E402
from training.evaluate import chat_settings  # noqa: E402
from training.recipe import load_recipe  # noqa: E402
from training.tool_overlap import TurnCalls  # noqa: E402


def script(command_s: float) -> list[list[tuple[str, dict]]]:
    """The calls each rollout makes, one turn per entry; every shell command also takes `command_s` of its own time
    (an agent's commands do work: docs/TRAINING.md assumed 0.2 s)."""
    work = f"; sleep {command_s}" if command_s else ""
    return [[("shell", {"command": f"ls -la /workspace && head -c 400 /workspace/* 2>/dev/null | head -20{work}"})],
            [("write_file", {"path": "answer.txt", "content": "amber"}),
             ("shell", {"command": f"wc -c /workspace/answer.txt{work}"})],
            [("shell", {"command": f"cat /workspace/answer.txt{work}"})]]


def play_round(pool: RolloutPool, instance: int, rollouts: int, serial: bool, workers: int,
               turns: list[list[tuple[str, dict]]]) -> float:
    """One group of rollouts through the scripted turns; the trainer's seconds blocked in tools."""
    environments = [ArenaEnvironment(pool) for _ in range(rollouts)]
    for environment in environments:
        environment.reset(instance=instance)
    completions: list[list[dict]] = [[] for _ in environments]
    blocked = 0.0
    for turn in turns:
        for messages in completions:
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": name, "arguments": arguments}} for name, arguments in turn]})
        tools = [{name: getattr(e, name) for name in ("shell", "write_file", "end_scene")} for e in environments]
        calls = TurnCalls(completions, tools, workers, serial)
        wrapped = calls.wrapped()
        for rollout, messages in enumerate(completions):  # TRL's order: rollout after rollout, calls in order
            results = [wrapped[rollout][name](**arguments) for name, arguments in turn]
            messages.extend({"role": "tool", "name": name, "content": str(r)} for (name, _), r in zip(turn, results,
                                                                                                    strict=True))
        calls.close()
        blocked += calls.blocked_s
    for environment in environments:
        finish(environment)
    return blocked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(ROOT / "tests" / "fixtures" / "training" / "echo-word"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--command-seconds", type=float, default=0.2, help="each shell command's own time")
    args = parser.parse_args()
    recipe = load_recipe("cpu-small")
    package = load_package(Path(args.package)).package
    assert package is not None, f"{args.package} does not load"
    rollouts, workers = recipe.grpo.num_generations, recipe.episodes.concurrency
    times: dict[str, list[float]] = {"serial": [], "overlapped": []}
    turns = script(args.command_seconds)
    with Sandbox() as sandbox:
        sandbox.image(package)
        pool = RolloutPool(sandbox, package, chat_settings(recipe, 64).tools, workers)
        try:
            pool.initial_state(0)  # the committed instance, made once as training makes it
            for _ in range(args.rounds):
                for mode in ("serial", "overlapped"):
                    started = time.perf_counter()
                    blocked = play_round(pool, 0, rollouts, mode == "serial", workers, turns)
                    times[mode].append(blocked)
                    print(f"{mode:>10}: blocked {blocked:.2f} s over {len(turns)} turns of {rollouts} rollouts "
                          f"(round {time.perf_counter() - started:.1f} s with verification)", flush=True)
        finally:
            pool.close()
    serial, overlapped = statistics.median(times["serial"]), statistics.median(times["overlapped"])
    print(f"cpu-small ({rollouts} rollouts, {workers} workers, commands of {args.command_seconds} s): trainer "
          f"blocked in tools {serial:.2f} s serial vs "
          f"{overlapped:.2f} s overlapped per group; ratio serial / overlapped {serial / overlapped:.2f}x")


if __name__ == "__main__":
    main()
