"""The gate's index arrays agree with plain Python sets on random data."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.hash_index import Postings, holdings, lookup

SETS = st.lists(st.sets(st.integers(0, 60), max_size=25), min_size=1, max_size=12)
VALUES = st.sets(st.integers(0, 60), max_size=10)


def arrays(sets: list[set[int]]) -> list[np.ndarray]:
    return [np.array(sorted(s), dtype=np.uint64) for s in sets]


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
    held = holdings(arrays(documents), np.array(groups), limit, np.array(sorted(background), dtype=np.uint64))
    ignored = background | widespread(documents, groups, limit)
    assert held.ignored.tolist() == sorted(ignored)
    postings = Postings(held)
    found, shared, size = postings.shared(np.array(sorted(query), dtype=np.uint64))
    expected = {i: len((d - ignored) & query) for i, d in enumerate(documents)}
    assert dict(zip(found.tolist(), shared.tolist(), strict=True)) == {i: n for i, n in expected.items() if n}
    assert size == len(query - ignored)
    assert postings.sizes.tolist() == [len(d - ignored) for d in documents]


@settings(max_examples=60, deadline=None)
@given(SETS, VALUES, st.integers(1, 4))
def test_first_owners(documents: list[set[int]], background: set[int], limit: int) -> None:
    groups = [n % 3 for n in range(len(documents))]
    held = holdings(arrays(documents), np.array(groups), limit, np.array(sorted(background), dtype=np.uint64))
    keys, owners = held.first_owners()
    ignored = background | widespread(documents, groups, limit)
    expected: dict[int, int] = {}
    for index, document in enumerate(documents):
        for value in document - ignored:
            expected.setdefault(value, index)
    assert dict(zip(keys.tolist(), owners.tolist(), strict=True)) == expected
    assert lookup(keys, owners, sorted(expected)) == [expected[v] for v in sorted(expected)]
