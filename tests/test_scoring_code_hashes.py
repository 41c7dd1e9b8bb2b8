"""Code normalisation for the contamination gate: renaming, new literals, comments and layout leave a program's
tokens as they were; a different program's differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scoring.code_hashes import code_grams, code_hashes, is_code, normalize_code
from tests.support.contamination import rename_code

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = '''
import json

def total(rows, factor=2):
    """Sum the rows."""
    kept = [r * factor for r in rows if r > 10]  # drop small ones
    return {"total": sum(kept), "names": ["alpha", "beta", "gamma"]}
'''
DISGUISED = '''
import json
def grand_sum(lines, k=9):
    # a different comment
    picked = [x * k
              for x in lines if x > 999]
    return {'sum': sum(picked), 'labels': ['one', "two"]}
'''


def test_renaming_literals_comments_and_layout_do_not_count() -> None:
    assert normalize_code(ORIGINAL, "a.py") == normalize_code(DISGUISED, "b.py")
    assert normalize_code("x = 1\n", "a.py") == ["I", "=", "L"]
    assert normalize_code("values = [1, 2, 3, 'a', 'b']", "a.py") == ["I", "=", "[", "L", "]"]  # a table is one L
    assert normalize_code("print(len(x))", "a.py") == ["print", "(", "len", "(", "I", ")", ")"]  # builtins stay
    assert normalize_code(ORIGINAL.replace("for r in rows if", "for r in rows while"), "a.py") != \
        normalize_code(ORIGINAL, "a.py")


def test_comment_syntax_follows_the_language() -> None:
    javascript = "const a = b // c\n/* block\ncomment */ let d = 'e' + `f${g}`;"
    assert normalize_code(javascript, "x.js") == ["const", "I", "=", "I", "let", "I", "=", "L", "+", "L", ";"]
    assert normalize_code("a = b // c  # note", "x.py") == ["I", "=", "I", "/", "/", "I"]
    assert normalize_code("echo \"$HOME\" # home\nexit 0", "run.sh") == ["I", "L", "exit", "L"]


def test_what_counts_as_code() -> None:
    assert is_code("instance/generate.py", "") and is_code("solve.sh", "") and is_code("web/app.ts", "")
    assert is_code("tools/run", "#!/bin/sh\necho hi\n") and not is_code("notes.txt", "hello #!")
    assert not is_code("data.csv", "a,b") and not is_code("task.md", "# Title")


def test_a_renamed_sample_generator_keeps_its_runs() -> None:
    source = (ROOT / "suites/sample/packages/ticket-routing/instance/generate.py").read_text()
    original, renamed = (np.unique(code_grams(text, "g.py", 20)) for text in (source, rename_code(source)))
    assert original.size > 1000 and np.intersect1d(original, renamed).size / original.size > 0.95
    other = np.unique(code_grams((ROOT / "suites/sample/packages/cargo-loading/instance/generate.py").read_text(),
                                 "g.py", 20))
    assert np.intersect1d(original, other).size / other.size < 0.2  # shared helpers and idioms; the gate needs 0.5


def test_hashes_are_stable_and_empty_code_has_none() -> None:
    assert code_hashes("", "a.py").size == 0 and code_grams("x = 1", "a.py", 20).size == 0
    assert code_hashes("return x", "a.py").tolist() == code_hashes("return   y  # z", "b.py").tolist()
