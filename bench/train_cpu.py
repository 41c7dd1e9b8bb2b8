"""Benchmark: a complete `cpu-small` training run on this machine, and a kill-and-resume, with peak memory.

Runs `arena train` (the small model, GRPO + LoRA over real sandbox episodes) for N steps, kills a second run after its
first checkpoint and resumes it, and prints each phase's wall time and the peak resident memory of the training
process (target: under 4 GiB) and the share of step time spent waiting on containers (from metrics.jsonl). The model
conversion and warm-up are cached after the first run on a machine; `--cold` clears that cache first.

    .venv/bin/python bench/train_cpu.py [--package tests/fixtures/training/echo-word] [--steps 4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")


def run(command: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in GiB of the child) for one command that must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return seconds, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(ROOT / "tests" / "fixtures" / "training" / "echo-word"))
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--cold", action="store_true", help="clear the model cache first (conversion + warm-up)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-train-"))
    env = os.environ.copy()
    if args.cold:
        env["ARENA_MODEL_CACHE"] = str(scratch / "models")
    os.environ.update(env)
    base = [ARENA, "train", args.package, "--recipe", "cpu-small", "--skip-calibration", "--steps", str(args.steps)]
    seconds, peak = run([*base, "--out", str(scratch / "whole")])
    lines = [json.loads(x) for x in (scratch / "whole" / "metrics.jsonl").read_text().splitlines()]
    waits = [x["container_share"] for x in lines if "container_share" in x]
    print(f"complete run, {args.steps} steps: {seconds:.0f} s, peak memory {peak:.2f} GiB (target < 4 GiB)")
    step_times = ", ".join(f"{x.get('step_time', 0):.0f} s" for x in lines)
    print(f"  per step: {step_times}")
    shares = ", ".join(f"{w:.1%}" for w in waits)
    print(f"  share of step time waiting on containers: {shares}")
    killed = subprocess.Popen([*base, "--out", str(scratch / "killed")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while not list((scratch / "killed" / "checkpoints").glob("checkpoint-*/trainer_state.json")):
        time.sleep(1)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    until_kill = time.perf_counter() - started
    subprocess.run([ARENA, "gc"], check=False, stdout=subprocess.DEVNULL)
    resumed, _ = run([*base, "--out", str(scratch / "killed"), "--resume"])
    print(f"killed after the first checkpoint ({until_kill:.0f} s), resumed to the end in {resumed:.0f} s: "
          f"train + resume {until_kill + resumed:.0f} s")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
