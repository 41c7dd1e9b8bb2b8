"""Benchmark: `scripts/main` from a fresh clone, then again on a new commit, phase by phase.

Clones this checkout's committed branch into a temporary folder and runs `scripts/main` there with every cache of
the arena pointed into that folder (XDG_CACHE_HOME: the prepared models, the check results, the base arm's scores,
the launch records; nothing of ~/.cache/posttrain-arena is read or written). pip's and apt's downloads stay where
they are (the package registries' caches), and the Docker engine keeps its images: the environments' images are
tagged by their content, so one another run on this machine built is reused (each builds in seconds). Then it commits
a change to the environment (a comment in its verifier, as a contributor's next push) and runs `scripts/main` again:
the second run on a new commit. Prints each phase of both runs, the load average around each, and the ratio to its
target (fresh < 10 minutes, second run < 3 minutes on a 2-core machine).

    .venv/bin/python bench/first_run.py [--keep] [--environment word-list]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIME_LINE = re.compile(r"^arena-main: time: (\s*\S.*?)\s+(\d+) s$")
TARGETS = {"fresh clone": 600.0, "second run, new commit": 180.0}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_main(clone: Path, env: dict[str, str], log: Path) -> tuple[float, list[tuple[str, int]], str, str]:
    """(wall seconds, the phases scripts/main reports, load before, load after) of one run that must succeed."""
    before = load()
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(["bash", "scripts/main"], cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    wall = time.monotonic() - started
    text = log.read_text(errors="replace")
    if done.returncode != 0:
        sys.exit(f"scripts/main failed (exit {done.returncode}); its output is in {log}:\n{text[-3000:]}")
    phases = [(m.group(1).rstrip(), int(m.group(2))) for m in map(TIME_LINE.match, text.splitlines()) if m]
    return wall, phases, before, load()


def report(title: str, wall: float, phases: list[tuple[str, int]], before: str, after: str) -> None:
    target = TARGETS[title]
    print(f"\n{title}: {wall:.0f} s wall ({wall / 60:.1f} min), {wall / target:.2f} x the target of {target:.0f} s "
          f"(load average {before} before, {after} after, {os.cpu_count()} cores)")
    for name, seconds in phases:
        print(f"  {name:<22} {seconds:5d} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--environment", default="word-list")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (clone, caches, logs)")
    args = parser.parse_args()
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                      text=True, check=True).stdout.strip():
        print("note: uncommitted changes are not in the clone; the benchmark runs the committed branch",
              file=sys.stderr)
    branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-first-run-"))
    clone = scratch / "arena"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", "--branch", branch, str(ROOT), str(clone)], check=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(scratch / "cache"),
           "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"),
           "ARENA_OWNER": f"bench-first-run-{os.getpid()}", "ARENA_MAIN_ENVIRONMENT": args.environment}
    for variable in ("ARENA_MODEL_CACHE", "ARENA_CHECK_CACHE", "ARENA_SCORE_CACHE", "ARENA_LAUNCH_DIR",
                     "VIRTUAL_ENV"):
        env.pop(variable, None)
    print(f"fresh clone of {branch} in {clone}; caches under {scratch / 'cache'}")
    try:
        fresh = run_main(clone, env, scratch / "fresh.log")
        report("fresh clone", *fresh)
        verifier = clone / "environments" / args.environment / "verifier.py"
        verifier.write_text(verifier.read_text() + "\n# A contributor's next push.\n")
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", "commit", "-q", "-am",
                        "bench: a new commit of the environment"], cwd=clone, check=True)
        again = run_main(clone, env, scratch / "second.log")
        report("second run, new commit", *again)
        print(f"\nlogs: {scratch}/fresh.log, {scratch}/second.log")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
