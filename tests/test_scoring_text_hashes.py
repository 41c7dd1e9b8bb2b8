"""Word hashes: the same words give the same hashes whatever the spacing, punctuation, case or Unicode form, on
the ASCII path and the Unicode path alike; different words give different hashes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import text_hashes
from scoring.text_hashes import (
    PAIR_GAP,
    content_pairs,
    distinct,
    mix64,
    normalize,
    run_hashes,
    runs_within,
    word_hashes,
    words,
    words_of,
)


def test_spacing_punctuation_and_case_do_not_count() -> None:
    hashes = word_hashes("Reconcile the LEDGER,\n\tthen   report: totals_by_month (2024).")
    assert hashes.size == len(normalize("Reconcile the LEDGER, then report: totals_by_month (2024)."))
    assert np.array_equal(hashes, word_hashes("reconcile THE ledger then REPORT totals_by_month 2024"))
    assert not np.array_equal(hashes, word_hashes("reconcile the ledger then report totals_by_month 2025"))


def test_the_ascii_and_unicode_paths_agree_word_for_word() -> None:
    ascii_text = "Cafe naive resume 42"
    with_accent = ascii_text + " \u00e9"  # one non-ASCII letter sends the whole text the Unicode way
    assert word_hashes(with_accent)[:4].tolist() == word_hashes(ascii_text).tolist()
    assert np.array_equal(word_hashes("Caf\u00e9 \uff21\uff22\uff23"), word_hashes("CAF\u00c9 abc"))  # NFKC, casefold
    assert np.array_equal(word_hashes("e\u0301"), word_hashes("\u00e9"))  # composed and decomposed é


def test_distinct_words_get_distinct_hashes_and_order_counts() -> None:
    rng = random.Random(3)
    words = {"".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(rng.randint(1, 30)))
             for _ in range(50_000)}
    hashes = word_hashes(" ".join(sorted(words)))
    assert hashes.size == len(words) and np.unique(hashes).size == len(words)
    assert word_hashes("ab ba").tolist()[::-1] == word_hashes("ba ab").tolist()
    assert word_hashes("ab")[0] != word_hashes("ba")[0]


def test_long_texts_and_empty_ones() -> None:
    long = " ".join(f"w{i}" for i in range(200_000))  # grows the power tables past their first size
    assert word_hashes(long)[-1] == word_hashes("w199999")[0]
    assert word_hashes("").size == 0 and word_hashes(" ,.;\n").size == 0


def test_runs_and_mixing() -> None:
    hashes = word_hashes("one two three four")
    runs = run_hashes(hashes, 3)
    assert runs.size == 2 and runs[1] == run_hashes(word_hashes("two three four"), 3)[0]
    assert run_hashes(hashes, 5).size == 0
    values = np.arange(1_000, dtype=np.uint64)
    assert np.unique(mix64(values.copy())).size == 1_000  # a bijection: no two inputs collide


def pairs_of(text: str) -> np.ndarray:
    return distinct(content_pairs(words_of([text]))[0])


def test_content_pairs_skip_stop_words_and_numbers_and_survive_substitution() -> None:
    text = "The ward pharmacist reconciles 42 evening medication rounds before the handover to the attending physician"
    pairs = pairs_of(text)
    same = pairs_of("ward PHARMACIST, reconciles: evening medication rounds 7 handover attending physician")
    assert np.array_equal(pairs, same)  # stop words, numbers, case and punctuation do not count
    content = 9  # ward pharmacist reconciles evening medication rounds handover attending physician
    assert pairs.size == sum(content - d for d in range(1, PAIR_GAP + 1))  # each paired with the next PAIR_GAP
    swapped = pairs_of(text.replace("evening", "morning"))
    assert np.intersect1d(pairs, swapped).size == pairs.size - 2 * PAIR_GAP  # one word touches 2 * PAIR_GAP pairs
    assert pairs_of("the of and 12 34").size == 0
    assert not np.array_equal(pairs_of("alpha beta"), pairs_of("beta alpha"))  # ordered


@pytest.mark.parametrize("chunk", [1 << 18, 50])  # one segment, or a segment every few texts
def test_many_texts_hash_as_each_alone_and_nothing_crosses_between_them(chunk: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_hashes, "CHUNK_BYTES", chunk)
    rng = random.Random(8)
    vocabulary = ["ledger", "cafe", "Route", "66", "the", "x_1", "invoice", "pharmacist"]
    texts = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 40))) for _ in range(60)]
    texts[7] = "\uff21\uff22 caf\u00e9 " + texts[7]  # non-ASCII texts among ASCII ones
    texts[30] += " na\u00efve"
    found = words_of(texts)
    bounds = found.bounds()
    for number, text in enumerate(texts):
        alone = words_of([text])
        assert np.array_equal(found.hashes[bounds[number]:bounds[number + 1]], alone.hashes)
        assert np.array_equal(found.numeric[bounds[number]:bounds[number + 1]], alone.numeric)
        grams, owners = runs_within(found, 3)
        assert np.array_equal(grams[owners == number], run_hashes(alone.hashes, 3))
        pairs, holders = content_pairs(found)
        assert np.array_equal(pairs[holders == number], content_pairs(alone)[0])
    assert found.text.tolist() == sorted(found.text.tolist()) and found.count == 60
    capped, _ = content_pairs(found, max_words=10)
    assert capped.size < content_pairs(found)[0].size


def test_numbers_are_told_by_their_digits_on_both_paths() -> None:
    _, numeric = words("route 66 has 3 lanes x2 and 2x")
    assert numeric.tolist() == [False, True, False, True, False, False, False, False]
    _, numeric = words("caf\u00e9 \uff11\uff12 12a")  # fullwidth digits become ASCII digits under NFKC
    assert numeric.tolist() == [False, True, False]
