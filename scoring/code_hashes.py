"""Token hashes of source code, for the contamination gate: code normalised so that renaming, new literals, new
comments and new layout do not hide a copy.

A file is split into tokens by one regular expression (Python, shell, Ruby and Perl comment with `#`; JavaScript
and TypeScript with `//` and `/* */`). Comments, docstrings and layout are dropped. Every literal (string, number)
becomes `L`, and a run of literals separated by commas (a table of names or numbers) one `L`, so a rewritten table
is no different from the original; every identifier becomes `I` unless it is a keyword or a Python builtin
(renaming those would change the program). Operators and brackets stay as they are: what is left is the program's
shape, which renaming cannot change. The gate compares runs of `CODE_GRAM` consecutive tokens.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re

import numpy as np

from scoring.text_hashes import EMPTY, run_hashes

_STRING = (r"(?i:[rbuf]{0,2})(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\""
           r"|`(?:\\.|[^`\\])*`)")
_TAIL = r"|(?P<number>\.?\d[\w.]*)|(?P<name>[^\W\d]\w*)|(?P<op>[^\s\w])"
_HASH_COMMENTS = re.compile(rf"(?P<comment>#[^\n]*)|(?P<string>{_STRING}){_TAIL}")
_SLASH_COMMENTS = re.compile(rf"(?P<comment>//[^\n]*|/\*[\s\S]*?\*/)|(?P<string>{_STRING}){_TAIL}")
SLASH_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx"})
CODE_SUFFIXES = frozenset({".py", ".sh", ".bash", ".rb", ".pl", *SLASH_SUFFIXES})
_OTHER_KEYWORDS = ("then fi do done esac elif function local export readonly declare const let var new this typeof "
                   "instanceof switch case default throw catch finally undefined null true false delete void yield "
                   "async await require module exports my our sub unless until elsif begin end puts")
KEPT = frozenset({*keyword.kwlist, *keyword.softkwlist, *dir(builtins), *_OTHER_KEYWORDS.split()})
LITERAL, IDENTIFIER = "L", "I"
_IDS: dict[str, np.uint64] = {}


def is_code(name: str, text: str) -> bool:
    """Whether a file is source code: a code suffix, or a shebang line."""
    return any(name.endswith(suffix) for suffix in CODE_SUFFIXES) or text.startswith("#!")


def normalize_code(text: str, name: str = "") -> list[str]:
    """A program's tokens with comments, docstrings and layout dropped, literals as `L` (a comma-separated run of
    them as one) and identifiers other than keywords and builtins as `I`."""
    pattern = _SLASH_COMMENTS if any(name.endswith(s) for s in SLASH_SUFFIXES) else _HASH_COMMENTS
    tokens: list[str] = []
    last_end = 0
    for match in pattern.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            continue
        if kind in ("string", "number"):
            if kind == "string" and _docstring(tokens, text[last_end:match.start()]):
                continue
            if tokens[-2:] == [LITERAL, ","]:
                tokens.pop()
            if not tokens or tokens[-1] != LITERAL:
                tokens.append(LITERAL)
        else:
            value = match.group()
            tokens.append(value if kind == "op" or value in KEPT else IDENTIFIER)
        last_end = match.end()
    return tokens


def _docstring(before: list[str], gap: str) -> bool:
    """Whether a string is a docstring: the first thing in the file, or on a new line after a block's colon."""
    return not before or (before[-1] == ":" and "\n" in gap)


def code_hashes(text: str, name: str = "") -> np.ndarray:
    """One 64-bit hash per normalised token (stable across runs and machines)."""
    tokens = normalize_code(text, name)
    if not tokens:
        return EMPTY
    missing = [t for t in set(tokens) if t not in _IDS]
    for token in missing:
        _IDS[token] = np.uint64(int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little"))
    return np.fromiter((_IDS[t] for t in tokens), dtype=np.uint64, count=len(tokens))


def code_grams(text: str, name: str, width: int) -> np.ndarray:
    """The hash of every run of `width` normalised tokens."""
    return run_hashes(code_hashes(text, name), width)
