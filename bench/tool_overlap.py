"""Benchmark: the rollout loop's idle time on the CPU recipe, tool calls one rollout at a time (TRL's own loop) vs.
overlapped across rollouts (training/tool_overlap.py).

Runs the same short `cpu-small` training twice on the same package and seeds (no pre-flight, no in-domain lift):
once with ARENA_SERIAL_TOOLS=1 (the baseline: every tool call waited for in turn), once overlapped. Prints, per run,
the trainer's time blocked in tool calls per step (`tools/blocked_s` in metrics.jsonl), the step times, and the
ratios baseline / overlapped. The model samples the same way in both runs (same seeds), but its tool calls differ
between steps, so compare the blocked time per tool call too.

    .venv/bin/python bench/tool_overlap.py [--package tests/fixtures/training/echo-word] [--steps 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")


def recipe_without_extras(folder: Path) -> Path:
    """cpu-small with no in-domain lift (the pre-flight is skipped on the command line)."""
    text = (ROOT / "training" / "recipes" / "cpu-small.yaml").read_text()
    text = text.replace("in_domain:\n  instances: 2", "in_domain:\n  instances: 0").replace(
        "name: cpu-small", "name: cpu-small-bench")
    path = folder / "cpu-small-bench.yaml"
    path.write_text(text)
    return path


def run(package: str, recipe: Path, steps: int, out: Path, serial: bool) -> list[dict]:
    env = {**os.environ, "ARENA_SERIAL_TOOLS": "1" if serial else "0"}
    done = subprocess.run([ARENA, "train", package, "--recipe", str(recipe), "--steps", str(steps), "--out",
                           str(out), "--skip-preflight"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"arena train failed ({done.returncode}): {done.stderr[-3000:]}")
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


def describe(name: str, lines: list[dict]) -> tuple[float, float, float]:
    blocked = [x.get("tools/blocked_s", 0.0) for x in lines]
    calls = sum(x.get("tool_calls_mean", 0.0) * x.get("episodes", 0) for x in lines)
    steps = [x.get("step_time", 0.0) for x in lines]
    per_call = sum(blocked) / calls if calls else 0.0
    print(f"{name:>10}: blocked in tools {', '.join(f'{b:.2f}' for b in blocked)} s per step "
          f"({per_call * 1000:.0f} ms per call over {calls:.0f} calls); step times "
          f"{', '.join(f'{s:.1f}' for s in steps)} s")
    return statistics.fmean(blocked), per_call, statistics.fmean(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(ROOT / "tests" / "fixtures" / "training" / "echo-word"))
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-tools-"))
    recipe = recipe_without_extras(scratch)
    serial = describe("serial", run(args.package, recipe, args.steps, scratch / "serial", serial=True))
    overlapped = describe("overlapped", run(args.package, recipe, args.steps, scratch / "overlap", serial=False))
    ratio = [s / o if o else float("inf") for s, o in zip(serial, overlapped, strict=True)]
    print(f"ratio serial / overlapped: blocked time per step {ratio[0]:.2f}x, per tool call {ratio[1]:.2f}x, "
          f"step time {ratio[2]:.2f}x")


if __name__ == "__main__":
    main()
