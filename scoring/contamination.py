"""The contamination gate: does a submitted environment carry the held-out suite's content?

Before any GPU is spent, a submitted package is compared with the suite as a model would meet it: every suite
package's prompt, data and code, and every listed instance (its rendered prompt and the files its generator wrote).
Five kinds of evidence:

- **exact**: a submitted text whose normalised form (NFKC, case-folded, words only) equals a suite text;
- **ngram**: a 13-word sequence shared with a suite text (the long n-gram overlap of GPT-3's decontamination);
- **near_duplicate**: a text sharing at least a fifth of its content-word pairs (two words, neither a stop word nor
  a number, at most two content words apart) with a suite text, counted against the smaller of the two: a pair
  needs only its own two words, so a copy with one word in three substituted still shares about 4 pairs in 9;
- **code**: a source file sharing at least half of its 20-token runs with a suite source file after code
  normalisation (`scoring.code_hashes`: identifiers, literals, comments and layout do not count), counted against
  the smaller: a copy with every name renamed and every literal changed;
- **canary**: the suite's canary, or any suite package's own canary, anywhere in the submitted package.

Submitted texts are every UTF-8 file of the package (each source file also read as code), its prompt, and samples
of its generator's output (`InstanceText`, made in the sandbox: `scoring.gate_run`). Suite texts are each package's
prompt, bundled data and code, and its items' instances. Shared boilerplate does not count: sequences found in the
scaffold that every package starts from, or in more than a tenth of the suite's packages (at least three), are
ignored.

The public verdict (`GateResult.public`) is pass or flagged and nothing else, so the gate cannot be used to learn
which texts the private suite holds; the counts and the matched suite text are only in
`GateResult.maintainer_report`, which must never be posted publicly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from scoring.code_hashes import code_grams, is_code
from scoring.hash_index import Holdings, Owners, Postings, holdings
from scoring.suite import Suite
from scoring.text_hashes import EMPTY, PAIR_GAP, content_pairs, distinct, runs_within, words_of
from taskpkg.package import TaskPackage

GateVerdict = Literal["pass", "flagged"]  # the gate's public verdict, and all it ever says
GATE_VERDICTS: tuple[GateVerdict, ...] = get_args(GateVerdict)
NGRAM = 13
CODE_GRAM = 20
MIN_EXACT_TOKENS = 8
PAIR_SHARE = 0.2  # near duplicate: shared content-word pairs / the smaller text's pairs
MIN_SHARED_PAIRS = 12  # fewer shared pairs say too little to call two texts near duplicates
CODE_SHARE = 0.5  # a copy: shared normalised 20-token runs / the smaller file's runs
MIN_SHARED_CODE = 30
MAX_PAIR_WORDS = 20_000  # longer texts (big data files) are left to the exact and n-gram checks
COMMON_SHARE = 0.10
MIN_COMMON_GROUPS = 3
MAX_FILE_BYTES = 5 * 1024 * 1024
EXCERPT_CHARS = 300
KINDS = ("exact", "ngram", "near_duplicate", "code", "canary")
CONFIG_SUFFIXES = frozenset({".toml", ".cfg", ".ini", ".lock"})
NOT_CONTENT = frozenset({"Dockerfile", "task.md", ".dockerignore"})


@dataclass(frozen=True)
class Document:
    """A text and where it came from (`group`: the package it belongs to, for telling boilerplate from content;
    `code`: compared as source code, normalised, rather than as words)."""

    source: str
    text: str
    group: str = ""
    code: bool = False


@dataclass(frozen=True)
class InstanceText:
    """One generated instance as the gate reads it: the rendered prompt (every scene) and its UTF-8 files."""

    prompt: str
    files: dict[str, str]


InstanceMaker = Callable[[TaskPackage, int], InstanceText]


@dataclass(frozen=True)
class Match:
    """One finding: which submitted text met which suite text, and the suite text matched (maintainers only)."""

    kind: str
    submitted: str
    suite: str
    excerpt: str


@dataclass(frozen=True)
class GateResult:
    """Everything the gate found, and what it could see (`coverage`, for maintainers)."""

    matches: tuple[Match, ...]
    coverage: dict = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Per kind, the number of distinct (submitted text, suite text) pairs found."""
        found: dict[str, set] = {kind: set() for kind in KINDS}
        for match in self.matches:
            found[match.kind].add((match.submitted, match.suite))
        return {kind: len(pairs) for kind, pairs in found.items()}

    @property
    def verdict(self) -> GateVerdict:
        """pass, or flagged when anything matched."""
        return "flagged" if self.matches else "pass"

    def public(self) -> dict:
        """What may be shown anywhere (the results record's `contamination`, a PR): the verdict alone. Counts would
        let anyone probe the private suite text by text, so they stay in the maintainers' report."""
        return {"verdict": self.verdict}

    def maintainer_report(self) -> dict:
        """Counts, coverage and the matches with the suite text they matched: for maintainers only, never for a PR
        comment or a log."""
        return {"verdict": self.verdict, "counts": self.counts(), "coverage": self.coverage, "matches": [
            {"kind": m.kind, "submitted": m.submitted, "suite": m.suite, "excerpt": m.excerpt} for m in self.matches]}


