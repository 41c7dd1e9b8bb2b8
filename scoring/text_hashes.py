"""Word hashes of texts, for the contamination gate: the normalised words of a text as one 64-bit hash each, a
hash of every run of n consecutive words, and of every ordered pair of nearby content words; numpy throughout, with
no Python string made per word.

Normalisation is NFKC, case folding, and words only (`\\w+`), so spacing and punctuation never count. A word's hash
is a polynomial over its UTF-8 bytes modulo 2**64, computed for all words of a text at once from prefix sums (the
hash of bytes s..e is (P[e] − P[s]) · B**−s, B odd so invertible), then passed through a mixing bijection so that
every bit depends on every byte. Plain ASCII text (the common case) is lower-cased and split by byte tables without
Unicode normalisation, which would leave it unchanged; any other text is normalised and split by the regular
expression first, and both paths give the same hashes for the same words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"\w+")
_BASE = np.uint64(0x100000001B3)  # odd, so invertible modulo 2**64
_INVERSE = np.uint64(pow(int(_BASE), -1, 1 << 64))
_RUN_BASE = np.uint64(1_000_003)
_SPACE = ord(" ")
_WORD_BYTES = np.zeros(256, dtype=np.int8)
_WORD_BYTES[list(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")] = 1
_LOWER = np.arange(256, dtype=np.uint64)
_LOWER[ord("A"):ord("Z") + 1] += 32
_DIGIT_BYTES = np.zeros(256, dtype=np.int64)
_DIGIT_BYTES[list(b"0123456789")] = 1
_PAIR_BASE = np.uint64(0x9E3779B97F4A7C15)
PAIR_GAP = 2
CHUNK_BYTES = 1 << 18  # texts hashed together, about 256 KiB at a time (its arrays stay in the cache)
EMPTY = np.empty(0, dtype=np.uint64)
_STOP_WORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing down during each either else even ever every few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just may me might more most must
my myself neither no nor not now of off on once only or other ought our ours ourselves out over own per same shall
she should so some such than that the their theirs them themselves then there these they this those through thus to
too under until up upon us very was we were what when where whether which while who whom whose why will with within
without would yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())  # English function words: a paraphrase swaps them freely


def normalize(text: str) -> list[str]:
    """Words of a text after NFKC normalisation and case folding; punctuation and spacing do not count."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


class _Powers:
    """B**i and B**−i modulo 2**64 for i up to the longest text seen, grown by doubling."""

    def __init__(self) -> None:
        self.up = self.down = np.ones(1, dtype=np.uint64)

    def cover(self, length: int) -> None:
        """Make sure indices 0..length exist."""
        if self.up.size > length:
            return
        size = max(length + 1, 2 * self.up.size)
        self.up, self.down = _power_table(_BASE, size), _power_table(_INVERSE, size)


def _power_table(base: np.uint64, size: int) -> np.ndarray:
    table = np.full(size, base, dtype=np.uint64)
    table[0] = 1
    with np.errstate(over="ignore"):
        return np.cumprod(table, out=table)


_POWERS = _Powers()


def word_hashes(text: str) -> np.ndarray:
    """The hash of every normalised word of a text, in order (uint64)."""
    return words(text)[0]


def words(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Every normalised word's hash, in order, and whether the word is all digits."""
    found = words_of([text])
    return found.hashes, found.numeric


@dataclass(frozen=True)
class Words:
    """The normalised words of several texts, end to end: each word's hash, whether it is all digits, and the number
    of the text it belongs to (ascending)."""

    hashes: np.ndarray
    numeric: np.ndarray
    text: np.ndarray
    count: int

    def bounds(self) -> np.ndarray:
        """Where each text's words begin, and one past the last word."""
        return np.searchsorted(self.text, np.arange(self.count + 1))


def words_of(texts: Sequence[str]) -> Words:
    """`words` of many texts in a few array operations per CHUNK_BYTES of text (not per text): plain ASCII texts are
    joined, the others (normalised first) go alone."""
    hashes, numeric, owners = [], [], []
    for first, raw, is_word, codes, offsets in _segments(texts):
        found, digits, starts = _hash_words(raw, is_word, codes)
        hashes.append(found)
        numeric.append(digits)
        owners.append(first + np.searchsorted(offsets, starts, "right") - 1)
    if not hashes:
        return Words(EMPTY, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), len(texts))
    return Words(np.concatenate(hashes), np.concatenate(numeric), np.concatenate(owners), len(texts))


