"""Sorted arrays of 64-bit hashes and the documents holding them: the lookups the contamination gate's index is made
of, as array operations (a suite of thousands of items holds millions of hashes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.text_hashes import distinct

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
    """Which documents hold which hashes, less the ignored hashes: each (hash, document) pair as one 64-bit key, the
    hash's high bits above the document's number in the low `bits`, sorted (so by hash, then document)."""

    keys: np.ndarray  # sorted, distinct
    bits: int
    sizes: np.ndarray  # hashes kept per document
    ignored: np.ndarray  # sorted hashes (high bits only): the background and those found in too many groups

    @property
    def low(self) -> np.uint64:
        return np.uint64((1 << self.bits) - 1)

    @property
    def high(self) -> np.uint64:
        return ~self.low


def holdings(values: np.ndarray, holders: np.ndarray, count: int, group_of: np.ndarray, limit: float,
             background: np.ndarray) -> Holdings:
    """Which of `count` documents hold which values (`holders[i]` holds `values[i]`), in one sort of plain 64-bit
    keys, less the background and every value found in at least `limit` distinct groups (boilerplate, not
    evidence). A value keeps 64 − bits of its bits, bits being what numbers the documents (15 for 20,000): two
    values on one key by chance is then a 1 in 2**49 event per pair, far below what any rule needs to flag."""
    bits = max(1, (count - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    keys = distinct((values & ~low) | holders.astype(np.uint64))  # a value held twice by one document counts once
    background = distinct(background & ~low)
    if keys.size == 0:
        return Holdings(keys, bits, np.zeros(count, dtype=np.int64), background)
    hashes = keys & ~low
    starts = run_starts(hashes)
    lengths = np.diff(np.append(starts, keys.size))
    run_of = np.repeat(np.arange(starts.size), lengths)
    documents = (keys & low).astype(np.int64)
    widespread = _group_counts(run_of, group_of[documents], lengths >= limit, starts.size) >= limit
    keep = ~(widespread | member(hashes[starts], background))[run_of]
    return Holdings(keys[keep], bits, np.bincount(documents[keep], minlength=count),
                    np.union1d(background, hashes[starts[widespread]]))


def _group_counts(run_of: np.ndarray, groups: np.ndarray, candidates: np.ndarray, runs: int) -> np.ndarray:
    """How many distinct groups hold each run's hash (counted only for the candidate runs: a run shorter than the
    limit cannot reach it)."""
    chosen = candidates[run_of]
    if not chosen.any():
        return np.zeros(runs, dtype=np.int64)
    span = int(groups.max()) + 1
    pairs = distinct(run_of[chosen] * span + groups[chosen])
    return np.bincount(pairs // span, minlength=runs)


class Owners:
    """The first document holding each hash."""

    def __init__(self, held: Holdings) -> None:
        self.high = held.high
        hashes = held.keys & self.high
        starts = run_starts(hashes) if hashes.size else NO_OWNERS
        self.hashes = hashes[starts]
        self.first = (held.keys[starts] & held.low).astype(np.int64)  # sorted by document within a hash

    def of(self, values: np.ndarray) -> list[int]:
        """The first holder of each of the values that is held, in the values' order."""
        wanted = np.asarray(values, dtype=np.uint64) & self.high
        if self.hashes.size == 0 or wanted.size == 0:
            return []
        found = member(wanted, self.hashes)
        return self.first[np.searchsorted(self.hashes, wanted[found])].tolist()


class Postings:
    """How many hashes a query shares with each document, in one gather."""

    def __init__(self, held: Holdings) -> None:
        self.keys, self.sizes, self.ignored = held.keys, held.sizes, held.ignored
        self.low, self.high = held.low, held.high

    def shared(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """For a set of hashes: the documents sharing any (ascending), how many each shares, and how many hashes of
        the query count (those not ignored)."""
        query = distinct(query & self.high)
        query = query[~member(query, self.ignored)]
        if query.size == 0 or self.keys.size == 0:
            return NO_OWNERS, NO_OWNERS, int(query.size)
        start = np.searchsorted(self.keys, query, "left")  # a query key's low bits are 0: its hash's first holder
        hits = np.searchsorted(self.keys, query | self.low, "right") - start
        total = int(hits.sum())
        if total == 0:
            return NO_OWNERS, NO_OWNERS, int(query.size)
        offsets = np.cumsum(hits) - hits
        positions = np.arange(total) + np.repeat(start - offsets, hits)
        documents, counts = runs((self.keys[positions] & self.low).astype(np.int64))
        return documents, counts, int(query.size)