def parameters() -> dict[str, int | float]:
    """The settings a verdict depends on, as a results record states them."""
    return {"ngram": NGRAM, "code_gram": CODE_GRAM, "min_exact_tokens": MIN_EXACT_TOKENS, "pair_gap": PAIR_GAP,
            "pair_share": PAIR_SHARE, "min_shared_pairs": MIN_SHARED_PAIRS, "code_share": CODE_SHARE,
            "min_shared_code": MIN_SHARED_CODE, "max_pair_words": MAX_PAIR_WORDS, "common_share": COMMON_SHARE,
            "min_common_groups": MIN_COMMON_GROUPS}


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


def as_code(documents: Iterable[Document]) -> list[Document]:
    """The source files among the documents, to be compared as code too."""
    return [Document(d.source, d.text, d.group, code=True) for d in documents if is_code(d.source, d.text)]


def suite_package_documents(package: TaskPackage) -> list[Document]:
    """What a suite package holds: its prompt (the body, no frontmatter), its bundled data files, and its code
    (generator, verifier, oracle and any other source file) as code. Code is not read as words: its imports and
    idioms are shared by honest packages."""
    prefix = f"{package.name}/"
    files = text_files(package.root, prefix)
    data = [d for d in files if Path(d.source).name not in NOT_CONTENT and Path(d.source).suffix not in CONFIG_SUFFIXES
            and not is_code(d.source, d.text)]
    return [Document(f"{prefix}task.md (prompt)", package.body, package.name), *data, *as_code(files)]


def instance_text(package: TaskPackage, values: dict, files: dict[str, bytes]) -> InstanceText:
    """An instance from its prompt values and the files its generator wrote (files that are not UTF-8 are left
    out)."""
    texts = {}
    for name, data in sorted(files.items()):
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return InstanceText("\n\n".join(p.text for p in package.scene_prompts(values)), texts)


def instance_documents(instance: int, made: InstanceText, prefix: str = "") -> list[Document]:
    """One instance's rendered prompt and files (source files also as code)."""
    where, group = f"{prefix}instance {instance}", prefix.rstrip("/")
    files = [Document(f"{where}: {name}", text, group) for name, text in sorted(made.files.items())]
    return [Document(f"{where}: prompt", made.prompt, group), *files, *as_code(files)]


def submission_documents(root: Path, package: TaskPackage | None = None,
                         samples: dict[int, InstanceText] | None = None) -> list[Document]:
    """A submitted package's texts: every text file (source files also as code), its prompt alone (when it loads),
    and the generator's output for the sampled instances."""
    files = text_files(root)
    documents = [*files, *as_code(files)]
    if package is not None:
        documents.append(Document("task.md (prompt)", package.body))
    for instance, made in sorted((samples or {}).items()):
        documents += instance_documents(instance, made)
    return documents


@dataclass(frozen=True)
class Hashes:
    """What the gate compares of some documents: per kind, every hash and the number of the document holding it."""

    grams: tuple[np.ndarray, np.ndarray]  # 13-word runs
    exact: tuple[np.ndarray, np.ndarray]  # the whole normalised text's key (none for short texts)
    pairs: tuple[np.ndarray, np.ndarray]  # content-word pairs
    code: tuple[np.ndarray, np.ndarray]  # normalised 20-token runs of source files


def hashed(documents: Sequence[Document]) -> Hashes:
    """The hashes of many documents, prose in a few array operations per 256 KiB of text (not per document)."""
    prose = np.array([n for n, d in enumerate(documents) if not d.code], dtype=np.int64)
    found = words_of([documents[n].text for n in prose])
    grams, in_grams = runs_within(found, NGRAM)
    pairs, in_pairs = content_pairs(found, max_words=MAX_PAIR_WORDS)
    bounds = found.bounds()
    keys = [(_exact_key(found.hashes[bounds[i]:bounds[i + 1]]), i) for i in range(prose.size)]
    exact = [(key, i) for key, i in keys if key is not None]
    code = [(distinct(code_grams(d.text, d.source, CODE_GRAM)), n) for n, d in enumerate(documents) if d.code]
    return Hashes((grams, prose[in_grams]), (np.array([k for k, _ in exact], dtype=np.uint64),
                                             prose[np.array([i for _, i in exact], dtype=np.int64)]),
                  (pairs, prose[in_pairs]), _with_holders(code))


