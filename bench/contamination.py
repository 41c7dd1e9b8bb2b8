"""Benchmark: the whole contamination gate, one environment against a 5,000-item suite with its instances and code
(target: under a minute here), as `arena score --contamination-only` runs it.

The suite is generated on disk: 100 task packages (families) of 50 items each, over the eight domains. A package
has a prompt of about 300 words, a data file, and a generator, a verifier and an oracle of generated Python (about
600 lines a family, every family's program different). Each item's instance, already in the suite's gate cache as
`arena suite index` leaves it, has a rendered prompt, a memo of about 150 words, a CSV of 200 rows and a JSON file
of 40 records, from a fixed vocabulary (so sequences repeat across items as in real suites). The gate reads the
cache, indexes everything (13-grams, whole texts, content-word pairs, normalised code) and scans every file, the
code and three sampled instances (made in the sandbox when an engine answers, else on this machine) of a bundled
environment. Each phase and the total are printed, with the content-word pair index against a bare Python
implementation of the same index (dict of hash → documents) on the same texts, and planted copies are checked.

    .venv/bin/python bench/contamination.py [--families 100] [--environment environments/ledger-reconciliation]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.engine import engine_available
from scoring.contamination import (
    COMMON_SHARE,
    MIN_COMMON_GROUPS,
    Document,
    InstanceText,
    SuiteIndex,
    hashed,
    submission_documents,
)
from scoring.gate_run import run_gate, sample_numbers
from scoring.hash_index import Postings, holdings
from scoring.suite import Suite, load_suite
from scoring.suite_instances import listed_instances, suite_cache, suite_instances
from scoring.text_hashes import EMPTY, PAIR_GAP
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from tests.support.contamination import paraphrase, rename_code
from tests.support.packages import make_valid_package
from tests.support.suites import instance_here

FAMILY = 50
SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vu", "pe", "dor", "sil", "an", "qua", "zen", "bri", "mo", "tec", "ul"]
OPERATORS = ["+", "-", "*", "//", "%", "<", ">", "==", "and", "or"]

T = TypeVar("T")



def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(size)]


def expression(rng: random.Random, names: list[str], depth: int = 0) -> str:
    roll = rng.random()
    if depth > 2 or roll < 0.3:
        return rng.choice(names) if rng.random() < 0.7 else str(rng.randint(0, 999))
    if roll < 0.6:
        return f"({expression(rng, names, depth + 1)} {rng.choice(OPERATORS)} {expression(rng, names, depth + 1)})"
    if roll < 0.8:
        arguments = ", ".join(expression(rng, names, depth + 1) for _ in range(rng.randint(0, 3)))
        return f"{rng.choice(names)}({arguments})"
    return f"{rng.choice(names)}[{expression(rng, names, depth + 1)}]"


def block(rng: random.Random, names: list[str], indent: int, lines: int) -> list[str]:
    """Random statements, nested, so that every family's program has a shape of its own."""
    pad, out = "    " * indent, []
    while len(out) < lines:
        roll = rng.random()
        if roll < 0.45 or indent > 2:
            out.append(f"{pad}{rng.choice(names)} = {expression(rng, names)}")
        elif roll < 0.6:
            out.append(f"{pad}if {expression(rng, names)}:")
            out += block(rng, names, indent + 1, rng.randint(1, 4))
        elif roll < 0.75:
            out.append(f"{pad}for {rng.choice(names)} in {expression(rng, names)}:")
            out += block(rng, names, indent + 1, rng.randint(1, 4))
        elif roll < 0.85:
            out.append(f"{pad}{rng.choice(names)}.append({expression(rng, names)})")
        else:
            out.append(f"{pad}return {expression(rng, names)}")
    return out


def program(rng: random.Random, words: list[str], lines: int) -> str:
    names = rng.sample(words, 30)
    out = ['"""A generated program."""', "", "import json", ""]
    while len(out) < lines:
        out += [f"def {rng.choice(names)}({', '.join(rng.sample(names, 3))}):", *block(rng, names, 1, 12), ""]
    return "\n".join(out) + "\n"


