"""Sorted arrays of 64-bit hashes and the documents holding them: the lookups the contamination gate's index is made
of, as array operations (a suite of thousands of items holds millions of hashes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.text_hashes import EMPTY, distinct

NO_OWNERS = np.empty(0, dtype=np.int64)


def runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values, sorted, with how often each occurs (np.unique's result, by one plain sort)."""
    if values.size == 0:
        return values, np.empty(0, dtype=np.int64)
    ordered = np.sort(values)
    starts = run_starts(ordered)
    return ordered[starts], np.diff(np.append(starts, ordered.size))


def run_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted (non-empty) array begins."""
    return np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))


def member(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each value is one of the sorted keys (a binary search each: cheaper than np.isin's sort per call)."""
    if sorted_keys.size == 0:
        return np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[at] == values


@dataclass(frozen=True)
class Holdings:
    """Every (value, document) pair of some per-document hash arrays, sorted by value, less the ignored values."""

    values: np.ndarray  # sorted; a value held by several documents repeats
    documents: np.ndarray
    sizes: np.ndarray  # values kept per document
    ignored: np.ndarray  # sorted: the background and the values found in too many groups

    def first_owners(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct values and, for each, the first document holding it."""
        if self.values.size == 0:
            return EMPTY, NO_OWNERS
        starts = run_starts(self.values)
        return self.values[starts], np.minimum.reduceat(self.documents, starts).astype(np.int64)


def holdings(per_document: list[np.ndarray], group_of: np.ndarray, limit: float, background: np.ndarray) -> Holdings:
    """The documents' values sorted once, less the background and every value found in at least `limit` distinct
    groups (boilerplate, not evidence)."""
    sizes = np.array([v.size for v in per_document], dtype=np.int64)
    values = np.concatenate(per_document) if per_document else EMPTY
    documents = np.repeat(np.arange(len(per_document), dtype=np.int64), sizes)
    keep = ~member(values, background)
    values, documents = values[keep], documents[keep]
    order = np.argsort(values)
    values, documents = values[order], documents[order]
    common = EMPTY
    if values.size:
        starts = run_starts(values)
        lengths = np.diff(np.append(starts, values.size))
        run_of = np.repeat(np.arange(starts.size), lengths)
        widespread = _group_counts(run_of, group_of[documents], lengths >= limit, starts.size) >= limit
        common = values[starts[widespread]]
        keep = ~widespread[run_of]
        values, documents = values[keep], documents[keep]
    return Holdings(values, documents, np.bincount(documents, minlength=len(per_document)),
                    np.union1d(background, common))


def _group_counts(run_of: np.ndarray, groups: np.ndarray, candidates: np.ndarray, runs: int) -> np.ndarray:
    """How many distinct groups hold each run's value (counted only for the candidate runs: a run shorter than the
    limit cannot reach it)."""
    chosen = candidates[run_of]
    if not chosen.any():
        return np.zeros(runs, dtype=np.int64)
    span = int(groups.max()) + 1
    pairs = distinct(run_of[chosen] * span + groups[chosen])
    return np.bincount(pairs // span, minlength=runs)


def lookup(keys: np.ndarray, owners: np.ndarray, values: object) -> list[int]:
    """The owning documents of those values that are keys."""
    wanted = np.asarray(values, dtype=np.uint64)
    if keys.size == 0 or wanted.size == 0:
        return []
    found = member(wanted, keys)
    return owners[np.searchsorted(keys, wanted[found])].tolist()


class Postings:
    """Sorted (hash, document) pairs of per-document hash sets: how many hashes a query shares with each document,
    in one gather."""

    def __init__(self, held: Holdings) -> None:
        self.keys, self.documents, self.sizes, self.ignored = held.values, held.documents, held.sizes, held.ignored

    def shared(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """For a set of distinct hashes: the documents sharing any (ascending), how many each shares, and how many
        hashes of the query count (those not ignored)."""
        query = query[~member(query, self.ignored)]
        if query.size == 0 or self.keys.size == 0:
            return NO_OWNERS, NO_OWNERS, int(query.size)
        low = np.searchsorted(self.keys, query, "left")
        hits = np.searchsorted(self.keys, query, "right") - low
        total = int(hits.sum())
        if total == 0:
            return NO_OWNERS, NO_OWNERS, int(query.size)
        offsets = np.cumsum(hits) - hits
        positions = np.arange(total) + np.repeat(low - offsets, hits)
        documents, counts = runs(self.documents[positions])
        return documents.astype(np.int64), counts, int(query.size)
