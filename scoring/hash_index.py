"""Sorted arrays of 64-bit hashes and the documents holding them: the lookups the contamination gate's index is made
of, as array operations (a suite of thousands of items holds millions of hashes)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from scoring.text_hashes import EMPTY

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


def common(per_document: list[np.ndarray], group_of: np.ndarray, limit: float) -> np.ndarray:
    """Values found in at least `limit` distinct groups."""
    by_group: dict[int, list[np.ndarray]] = defaultdict(list)
    for values, group in zip(per_document, group_of.tolist(), strict=True):
        if values.size:
            by_group[group].append(values)
    distinct = [runs(np.concatenate(parts))[0] for parts in by_group.values()]
    if not distinct:
        return EMPTY
    values, counts = runs(np.concatenate(distinct))
    return values[counts >= limit]


def first_owners(per_document: list[np.ndarray], ignored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values (less the ignored) and, for each, the first document holding it."""
    if not per_document:
        return EMPTY, NO_OWNERS
    values = np.concatenate(per_document)
    owners = np.repeat(np.arange(len(per_document)), [v.size for v in per_document])
    keep = ~member(values, ignored)
    values, owners = values[keep], owners[keep]
    if values.size == 0:
        return EMPTY, NO_OWNERS
    order = np.argsort(values)  # not stable, but the least owner of each run is the first either way
    ordered = values[order]
    starts = run_starts(ordered)
    return ordered[starts], np.minimum.reduceat(owners[order], starts)


def lookup(keys: np.ndarray, owners: np.ndarray, values: object) -> list[int]:
    """The owning documents of those values that are keys."""
    wanted = np.asarray(values, dtype=np.uint64)
    if keys.size == 0 or wanted.size == 0:
        return []
    found = member(wanted, keys)
    return owners[np.searchsorted(keys, wanted[found])].tolist()


class Postings:
    """Every (hash, document) pair of a list of per-document hash sets, sorted by hash: how many hashes a query
    shares with each document, in one gather."""

    def __init__(self, per_document: list[np.ndarray], ignored: np.ndarray) -> None:
        kept = [values[~member(values, ignored)] if values.size else values for values in per_document]
        self.sizes = np.array([values.size for values in kept], dtype=np.int64)
        values = np.concatenate(kept) if kept else EMPTY
        documents = np.repeat(np.arange(len(kept), dtype=np.int32), self.sizes)
        order = np.argsort(values)
        self.keys, self.documents = values[order], documents[order]
        self.ignored = ignored

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
