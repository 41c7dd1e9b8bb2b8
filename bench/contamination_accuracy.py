"""Benchmark: how often the contamination gate is wrong, on real text (the figures scoring/README.md quotes).

False positives: the gate against the sample suite with all 64 listed instances, scanning
- the bundled environments (every file, their code, three instances each);
- each sample-suite package against the other seven packages and their items (files, code, three instances);
- the interop fixtures (BenchFlow, Harbor and Terminal-Bench tasks: files and code);
- unrelated text: the licences in /usr/share/common-licenses and installed distributions, and generic configuration
  (this repository's pyproject, workflows, Dockerfiles, schemas and docs, /etc/*.conf).
Each line gives texts scanned, texts flagged, packages flagged, and the closest call: the highest share of
content-word pairs (near duplicates: flagged at 0.2 with at least 12 shared) and of normalised code runs (flagged
at 0.5 with at least 30 shared) any honest text reached.

Detection: every prose text of the suite (prompts, rendered instance prompts, instance text files of 40 words or
more) with one word in 8, 6, 3 and 2 substituted by unrelated words at random positions (5 draws each), against
what the gate flags and what the previous near-duplicate rule (3-word shingles, Jaccard >= 0.5) would have; and
every suite Python file with its own names renamed, comments dropped and docstrings replaced.

    .venv/bin/python bench/contamination_accuracy.py
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.contamination import (
    CODE_SHARE,
    MIN_SHARED_CODE,
    MIN_SHARED_PAIRS,
    PAIR_SHARE,
    Document,
    SuiteIndex,
    as_code,
    hashed,
    submission_documents,
)
from scoring.suite import Suite, load_suite
from scoring.suite_instances import InstanceCache, suite_cache, suite_instances
from scoring.text_hashes import run_hashes, word_hashes
from taskpkg.loader import load_package
from tests.support.contamination import paraphrase, rename_code, unrelated_texts
from tests.support.suites import instance_here

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = (3, 500, 999)


def shares(index: SuiteIndex, document: Document) -> tuple[np.ndarray, np.ndarray]:
    """The suite texts sharing enough with this one to be judged, and the share (of the smaller set) of each."""
    found = hashed([document])
    postings, query, minimum = ((index.code, found.code[0], MIN_SHARED_CODE) if document.code
                                else (index.pairs, found.pairs[0], MIN_SHARED_PAIRS))
    documents, shared, size = postings.shared(query)
    enough = shared >= minimum
    return documents[enough], shared[enough] / np.minimum(postings.sizes[documents[enough]], size)


def closest(index: SuiteIndex, document: Document) -> float:
    """The highest share this text reaches with any suite text."""
    return float(shares(index, document)[1].max(initial=0.0))


def false_positives(label: str, index_of: dict[str, SuiteIndex], corpus: dict[str, list[Document]]) -> None:
    """Scan each package's documents with its index; print what was flagged and the closest calls."""
    texts = flagged = packages = 0
    prose = code = 0.0
    for name, documents in corpus.items():
        index = index_of.get(name) or index_of[""]
        result = index.scan(documents)
        texts += len(documents)
        flagged += len({(m.submitted, m.kind == "code") for m in result.matches})
        packages += result.verdict == "flagged"
        for document in documents:
            if document.code:
                code = max(code, closest(index, document))
            else:
                prose = max(prose, closest(index, document))
    print(f"  {label:44} {texts:5} texts, {flagged} flagged ({flagged / max(texts, 1):.1%}); {packages} of "
          f"{len(corpus)} packages flagged; closest: pairs {prose:.2f} (flag {PAIR_SHARE}), code {code:.2f} "
          f"(flag {CODE_SHARE})")


def package_documents(root: Path) -> list[Document]:
    package = load_package(root).package
    return submission_documents(root, package, {n: instance_here(package, n) for n in SAMPLES})


def without(suite: Suite, texts: dict, name: str) -> SuiteIndex:
    rest = dataclasses.replace(suite, items=tuple(i for i in suite.items if i.package != name),
                               packages={k: p for k, p in suite.packages.items() if p.name != name})
    return SuiteIndex.of_suite(rest, {key: text for key, text in texts.items() if key[0] != name})


def shingle_jaccard(a: str, b: str) -> float:
    """The previous near-duplicate rule's measure: Jaccard similarity of word-3-shingle sets."""
    first, second = (set(run_hashes(word_hashes(t), 3).tolist()) for t in (a, b))
    return len(first & second) / max(len(first | second), 1)


def detection(index: SuiteIndex) -> None:
    prose = [d for d in index.documents if not d.code and len(d.text.split()) >= 40 and d.text.count(",") < 100]
    number = {id(d): n for n, d in enumerate(index.documents)}
    for every in (8, 6, 3, 2):
        caught = near = before = trials = 0
        lowest = 1.0
        for seed in range(5):
            for document in prose:
                copy = paraphrase(document.text, every=every, seed=seed)
                held, share = shares(index, Document("copy.md", copy))
                lowest = min(lowest, float(share[held == number[id(document)]].max(initial=0.0)))
                kinds = {m.kind for m in index.scan([Document("copy.md", copy)]).matches
                         if m.suite == document.source}
                trials += 1
                caught += bool(kinds)
                near += "near_duplicate" in kinds
                before += shingle_jaccard(copy, document.text) >= 0.5 or "ngram" in kinds
        print(f"  one word in {every}: flagged {caught / trials:6.1%} (near duplicate alone {near / trials:6.1%}, "
              f"lowest pair share {lowest:.2f}); the previous rules {before / trials:6.1%}  ({trials} copies of "
              f"{len(prose)} texts)")
    code = [d for d in index.documents if d.code and d.source.endswith(".py")]
    renamed = sum(bool([m for m in index.scan([Document("copy.py", rename_code(d.text), code=True)]).matches
                        if m.suite == d.source]) for d in code)
    print(f"  renamed Python files (generators, verifiers, oracles): {renamed} of {len(code)} flagged as code")


def main() -> None:
    suite = load_suite(ROOT / "suites" / "sample" / "suite.yaml")
    texts = suite_instances(suite, None, suite_cache(suite)).texts  # the instances, from the suite's gate cache
    if len(texts) < len(suite.items):  # a sample package changed since: its generators run here (they are ours)
        with tempfile.TemporaryDirectory() as cache:
            texts = suite_instances(suite, instance_here, InstanceCache(Path(cache)), workers=2).texts
    index = SuiteIndex.of_suite(suite, texts)
    print(f"the sample suite: {len(suite.packages)} packages, {len(texts)} instances, {len(index.documents)} texts "
          "and source files indexed")
    print("false positives")
    bundled = {p.name: package_documents(p) for p in sorted((ROOT / "environments").iterdir())
               if (p / "task.md").is_file()}
    false_positives("bundled environments vs the sample suite", {"": index}, bundled)
    sample = {p.name: package_documents(p) for p in suite.packages.values() for p in [p.root]}
    false_positives("each sample package vs the other items", {name: without(suite, texts, name) for name in sample},
                    sample)
    interop = {f"{kind}/{task.name}": submission_documents(task)
               for kind in ("benchflow", "harbor", "terminal-bench")
               for task in sorted((ROOT / "tests" / "fixtures" / "interop" / kind).iterdir()) if task.is_dir()}
    false_positives("interop fixtures (BenchFlow, Harbor, T-Bench)", {"": index}, interop)
    false_positives("licences and generic configuration files", {"": index},
                    {d.source: [d, *as_code([d])] for d in unrelated_texts()})
    print("detection")
    detection(index)


if __name__ == "__main__":
    main()
