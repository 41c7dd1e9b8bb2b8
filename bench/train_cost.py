"""Benchmark: what one `arena train` run costs, measured, and the cost of a full run of the recipe derived from it.

Runs `arena train` for a few GRPO steps with the learnability pre-flight (a fresh cache, so it is played) and the
in-domain lift, timestamps every phase from the run's own progress lines, and reads the run's metrics.jsonl and
manifest. From those it derives the cost of a full run of the recipe (its `grpo.steps`), listing every assumption:

- a step costs the median of the measured steps after the first (the first pays for compilation and caches);
- the pre-flight costs its measured seconds per sample times the samples it plays: the first look's at best, all
  `preflight.max_instances` x G at worst;
- the in-domain lift costs its measured seconds per episode times instances x samples x 2 arms;
- start-up (model load, warm-up cache, image) is paid once a run, as measured; checkpoints are inside step times;
- GPU-hours are wall hours times the GPUs the run held (the manifest's count).

    .venv/bin/python bench/train_cost.py                                   # cpu-small on this machine
    python bench/train_cost.py --recipe qwen3-8b-grpo-lora --steps 3       # on one H200: the figures docs/TRAINING.md
                                                                           # quotes for the GPU recipe come from here
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from taskpkg.layouts import MANIFEST_FILE  # noqa: E402
from taskpkg.run_manifest import TrainingManifest  # noqa: E402
from training.recipe import load_recipe  # noqa: E402

ARENA = str(Path(sys.executable).parent / "arena")
MARKS = {"pre-flight:": "preflight", "train step": "train", "in-domain lift:": "in_domain"}


def timed_run(command: list[str], env: dict) -> tuple[dict[str, float], float, str]:
    """Run the command; (first time each phase's line appeared, seconds from the start), total seconds, stderr."""
    started = time.perf_counter()
    first: dict[str, float] = {}
    lines = []
    with subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env) as child:
        assert child.stderr is not None
        for line in child.stderr:
            lines.append(line)
            for mark, phase in MARKS.items():
                if line.startswith(mark) and phase not in first:
                    first[phase] = time.perf_counter() - started
    total = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"arena train failed ({child.returncode}):\n{''.join(lines[-40:])}")
    return first, total, "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", default="cpu-small")
    parser.add_argument("--package", default=str(ROOT / "tests" / "fixtures" / "training" / "echo-word"))
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    recipe = load_recipe(args.recipe)
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-cost-"))
    env = {**os.environ, "ARENA_PREFLIGHT_CACHE": str(scratch / "preflight-cache")}
    out = scratch / "run"
    marks, total, _ = timed_run([ARENA, "train", args.package, "--recipe", args.recipe, "--steps", str(args.steps),
                                 "--out", str(out)], env)
    manifest = TrainingManifest.from_json(json.loads((out / MANIFEST_FILE).read_text()))
    preflight = json.loads((out / "preflight.json").read_text())
    steps = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    step_s = [s["step_time"] for s in steps if s.get("step_time")]
    steady = statistics.median(step_s[1:] or step_s)
    startup = marks.get("preflight", 0.0)
    preflight_s = marks.get("train", total) - startup - step_s[0]  # the first step's line comes after that step
    in_domain_s = total - marks["in_domain"] if "in_domain" in marks else 0.0
    per_sample = preflight_s / max(preflight["samples"], 1)
    lift = manifest.in_domain or {}
    episodes = 2 * len(lift.get("instances") or []) * lift.get("samples", 1)
    per_episode = in_domain_s / max(episodes, 1)
    full = recipe.grpo.steps
    g, pre = recipe.grpo.num_generations, recipe.preflight
    pre_best, pre_worst = pre.instances * g * per_sample, pre.max_instances * g * per_sample
    lift_full = 2 * recipe.in_domain.instances * recipe.in_domain.samples * per_episode
    gpus = int(manifest.gpus or 0)
    hardware = manifest.hardware or {"cpus": "?", "gpus": []}
    where = f"{len(hardware['gpus'])}x {hardware['gpus'][0]}" if hardware["gpus"] else f"CPU ({hardware['cpus']} cores)"
    low, high = startup + pre_best + full * steady + lift_full, startup + pre_worst + full * steady + lift_full
    rows = [("start-up (model, image)", f"measured once: {startup:.0f} s", startup, startup),
            ("pre-flight", f"{per_sample:.1f} s/sample x {pre.instances * g}–{pre.max_instances * g} samples",
             pre_best, pre_worst),
            ("GRPO steps", f"{steady:.1f} s/step (median of {len(step_s)} measured) x {full} steps", full * steady,
             full * steady),
            ("in-domain lift", f"{per_episode:.1f} s/episode x {recipe.in_domain.instances} instances x "
             f"{recipe.in_domain.samples} samples x 2 arms", lift_full, lift_full)]
    print(f"recipe {recipe.name} on {where}; measured run: {args.steps} steps, {preflight['samples']} pre-flight "
          f"samples, {episodes} in-domain episodes, {total:.0f} s wall, step times "
          + ", ".join(f"{s:.1f}" for s in step_s))
    print(f"container share of step time: {statistics.fmean(s.get('container_share', 0) for s in steps):.1%}")
    print("\n| phase | derivation | seconds (best–worst) |\n|---|---|---|")
    for name, how, best, worst in rows:
        print(f"| {name} | {how} | {best:.0f}" + (f"–{worst:.0f}" if worst != best else "") + " |")
    cost = (f"{low / 3600 * gpus:.2f}–{high / 3600 * gpus:.2f} GPU-hours at {gpus} GPU(s)" if gpus else
            "no GPU-hours (a CPU run)")
    print(f"| **full run** | {full} steps | **{low / 3600:.2f}–{high / 3600:.2f} h** wall, {cost} |")


if __name__ == "__main__":
    main()
