"""Benchmark: the small model's GGUF -> transformers conversion, as the arena does it (the GGUF file parsed once)
against transformers' own path (parsed for the config, the tokenizer and the weights), in one run.

Each conversion runs in a fresh process (so both pay the imports) into its own temporary cache; the two checkpoints
must be byte for byte the same. Prints each wall time, the ratio and the load average.

    .venv/bin/python bench/model_conversion.py [--rounds 1]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONVERT = """
import sys, contextlib
import agents.models as models
if sys.argv[1] == "plain":
    models.gguf_read_once = contextlib.nullcontext  # transformers' own path: the file parsed for each part
print(models.small_model().path)
"""


def convert(how: str, cache: Path) -> tuple[float, Path]:
    """Wall seconds of one conversion in a fresh process, and the checkpoint it wrote."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CONVERT, how], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "ARENA_MODEL_CACHE": str(cache)})
    if done.returncode != 0:
        sys.exit(f"the {how} conversion failed:\n{done.stderr[-2000:]}")
    return time.monotonic() - started, Path(done.stdout.strip().splitlines()[-1])


def same_files(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        filecmp.cmp(a / name, b / name, shallow=False) for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="arena-bench-conversion-") as scratch:
            load = os.getloadavg()[0]
            plain_s, plain = convert("plain", Path(scratch) / "plain")
            once_s, once = convert("once", Path(scratch) / "once")
            if not same_files(plain, once):
                sys.exit(f"the checkpoints differ: {plain} vs {once}")
            print(f"round {round_ + 1}: transformers' path {plain_s:.1f} s, parsed once {once_s:.1f} s: "
                  f"{plain_s / once_s:.2f}x faster, the same checkpoint (load average {load:.1f} -> "
                  f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