def _with_holders(per_document: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, np.ndarray]:
    if not per_document:
        return EMPTY, np.zeros(0, dtype=np.int64)
    return (np.concatenate([values for values, _ in per_document]),
            np.repeat(np.array([n for _, n in per_document], dtype=np.int64), [v.size for v, _ in per_document]))


def _background() -> Hashes:
    """Hashes of the scaffold every package starts from: never evidence of copying."""
    documents = []
    for file in _walk(resources.files("taskpkg").joinpath("scaffold_template")):
        documents.append(Document(file.name, file.read_text(encoding="utf-8")))
    return hashed([*documents, *as_code(documents)])


def _walk(node: Traversable) -> Iterator[Traversable]:
    if node.is_dir():
        for child in node.iterdir():
            yield from _walk(child)
    else:
        yield node


class SuiteIndex:
    """The suite's texts and code, indexed once for scanning many submissions."""

    def __init__(self, documents: Sequence[Document], canaries: Iterable[str], coverage: dict | None = None) -> None:
        self.documents = list(documents)
        self.canaries = sorted({c for c in canaries if c})
        self.coverage = dict(coverage or {})
        found = hashed(self.documents)
        background = _background()
        group_of = _group_numbers(self.documents)
        limit = max(MIN_COMMON_GROUPS, COMMON_SHARE * (int(group_of.max()) + 1 if group_of.size else 0))

        def held(kind: str) -> Holdings:
            values, holders = getattr(found, kind)
            return holdings(values, holders, len(self.documents), group_of, limit, getattr(background, kind)[0])

        self.grams = Owners(held("grams"))
        self.texts = Owners(held("exact"))
        self.pairs = Postings(held("pairs"))
        self.code = Postings(held("code"))

    @classmethod
    def of_suite(cls, suite: Suite, instances: dict[tuple[str, int], InstanceText] | None = None) -> SuiteIndex:
        """Every suite package's prompt, data and code, and the items' instances given (by package name and
        instance number)."""
        documents: list[Document] = []
        for package in suite.packages.values():
            documents += suite_package_documents(package)
        for (name, instance), made in sorted((instances or {}).items()):
            documents += instance_documents(instance, made, f"{name}/")
        canaries = [suite.canary, *(p.canary for p in suite.packages.values())]
        coverage = {"suite_instances": len(instances or {}), "suite_items": len(suite.items)}
        return cls(documents, canaries, coverage)

    def scan(self, documents: Sequence[Document], coverage: dict | None = None) -> GateResult:
        """Compare a submission's texts and code with the suite."""
        matches: list[Match] = []
        for document in documents:
            matches += self._scan_one(document)
        return GateResult(tuple(matches), {**self.coverage, **(coverage or {})})

    def _scan_one(self, document: Document) -> list[Match]:
        found = hashed([document])
        if document.code:
            return [self._match("code", document, i) for i in _similar(self.code, found.code[0], CODE_SHARE,
                                                                         MIN_SHARED_CODE)]
        matches = [Match("canary", document.source, "the suite's canaries", canary)
                   for canary in self.canaries if canary in document.text]
        matches += [self._match("exact", document, i) for i in self.texts.of(found.exact[0])]
        matches += [self._match("ngram", document, owner) for owner in sorted(set(self.grams.of(found.grams[0])))]
        matches += [self._match("near_duplicate", document, i)
                    for i in _similar(self.pairs, found.pairs[0], PAIR_SHARE, MIN_SHARED_PAIRS)]
        return matches

    def _match(self, kind: str, document: Document, index: int) -> Match:
        suite_document = self.documents[index]
        return Match(kind, document.source, suite_document.source, suite_document.text[:EXCERPT_CHARS])


def _similar(postings: Postings, query: np.ndarray, share: float, minimum: int) -> list[int]:
    """The documents sharing at least `minimum` hashes with the query and at least `share` of the smaller set's."""
    documents, shared, size = postings.shared(query)
    smaller = np.minimum(postings.sizes[documents], size)
    close = (shared >= minimum) & (shared >= share * smaller)
    return documents[close].tolist()


def _group_numbers(documents: Sequence[Document]) -> np.ndarray:
    numbers: dict[str, int] = {}
    return np.array([numbers.setdefault(d.group, len(numbers)) for d in documents], dtype=np.int64)


def _exact_key(hashes: np.ndarray) -> int | None:
    """A key for a text's whole normalised word sequence (None for texts too short to be telling)."""
    if hashes.size < MIN_EXACT_TOKENS:
        return None
    return int.from_bytes(hashlib.blake2b(hashes.astype("<u8").tobytes(), digest_size=8).digest(), "little")
