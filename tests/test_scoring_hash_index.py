"""The gate's index arrays agree with plain Python sets on random data."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.hash_index import Postings, common, first_owners, lookup

SETS = st.lists(st.sets(st.integers(0, 60), max_size=25), min_size=1, max_size=12)


def arrays(sets: list[set[int]]) -> list[np.ndarray]:
    return [np.array(sorted(s), dtype=np.uint64) for s in sets]


@settings(max_examples=60, deadline=None)
@given(SETS, st.sets(st.integers(0, 60), max_size=30), st.sets(st.integers(0, 60), max_size=10))
def test_postings_count_what_each_document_shares(documents: list[set[int]], query: set[int],
                                                  ignored: set[int]) -> None:
    postings = Postings(arrays(documents), np.array(sorted(ignored), dtype=np.uint64))
    found, shared, size = postings.shared(np.array(sorted(query), dtype=np.uint64))
    expected = {i: len((d - ignored) & (query - ignored)) for i, d in enumerate(documents)}
    assert dict(zip(found.tolist(), shared.tolist(), strict=True)) == {i: n for i, n in expected.items() if n}
    assert size == len(query - ignored)
    assert postings.sizes.tolist() == [len(d - ignored) for d in documents]


@settings(max_examples=60, deadline=None)
@given(SETS, st.sets(st.integers(0, 60), max_size=10), st.integers(1, 4))
def test_first_owners_and_common_values(documents: list[set[int]], ignored: set[int], limit: int) -> None:
    keys, owners = first_owners(arrays(documents), np.array(sorted(ignored), dtype=np.uint64))
    expected = {}
    for index, document in enumerate(documents):
        for value in document - ignored:
            expected.setdefault(value, index)
    assert dict(zip(keys.tolist(), owners.tolist(), strict=True)) == expected
    assert lookup(keys, owners, sorted(expected)) == [expected[v] for v in sorted(expected)]
    groups = np.arange(len(documents)) % 3
    in_groups: dict[int, set[int]] = {}
    for document, group in zip(documents, groups.tolist(), strict=True):
        for value in document:
            in_groups.setdefault(value, set()).add(group)
    assert set(common(arrays(documents), groups, limit).tolist()) == {v for v, g in in_groups.items()
                                                                     if len(g) >= limit}