def _segments(texts: Sequence[str]) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Runs of consecutive ASCII texts of about CHUNK_BYTES joined by newlines, and every other text alone: the first
    text's number, the bytes, which are word bytes, their codes, and where each text begins."""
    batch: list[str] = []
    first = size = 0
    for number, text in enumerate(texts):
        if not text.isascii():
            if batch:
                yield _ascii_segment(first, batch)
            raw = np.frombuffer(" ".join(normalize(text)).encode("utf-8", "surrogatepass"), dtype=np.uint8)
            # a word's UTF-8 bytes are never a space
            yield number, raw, (raw != _SPACE).view(np.int8), raw.astype(np.uint64), np.zeros(1, dtype=np.int64)
            batch, first, size = [], number + 1, 0
            continue
        batch.append(text)
        size += len(text) + 1
        if size >= CHUNK_BYTES:
            yield _ascii_segment(first, batch)
            batch, first, size = [], number + 1, 0
    if batch:
        yield _ascii_segment(first, batch)


def _ascii_segment(first: int, batch: list[str]) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    raw = np.frombuffer("\n".join(batch).encode("ascii"), dtype=np.uint8)
    offsets = np.zeros(len(batch), dtype=np.int64)
    np.cumsum([len(text) + 1 for text in batch[:-1]], out=offsets[1:])
    return first, raw, _WORD_BYTES[raw], _LOWER[raw], offsets


def _hash_words(raw: np.ndarray, is_word: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                   np.ndarray]:
    """Every word's hash, whether it is all digits, and its first byte."""
    length = raw.size
    if length == 0:
        return EMPTY, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    edges = np.zeros(length + 2, dtype=np.int8)
    edges[1:-1] = is_word
    bounds = np.flatnonzero(edges[1:] != edges[:-1])  # alternately a word's first byte and one past its last
    starts, ends = bounds[0::2], bounds[1::2]
    digits = np.zeros(length + 1, dtype=np.int64)
    np.cumsum(_DIGIT_BYTES[raw], out=digits[1:])
    numeric = digits[ends] - digits[starts] == ends - starts
    _POWERS.cover(length)
    prefix = np.empty(length + 1, dtype=np.uint64)
    prefix[0] = 0
    with np.errstate(over="ignore"):
        codes *= _POWERS.up[1:length + 1]
        np.cumsum(codes, out=prefix[1:])
        return mix64((prefix[ends] - prefix[starts]) * _POWERS.down[starts]), numeric, starts


def runs_within(found: Words, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The hash of every run of `width` consecutive words inside one text, and that text's number."""
    values = run_hashes(found.hashes, width)
    owners = found.text[:values.size]
    inside = found.text[width - 1:] == owners
    return values[inside], owners[inside]


def content_pairs(found: Words, gap: int = PAIR_GAP, max_words: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of content words (not stop words, not numbers) at most `gap` content words apart inside one
    text, hashed, and that text's number (texts of more than `max_words` words give none): a set that survives
    substituting words (a pair needs only its own two) and reordering sentences."""
    keep = ~found.numeric & ~_is_stop_word(found.hashes)
    if max_words is not None:
        keep &= (np.bincount(found.text, minlength=found.count) <= max_words)[found.text]
    content, owners = found.hashes[keep], found.text[keep]
    values, holders = [EMPTY], [np.zeros(0, dtype=np.int64)]
    with np.errstate(over="ignore"):
        for distance in range(1, min(gap, content.size - 1) + 1):
            inside = owners[distance:] == owners[:-distance]
            values.append(mix64(content[:-distance][inside] * _PAIR_BASE + content[distance:][inside]))
            holders.append(owners[:-distance][inside])
    return np.concatenate(values), np.concatenate(holders)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (np.unique's result, several times faster on the small arrays of one text)."""
    if values.size < 2:
        return values.copy()
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _is_stop_word(hashes: np.ndarray) -> np.ndarray:
    return _STOP_TABLE[hashes & _STOP_MASK] == hashes


def _direct_table(keys: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """A table holding each key at its low bits (as few bits as leave no two keys in one slot): membership is one
    gather and one comparison."""
    size = 1 << 10
    while distinct(keys & np.uint64(size - 1)).size < keys.size:
        size <<= 1
    table = np.zeros(size, dtype=np.uint64)  # an empty slot holds 0, the hash of no word but with odds of 2**-64
    table[keys & np.uint64(size - 1)] = keys
    return table, np.uint64(size - 1)


def mix64(values: np.ndarray) -> np.ndarray:
    """A bijection on 64-bit integers in which every output bit depends on every input bit (in place)."""
    with np.errstate(over="ignore"):
        values ^= values >> np.uint64(31)
        values *= np.uint64(0x9E3779B97F4A7C15)
        values ^= values >> np.uint64(29)
        values *= np.uint64(0xBF58476D1CE4E5B9)
        values ^= values >> np.uint64(32)
    return values


def run_hashes(hashes: np.ndarray, width: int) -> np.ndarray:
    """A hash of every run of `width` consecutive word hashes (polynomial, modulo 2**64)."""
    if hashes.size < width:
        return EMPTY
    count = hashes.size - width + 1
    out = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(width):
            out *= _RUN_BASE
            out += hashes[offset:offset + count]
    return out


_STOP_TABLE, _STOP_MASK = _direct_table(distinct(word_hashes(" ".join(sorted(STOP_WORDS)))))
