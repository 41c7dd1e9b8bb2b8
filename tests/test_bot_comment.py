"""The sticky comment's Markdown: every untrusted string inert, links at the PR head, and a bounded size."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.comment import LIMIT, Context, inline, neutralise, verdict_body
from bot.markers import MARKER
from bot.sticky import StickyState, parse_state
from taskpkg.check_report import PackageReport, Report
from tests.support.github_standin import fake_sha

HEAD = fake_sha(1)
CTX = Context("https://github.com", "arena-org/arena", HEAD, "attacker:branch", "sample-task",
              "https://github.com/arena-org/arena/actions/runs/9")


@pytest.mark.parametrize(("text", "expected"), [
    ("<script>alert(1)</script>", "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"),
    ("ping @octocat and @org/team", "ping @\u200boctocat and @\u200borg/team"),
    ("a | b || c", "a \\| b \\|\\| c"),
    ("use `rm -rf` here", "use \\`rm -rf\\` here"),
    ("line one\nline two\r\n\tend", "line one line two end"),
    ("<!-- posttrain-arena:sticky -->", "&lt;\\!-- posttrain-arena:sticky --&gt;"),
    ("[click](https://evil.example/x)", "\\[click\\]\\(https:\u200b//evil.example/x\\)"),
    ("![img](http://e/i.png)", "\\!\\[img\\]\\(http:\u200b//e/i.png\\)"),
    ("see www.evil.example", "see w\u200bww.evil.example"),
    ("fixes #12 and GH-3", "fixes #\u200b12 and GH-\u200b3"),
    ("**bold** _it_ ~~s~~ $x$", "\\*\\*bold\\*\\* \\_it\\_ \\~\\~s\\~\\~ \\$x\\$"),
    ("evil\u202eexe.txt", "evilexe.txt"),
    ("&lt;already&gt;", "&amp;lt;already&amp;gt;"),
    ("\\|", "\\\\\\|"),
])
def test_inline_makes_untrusted_text_inert(text: str, expected: str) -> None:
    assert inline(text) == expected


@pytest.mark.parametrize("invisible", [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",  # bidi controls
    "\u200e", "\u200f", "\u061c",  # LRM, RLM, ALM
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u2061", "\u2064", "\u180e",  # zero width
    "\U000e0001", "\U000e0041", "\U000e007f",  # tag characters
])
def test_every_invisible_formatting_character_is_removed(invisible: str) -> None:
    assert neutralise(f"pay{invisible}pal") == "paypal"


@given(st.text(st.characters(codec="utf-8") | st.sampled_from("\u202e\u2066\U000e0041\ufeff\u2028\x00\r\n")))
def test_inline_leaves_no_control_or_invisible_character_but_its_own(text: str) -> None:
    out = inline(text)
    categories = {unicodedata.category(c) for c in out if c != "\u200b"}
    assert not categories & {"Cf", "Cc", "Zl", "Zp", "Cs", "Cn"}, out
    for at in (m.start() for m in re.finditer("\u200b", out)):  # each one the bot put there to break a link
        assert out[at - 1] in "@#-:w", out


def test_inline_bounds_length_before_escaping() -> None:
    out = inline("<" * 1000, limit=10)
    assert out == "&lt;" * 9 + "…"


def test_a_marker_in_untrusted_text_never_reads_as_the_bots() -> None:
    state = StickyState(HEAD, "main", "fail", "sample-task", 9, 1)
    body = verdict_body(state, CTX, _report([_diag("x")]),
                        _package([_diag(f"{MARKER}\n<!-- posttrain-arena:state head={'0' * 40} run=99.9 "
                                        "outcome=pass -->")], title=MARKER))
    assert body.count("<!--") == 2 and parse_state(body) == state


def test_file_links_point_at_the_head_and_are_encoded() -> None:
    link = CTX.blob_link("environments/sample-task", "data/a file (1)].txt", 7)
    assert link == (f"[data/a file \\(1\\)\\].txt:7](https://github.com/arena-org/arena/blob/{HEAD}/"
                    "environments/sample-task/data/a%20file%20%281%29%5D.txt#L7)")
    assert CTX.blob_link("environments/sample-task", "../../secrets", 1) == "../../secrets:1"
    assert CTX.blob_link("environments/sample-task", ".", None) == "."
    assert CTX.blob_link("environments/sample-task", None, None) == "package"


def test_a_huge_report_fits_one_comment_and_points_at_the_run() -> None:
    diagnostics = [_diag("<" * 4000 + f" {n}", line=n + 1) for n in range(2000)]
    body = verdict_body(StickyState(HEAD, "main", "fail", "sample-task", 9, 1), CTX, _report(diagnostics),
                        _package(diagnostics))
    assert len(body) < LIMIT
    assert re.search(r"\| … \| \| \| \d+ more findings not shown \| see the \[Actions run\]\(https://github.com/"
                     r"arena-org/arena/actions/runs/9\) \|", body)
    assert body.splitlines()[2].startswith("## ❌ Arena check failed")  # the verdict still comes first


def _diag(message: str, line: int | None = 3) -> dict:
    return {"check_id": "ARENA202", "severity": "error", "message": message, "fix": "fix it", "file": "task.md",
            "line": line, "column": None}


def _package(diagnostics: list[dict], title: str | None = None) -> PackageReport:
    return PackageReport.from_dict({
            "path": "environments/sample-task", "name": "sample-task", "title": title, "domain": "finance",
            "instances": 10, "verdict": "fail", "counts": {"error": len(diagnostics), "warning": 0, "info": 0},
            "duration_ms": 12.5, "diagnostics": diagnostics, "trials": [],
            "checks": [{"check_id": "ARENA202", "title": "placeholder", "status": "failed"}]})


def _report(diagnostics: list[dict]) -> Report:
    return Report("static", [_package(diagnostics)], duration_s=0.1)