def write_suite(root: Path, families: int, seed: int = 1) -> Path:
    """The suite folder with every package and its gate cache filled; returns the manifest."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    items = []
    for family in range(families):
        domain = DOMAINS[family % len(DOMAINS)]
        package = make_valid_package(root / "packages", f"family-{family}", domain)
        template = " ".join(rng.choice(words) for _ in range(300))
        (package / "task.md").write_text((package / "task.md").read_text() + f"\n{template}\n")
        (package / "instance" / "generate.py").write_text(program(rng, words, 300))
        (package / "verifier.py").write_text(program(rng, words, 180))
        (package / "oracle" / "solve.py").write_text(program(rng, words, 120))
        (package / "environment" / "glossary.txt").write_text(" ".join(rng.choice(words) for _ in range(400)))
        numbers = sorted(rng.sample(range(1000), FAMILY))
        items.append({"package": f"packages/family-{family}", "domain": domain, "cluster": f"family-{family}",
                      "instances": numbers})
    counts = {d: sum(len(i["instances"]) for i in items if i["domain"] == d) for d in DOMAINS}
    manifest = root / "suite.yaml"
    manifest.write_text(json.dumps({"suite_version": 1, "name": "bench", "version": "1.0.0", "public": False,
                                    "canary": "bench-suite-canary:0123456789abcdef", "domains": counts,
                                    "items": items}))
    suite = load_suite(manifest)
    cache = suite_cache(suite)
    for package, numbers in listed_instances(suite).values():
        template = package.body.split()
        cache.save(package, {n: instance(rng, words, template) for n in numbers})
    return manifest


def instance(rng: random.Random, words: list[str], template: list[str]) -> InstanceText:
    prompt = list(template)
    for position in rng.sample(range(len(prompt)), 20):  # instance values filled into the template
        prompt[position] = str(rng.randint(0, 99_999))
    memo = " ".join(rng.choice(words) for _ in range(150))
    rows = "\n".join(f"{rng.randint(1, 10**6)},{rng.choice(words)},{rng.random():.4f}" for _ in range(200))
    records = json.dumps([{"id": rng.randint(1, 10**6), "name": rng.choice(words), "amount": rng.randint(1, 9999)}
                          for _ in range(40)])
    return InstanceText(" ".join(prompt), {"memo.txt": memo, "data.csv": rows, "records.json": records})


def timed(call: Callable[[], T]) -> tuple[T, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def bare_pair_index(pairs: np.ndarray, holders: np.ndarray, groups: list[str], limit: float) -> dict[int, set[int]]:
    """The content-word pair index written plainly: a dict from pair hash to the documents holding it, less the
    pairs found in `limit` groups or more."""
    index: dict[int, set[int]] = defaultdict(set)
    for value, holder in zip(pairs.tolist(), holders.tolist(), strict=True):
        index[value].add(holder)
    return {value: held for value, held in index.items() if len({groups[n] for n in held}) < limit}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", type=int, default=100)
    parser.add_argument("--environment", type=Path, default=Path("environments/ledger-reconciliation"))
    args = parser.parse_args()
    environment = args.environment.resolve()
    root = Path(tempfile.mkdtemp(prefix="arena-bench-gate-"))
    try:
        manifest, built, _ = timed(lambda: write_suite(root, args.families))
        engine = engine_available()
        report(manifest, environment, engine, built)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(manifest: Path, environment: Path, engine: bool, built: float) -> None:
    suite: Suite = load_suite(manifest)
    read, read_wall, read_cpu = timed(lambda: suite_instances(suite, None, suite_cache(suite)))
    texts = read.texts
    index, index_wall, index_cpu = timed(lambda: SuiteIndex.of_suite(suite, texts))
    package = load_package(environment).package
    samples = {n: instance_here(package, n) for n in sample_numbers(package.instance_count, 3, random.Random(5))}
    result, scan_wall, scan_cpu = timed(lambda: index.scan(submission_documents(environment, package, samples)))
    gate, gate_wall, gate_cpu = timed(lambda: run_gate(suite, environment, package, 3, engine=engine,
                                                       say=lambda _: None))
    size = sum(len(t.prompt) + sum(map(len, t.files.values())) for t in texts.values()) / 2**20
    print(f"{len(suite.items)} suite items of {len(suite.packages)} packages, {len(texts)} instances in the gate "
          f"cache ({size:.0f} MiB of text; the suite took {built:.0f} s to write), against {environment.name}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("                                    wall       CPU (this process: what an idle machine's wall time "
          "would be)")
    print(f"  read the gate cache             {read_wall:6.2f} s   {read_cpu:6.2f} s")
    print(f"  index the suite                 {index_wall:6.2f} s   {index_cpu:6.2f} s   "
          f"({len(index.documents)} texts and files)")
    print(f"  scan the package (3 samples)    {scan_wall:6.2f} s   {scan_cpu:6.2f} s   verdict {result.verdict}")
    where = "in the sandbox" if engine else "here (no engine)"
    print(f"  the whole gate, samples {where:16} {gate_wall:6.2f} s   {gate_cpu:6.2f} s   verdict {gate.verdict}"
          f"   target < 60 s: {'met' if gate_wall < 60 else 'MISSED'}")
    compare_bare(index)
    planted(index, suite, texts)


def compare_bare(index: SuiteIndex) -> None:
    """The content-word pair index over the same (already hashed) pairs: ours against a plain dict of sets."""
    pairs, holders = hashed(index.documents).pairs
    groups = [d.group for d in index.documents]
    limit = max(MIN_COMMON_GROUPS, COMMON_SHARE * len(set(groups)))
    group_of = np.unique(np.array(groups), return_inverse=True)[1]
    _, _, ours = timed(lambda: Postings(holdings(pairs, holders, len(groups), group_of, limit, EMPTY)))
    _, _, bare = timed(lambda: bare_pair_index(pairs, holders, groups, limit))
    print(f"  content-word pair index (gap {PAIR_GAP}, {pairs.size / 1e6:.1f} M pairs, hashed), CPU: sorted arrays "
          f"{ours:.2f} s, a Python dict of sets {bare:.2f} s: {bare / max(ours, 1e-9):.1f}x")


def planted(index: SuiteIndex, suite: Suite, texts: dict) -> None:
    (name, number), made = sorted(texts.items())[len(texts) * 2 // 5]
    package = next(p for p in suite.packages.values() if p.name == name)
    checks = {
        "an instance's files, copied": [Document(f"copy/{k}", v) for k, v in made.files.items()],
        "its prompt, one word in three substituted": [Document("brief.md", paraphrase(made.prompt, 3, seed=2))],
        "its generator, renamed": [Document("generate.py", rename_code(
            (package.root / "instance" / "generate.py").read_text()), code=True)],
    }
    for what, documents in checks.items():
        result = index.scan(documents)
        kinds = sorted({m.kind for m in result.matches})
        print(f"  planted: {what} ({name} instance {number}): {result.verdict} ({', '.join(kinds)})")


if __name__ == "__main__":
    main()
