"""The contamination gate: does a submitted environment carry the held-out suite's content?

Before any GPU is spent, a submitted package is compared with the suite's packages and items:

- **exact**: a submitted text whose normalised form (NFKC, case-folded, words only) equals a suite text;
- **ngram**: a 13-word sequence shared with a suite text (the long n-gram overlap of GPT-3's decontamination);
- **near_duplicate**: a submitted text whose word-3-shingle Jaccard similarity with a suite text is at least 0.5,
  found with MinHash LSH (`datasketch`): catches copies with light edits;
- **canary**: the suite's canary, or any suite package's own canary, anywhere in the submitted package.

Submitted texts are the task text, every other UTF-8 file of the package (its bundled data and code) and samples
of the generator's output (rendered prompts and instance files, from an injectable `InstanceMaker`: the CLI makes
them in the sandbox). Suite texts are what a model is shown: each suite package's prompt and bundled data files
(not its code, whose imports and frontmatter keys every honest package shares) and, when a maker is given, its
items' generated instances.
Shared boilerplate does not count: sequences found in the scaffold that every package starts from, or in more than
a tenth of the suite's packages (at least three), are ignored.

The public verdict (`GateResult.public`) is pass / flagged with counts only; the matched suite text appears only in
`GateResult.maintainer_report`, which must never be posted publicly.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from datasketch import MinHash, MinHashLSH

from scoring.suite import Suite
from scoring.text_hashes import EMPTY, digit_count, mix64, run_hashes, word_hashes
from taskpkg.model import TaskPackage

NGRAM = 13
SHINGLE = 3
NUM_PERM = 128
MINHASH_SCHEME = "affine32"  # datasketch 2's default for new sketches
NEAR_THRESHOLD = 0.5
MIN_EXACT_TOKENS = 8
MAX_SIGNATURE_WORDS = 20_000  # longer texts (big data files) are left to the exact and n-gram checks
MAX_DIGIT_SHARE = 0.2
MIN_SHINGLES = 12  # a text with fewer distinctive shingles says too little to call it a near duplicate
COMMON_SHARE = 0.10
MIN_COMMON_GROUPS = 3
MAX_FILE_BYTES = 5 * 1024 * 1024
EXCERPT_CHARS = 300
KINDS = ("exact", "ngram", "near_duplicate", "canary")
CODE_SUFFIXES = frozenset({".py", ".sh", ".bash", ".js", ".ts", ".rb", ".pl", ".toml", ".cfg", ".ini", ".lock"})
NOT_CONTENT = frozenset({"Dockerfile", "task.md", ".dockerignore"})

InstanceMaker = Callable[[TaskPackage, int], tuple[dict, dict[str, bytes]]]  # → prompt values, workspace files


@dataclass(frozen=True)
class Document:
    """A text and where it came from (`group`: the package it belongs to, for telling boilerplate from content)."""

    source: str
    text: str
    group: str = ""


@dataclass(frozen=True)
class Match:
    """One finding: which submitted text met which suite text, and the suite text matched (maintainers only)."""

    kind: str
    submitted: str
    suite: str
    excerpt: str


@dataclass(frozen=True)
class GateResult:
    """Everything the gate found."""

    matches: tuple[Match, ...]

    def counts(self) -> dict[str, int]:
        """Per kind, the number of distinct (submitted text, suite text) pairs found."""
        found = {kind: set() for kind in KINDS}
        for match in self.matches:
            found[match.kind].add((match.submitted, match.suite))
        return {kind: len(pairs) for kind, pairs in found.items()}

    @property
    def verdict(self) -> str:
        """pass, or flagged when anything matched."""
        return "flagged" if self.matches else "pass"

    def public(self) -> dict:
        """What may be shown anywhere (the results record's `contamination`): the verdict and counts, no text."""
        return {"verdict": self.verdict, "counts": self.counts()}

    def maintainer_report(self) -> dict:
        """The matches with the suite text they matched: for maintainers only, never for a PR comment or a log."""
        return {**self.public(), "matches": [
            {"kind": m.kind, "submitted": m.submitted, "suite": m.suite, "excerpt": m.excerpt} for m in self.matches]}


def text_files(root: Path, prefix: str = "") -> list[Document]:
    """Every UTF-8 text file under root (no links, none over 5 MiB) as a document named by its relative path."""
    documents = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file() or "__pycache__" in path.parts:
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        documents.append(Document(f"{prefix}{path.relative_to(root).as_posix()}", text, prefix.rstrip("/")))
    return documents


def suite_package_documents(package: TaskPackage) -> list[Document]:
    """What a suite package shows a model: its prompt (the body, no frontmatter) and its bundled data files. Code
    and build files are left out: their boilerplate (imports, frontmatter keys) is shared by honest packages."""
    prefix = f"{package.name}/"
    data = [d for d in text_files(package.root, prefix)
            if Path(d.source).name not in NOT_CONTENT and Path(d.source).suffix not in CODE_SUFFIXES]
    return [Document(f"{prefix}task.md (prompt)", package.body, package.name), *data]


def instance_documents(package: TaskPackage, maker: InstanceMaker, instances: Iterable[int],
                       prefix: str = "") -> list[Document]:
    """The generator's output for some instances: each rendered prompt and every text file it wrote."""
    documents = []
    for instance in instances:
        values, files = maker(package, instance)
        prompt = "\n\n".join(p.text for p in package.scene_prompts(values))
        where = f"{prefix}instance {instance}"
        documents.append(Document(f"{where}: prompt", prompt, prefix.rstrip("/")))
        for name, data in sorted(files.items()):
            try:
                documents.append(Document(f"{where}: {name}", data.decode("utf-8"), prefix.rstrip("/")))
            except UnicodeDecodeError:
                continue
    return documents


def _background() -> tuple[set[int], set[int], set[int]]:
    """13-gram, shingle and whole-text hashes of the scaffold every package starts from: never evidence of
    copying."""
    grams: set[int] = set()
    shingles: set[int] = set()
    exact: set[int] = set()
    for file in _walk(resources.files("taskpkg").joinpath("scaffold_template")):
        hashes = word_hashes(file.read_text(encoding="utf-8"))
        grams.update(run_hashes(hashes, NGRAM).tolist())
        shingles.update(run_hashes(hashes, SHINGLE).tolist())
        key = _exact_key(hashes)
        if key is not None:
            exact.add(key)
    return grams, shingles, exact


def _walk(node: object) -> Iterable:
    if node.is_dir():  # type: ignore[attr-defined]
        for child in node.iterdir():  # type: ignore[attr-defined]
            yield from _walk(child)
    else:
        yield node


@dataclass
class _Indexed:
    document: Document
    exact: int | None
    shingles: np.ndarray


class SuiteIndex:
    """The suite's texts, indexed once for scanning many submissions (array operations throughout: a suite of
    thousands of items holds millions of n-grams)."""

    def __init__(self, documents: Sequence[Document], canaries: Iterable[str]) -> None:
        self.documents = list(documents)
        self.canaries = sorted({c for c in canaries if c})
        background_grams, background_shingles, background_texts = _background()
        hashes = [word_hashes(d.text) for d in self.documents]
        grams = [run_hashes(h, NGRAM) for h in hashes]  # repeats within a text are harmless below
        shingles = [run_hashes(h, SHINGLE) if _prose(d.text, h) else EMPTY for d, h in zip(self.documents, hashes,
                                                                                            strict=True)]
        texts = [np.array([k], dtype=np.uint64) if (k := _exact_key(h)) is not None else EMPTY for h in hashes]
        group_of = _group_numbers(self.documents)
        limit = max(MIN_COMMON_GROUPS, COMMON_SHARE * (int(group_of.max()) + 1 if group_of.size else 0))
        self.ignored_grams = np.union1d(_array(background_grams), _common(grams, group_of, limit))
        self.ignored_shingles = np.union1d(_array(background_shingles), _common(shingles, group_of, limit))
        ignored_texts = np.union1d(_array(background_texts), _common(texts, group_of, limit))
        self.gram_keys, self.gram_docs = _first_owner(grams, self.ignored_grams)
        self.text_keys, self.text_docs = _first_owner(texts, ignored_texts)
        self.permutations = MinHash(num_perm=NUM_PERM, scheme=MINHASH_SCHEME).permutations  # shared by every one
        self.lsh = MinHashLSH(threshold=NEAR_THRESHOLD, num_perm=NUM_PERM)
        self.signatures: dict[int, MinHash] = {}
        with self.lsh.insertion_session() as session:
            for index, values in enumerate(shingles):
                signature = self._signature(values)
                if signature is not None:
                    self.signatures[index] = signature
                    session.insert(str(index), signature)

    def _signature(self, shingles: np.ndarray) -> MinHash | None:
        """The MinHash of a text's shingles (less the ignored), or None when too few are left to judge by."""
        kept = shingles[~_member(shingles, self.ignored_shingles)]
        if kept.size < MIN_SHINGLES:
            return None
        return MinHash(hashvalues=min_hashes(kept, self.permutations), permutations=self.permutations,
                       scheme=MINHASH_SCHEME)

    @classmethod
    def of_suite(cls, suite: Suite, maker: InstanceMaker | None = None) -> SuiteIndex:
        """Every suite package's prompt and data, and (with a maker) each item's generated instance."""
        documents: list[Document] = []
        for package in suite.packages.values():
            documents += suite_package_documents(package)
            if maker is not None:
                listed = sorted(i.instance for i in suite.items if i.path == package.root)
                documents += instance_documents(package, maker, listed, f"{package.name}/")
        canaries = [suite.canary, *(p.canary for p in suite.packages.values())]
        return cls(documents, canaries)

    def scan(self, documents: Sequence[Document]) -> GateResult:
        """Compare a submission's texts with the suite."""
        matches: list[Match] = []
        for document in documents:
            matches += self._scan_one(document)
        return GateResult(tuple(matches))

    def _scan_one(self, document: Document) -> list[Match]:
        found = [Match("canary", document.source, "the suite's canaries", canary)
                 for canary in self.canaries if canary in document.text]
        hashes = word_hashes(document.text)
        exact = _exact_key(hashes)
        if exact is not None:
            found += [self._match("exact", document, i) for i in _lookup(self.text_keys, self.text_docs, [exact])]
        owners = _lookup(self.gram_keys, self.gram_docs, run_hashes(hashes, NGRAM))
        found += [self._match("ngram", document, owner) for owner in sorted(set(owners))]
        signature = self._signature(run_hashes(hashes, SHINGLE)) if _prose(document.text, hashes) else None
        if signature is not None:
            for key in sorted(self.lsh.query(signature), key=int):
                index = int(key)
                if signature.jaccard(self.signatures[index]) >= NEAR_THRESHOLD:
                    found.append(self._match("near_duplicate", document, index))
        return found

    def _match(self, kind: str, document: Document, index: int) -> Match:
        suite_document = self.documents[index]
        return Match(kind, document.source, suite_document.source, suite_document.text[:EXCERPT_CHARS])


def _prose(text: str, hashes: np.ndarray) -> bool:
    """Whether a text is prose, worth a near-duplicate signature: not too long, and not mostly digits (tables of
    numbers are left to the exact and n-gram checks, which catch copied data with any edit short of every row)."""
    return hashes.size <= MAX_SIGNATURE_WORDS and digit_count(text) <= MAX_DIGIT_SHARE * max(len(text), 1)


def _array(values: set[int]) -> np.ndarray:
    return np.array(sorted(values), dtype=np.uint64)


def _group_numbers(documents: Sequence[Document]) -> np.ndarray:
    numbers: dict[str, int] = {}
    return np.array([numbers.setdefault(d.group, len(numbers)) for d in documents], dtype=np.int64)


def _common(per_document: list[np.ndarray], group_of: np.ndarray, limit: float) -> np.ndarray:
    """Values found in at least `limit` distinct groups."""
    by_group: dict[int, list[np.ndarray]] = defaultdict(list)
    for values, group in zip(per_document, group_of.tolist(), strict=True):
        by_group[group].append(values)
    distinct = [_runs(np.concatenate(parts))[0] for parts in by_group.values()]
    if not distinct:
        return EMPTY
    values, counts = _runs(np.concatenate(distinct))
    return values[counts >= limit]


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values, sorted, with how often each occurs (np.unique's result, by one plain sort)."""
    if values.size == 0:
        return values, np.empty(0, dtype=np.int64)
    ordered = np.sort(values)
    starts = _run_starts(ordered)
    return ordered[starts], np.diff(np.append(starts, ordered.size))


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted (non-empty) array begins."""
    return np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))


def _first_owner(per_document: list[np.ndarray], ignored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values (less the ignored) and, for each, the first document holding it."""
    if not per_document:
        return EMPTY, np.empty(0, dtype=np.int64)
    values = np.concatenate(per_document)
    owners = np.repeat(np.arange(len(per_document)), [v.size for v in per_document])
    keep = ~_member(values, ignored)
    values, owners = values[keep], owners[keep]
    if values.size == 0:
        return EMPTY, np.empty(0, dtype=np.int64)
    order = np.argsort(values)  # not stable, but the least owner of each run is the first either way
    ordered = values[order]
    starts = _run_starts(ordered)
    return ordered[starts], np.minimum.reduceat(owners[order], starts)


def _member(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each value is one of the sorted keys (a binary search each: cheaper than np.isin's sort per call)."""
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[at] == values


def _lookup(keys: np.ndarray, owners: np.ndarray, values: object) -> list[int]:
    """The owning documents of those values that are keys."""
    wanted = np.asarray(values, dtype=np.uint64)
    if keys.size == 0 or wanted.size == 0:
        return []
    found = _member(wanted, keys)
    return owners[np.searchsorted(keys, wanted[found])].tolist()


def _exact_key(hashes: np.ndarray) -> int | None:
    """A key for a text's whole normalised word sequence (None for texts too short to be telling)."""
    if hashes.size < MIN_EXACT_TOKENS:
        return None
    return int.from_bytes(hashlib.blake2b(hashes.astype("<u8").tobytes(), digest_size=8).digest(), "little")


def min_hashes(shingles: np.ndarray, permutations: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The MinHash values of a set of 64-bit shingle hashes under datasketch's affine32 permutations (a·h + b
    modulo 2**32, a odd), h being the shingle hash's mixed high half; one array operation instead of a Python
    call per shingle."""
    high = (mix64(shingles.copy()) >> np.uint64(32)).astype(np.uint32)
    a, b = (np.asarray(p, dtype=np.uint32) for p in permutations)
    with np.errstate(over="ignore"):
        return (high[:, None] * a[None, :] + b[None, :]).min(axis=0)


def submission_documents(root: Path, package: TaskPackage | None = None, maker: InstanceMaker | None = None,
                         samples: Sequence[int] = ()) -> list[Document]:
    """A submitted package's texts: every text file, its prompt alone (when it loads), and with a maker the
    generator's output for some instances."""
    documents = text_files(root)
    if package is not None:
        documents.append(Document("task.md (prompt)", package.body))
        if maker is not None:
            documents += instance_documents(package, maker, samples)
    return documents


def scan_package(suite: Suite, root: Path, package: TaskPackage | None = None, maker: InstanceMaker | None = None,
                 samples: Sequence[int] = (), suite_maker: InstanceMaker | None = None) -> GateResult:
    """The gate for one package against one suite."""
    return SuiteIndex.of_suite(suite, suite_maker).scan(submission_documents(root, package, maker, samples))
