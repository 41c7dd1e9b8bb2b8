"""The gate's index arrays agree with plain Python sets on random data."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.hash_index import Owners, Postings, holdings

# Values are spread over the high bits (the index keeps 64 minus the bits that number the documents).
SPREAD = 1 << 40
SETS = st.lists(st.sets(st.integers(0, 60), max_size=25), min_size=1, max_size=12)
VALUES = st.sets(st.integers(0, 60), max_size=10)


def array(values: set[int]) -> np.ndarray:
    return np.array(sorted(v * SPREAD for v in values), dtype=np.uint64)


def held_by(documents: list[set[int]], limit: int, background: set[int]) -> object:
    values = [array(d) for d in documents]
    holders = np.repeat(np.arange(len(documents)), [v.size for v in values])
    groups = np.arange(len(documents)) % 3
    return holdings(np.concatenate(values), holders, len(documents), groups, limit, array(background))


def widespread(documents: list[set[int]], groups: list[int], limit: int) -> set[int]:
    """Values held in at least `limit` distinct groups, by sets."""
    in_groups: dict[int, set[int]] = {}
    for document, group in zip(documents, groups, strict=True):
        for value in document:
            in_groups.setdefault(value, set()).add(group)
    return {v for v, held in in_groups.items() if len(held) >= limit}


@settings(max_examples=60, deadline=None)
@given(SETS, st.sets(st.integers(0, 60), max_size=30), VALUES, st.integers(1, 4))
def test_postings_count_what_each_document_shares(documents: list[set[int]], query: set[int], background: set[int],
                                                  limit: int) -> None:
    groups = [n % 3 for n in range(len(documents))]
    held = held_by(documents, limit, background)
    ignored = background | widespread(documents, groups, limit)
    assert held.ignored.tolist() == array(ignored).tolist()
    postings = Postings(held)
    found, shared, size = postings.shared(array(query))
    expected = {i: len((d - ignored) & query) for i, d in enumerate(documents)}
    assert dict(zip(found.tolist(), shared.tolist(), strict=True)) == {i: n for i, n in expected.items() if n}
    assert size == len(query - ignored)
    assert postings.sizes.tolist() == [len(d - ignored) for d in documents]


@settings(max_examples=60, deadline=None)
@given(SETS, VALUES, st.integers(1, 4))
def test_first_owners(documents: list[set[int]], background: set[int], limit: int) -> None:
    groups = [n % 3 for n in range(len(documents))]
    owners = Owners(held_by(documents, limit, background))
    ignored = background | widespread(documents, groups, limit)
    expected: dict[int, int] = {}
    for index, document in enumerate(documents):
        for value in document - ignored:
            expected.setdefault(value, index)
    asked = sorted(set(range(61)) - {1, 2})
    assert owners.of(array(set(asked))) == [expected[v] for v in asked if v in expected]


def test_a_hash_repeated_in_one_document_counts_once_and_low_bits_do_not_count() -> None:
    held = holdings(np.array([7 * SPREAD, 7 * SPREAD, 9 * SPREAD], dtype=np.uint64), np.zeros(3, dtype=np.int64), 1,
                    np.zeros(1, dtype=np.int64), 3, np.empty(0, dtype=np.uint64))
    assert held.sizes.tolist() == [2]
    found, shared, size = Postings(held).shared(np.array([7 * SPREAD + 1, 9 * SPREAD], dtype=np.uint64))
    assert (found.tolist(), shared.tolist(), size) == ([0], [2], 2)  # the lowest bit numbers documents here
