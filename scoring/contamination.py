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

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from datasketch import MinHash, MinHashLSH

from scoring.suite import Suite
from taskpkg.model import TaskPackage

NGRAM = 13
SHINGLE = 3
NUM_PERM = 128
NEAR_THRESHOLD = 0.5
MIN_EXACT_TOKENS = 8
MIN_SHINGLES = 12  # a text with fewer distinctive shingles says too little to call it a near duplicate
COMMON_SHARE = 0.10
MIN_COMMON_GROUPS = 3
MAX_FILE_BYTES = 5 * 1024 * 1024
EXCERPT_CHARS = 300
KINDS = ("exact", "ngram", "near_duplicate", "canary")
CODE_SUFFIXES = frozenset({".py", ".sh", ".bash", ".js", ".ts", ".rb", ".pl", ".toml", ".cfg", ".ini", ".lock"})
NOT_CONTENT = frozenset({"Dockerfile", "task.md", ".dockerignore"})
_WORD = re.compile(r"\w+")
_MASK = np.uint64((1 << 64) - 1)
_BASE = np.uint64(1_000_003)

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


def normalize(text: str) -> list[str]:
    """Words of a text after NFKC normalisation and case folding; punctuation and spacing do not count."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _hashes(words: list[str]) -> np.ndarray:
    return np.array([hash(w) for w in words], dtype=np.int64).view(np.uint64)


def _rolling(token_hashes: np.ndarray, width: int) -> np.ndarray:
    """A hash of every run of `width` consecutive tokens (polynomial, modulo 2^64)."""
    if token_hashes.size < width:
        return np.empty(0, dtype=np.uint64)
    count = token_hashes.size - width + 1
    out = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(width):
            out = out * _BASE + token_hashes[offset:offset + count]
    return out


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
        text = file.read_text(encoding="utf-8")
        hashes = _hashes(normalize(text))
        grams.update(_rolling(hashes, NGRAM).tolist())
        shingles.update(_rolling(hashes, SHINGLE).tolist())
        exact.add(_exact_key(text) or 0)
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
    """The suite's texts, indexed once for scanning many submissions."""

    def __init__(self, documents: Sequence[Document], canaries: Iterable[str]) -> None:
        self.documents = list(documents)
        self.canaries = sorted({c for c in canaries if c})
        background_grams, background_shingles, background_texts = _background()
        grams_per_doc, shingles_per_doc, exact_per_doc = [], [], []
        owners: dict[str, dict[int, set[str]]] = {kind: defaultdict(set) for kind in ("gram", "shingle", "text")}
        for document in self.documents:
            hashes = _hashes(normalize(document.text))
            grams, shingles = np.unique(_rolling(hashes, NGRAM)), np.unique(_rolling(hashes, SHINGLE))
            exact = _exact_key(document.text)
            grams_per_doc.append(grams)
            shingles_per_doc.append(shingles)
            exact_per_doc.append(exact)
            for kind, values in (("gram", grams.tolist()), ("shingle", shingles.tolist()),
                                 ("text", [exact] if exact is not None else [])):
                for value in values:
                    owners[kind][value].add(document.group)
        limit = max(MIN_COMMON_GROUPS, COMMON_SHARE * len({d.group for d in self.documents}))
        common = {kind: {v for v, who in found.items() if len(who) >= limit} for kind, found in owners.items()}
        self.ignored_grams = background_grams | common["gram"]
        self.ignored_shingles = background_shingles | common["shingle"]
        ignored_texts = background_texts | common["text"]
        self.gram_owner: dict[int, int] = {}
        self.exact: dict[int, int] = {}
        self.lsh = MinHashLSH(threshold=NEAR_THRESHOLD, num_perm=NUM_PERM)
        self.signatures: dict[int, MinHash] = {}
        for index, (grams, shingles, exact) in enumerate(zip(grams_per_doc, shingles_per_doc, exact_per_doc,
                                                              strict=True)):
            for value in grams.tolist():
                if value not in self.ignored_grams:
                    self.gram_owner.setdefault(value, index)
            if exact is not None and exact not in ignored_texts:
                self.exact.setdefault(exact, index)
            signature = self._signature(shingles)
            if signature is not None:
                self.signatures[index] = signature
                self.lsh.insert(str(index), signature)

    def _signature(self, shingles: np.ndarray) -> MinHash | None:
        kept = [s for s in shingles.tolist() if s not in self.ignored_shingles]
        if len(kept) < MIN_SHINGLES:
            return None
        signature = MinHash(num_perm=NUM_PERM, hashfunc=_low_bits)
        signature.update_batch(kept)
        return signature

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
        exact = _exact_key(document.text)
        if exact is not None and exact in self.exact:
            found.append(self._match("exact", document, self.exact[exact]))
        hashes = _hashes(normalize(document.text))
        hit_docs: dict[int, int] = {}
        for value in np.unique(_rolling(hashes, NGRAM)).tolist():
            owner = self.gram_owner.get(value)
            if owner is not None:
                hit_docs.setdefault(owner, value)
        found += [self._match("ngram", document, owner) for owner in sorted(hit_docs)]
        signature = self._signature(np.unique(_rolling(hashes, SHINGLE)))
        if signature is not None:
            for key in sorted(self.lsh.query(signature), key=int):
                index = int(key)
                if signature.jaccard(self.signatures[index]) >= NEAR_THRESHOLD:
                    found.append(self._match("near_duplicate", document, index))
        return found

    def _match(self, kind: str, document: Document, index: int) -> Match:
        suite_document = self.documents[index]
        return Match(kind, document.source, suite_document.source, suite_document.text[:EXCERPT_CHARS])


def _exact_key(text: str) -> int | None:
    words = normalize(text)
    return hash(" ".join(words)) if len(words) >= MIN_EXACT_TOKENS else None


def _low_bits(value: int) -> int:
    """datasketch's hash function over our 64-bit shingle hashes: their low 32 bits."""
    return value & 0xFFFFFFFF


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
