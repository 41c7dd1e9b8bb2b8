"""A task's Markdown body as safe HTML: markdown-it-py with raw HTML off, no images, guarded links.

The body is untrusted: raw HTML is written as text, links keep only http(s), mailto and in-page targets (others
become plain text), and images become their alt text, so a task page never loads anything from elsewhere.
"""

from __future__ import annotations

from functools import cache
from html import escape
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

MAX_CHARS = 100_000
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


def safe_href(url: str) -> bool:
    """Only web, mail and in-page links: no javascript:, data:, file: or scheme-relative //host URLs."""
    stripped = url.strip()
    if stripped.startswith("#"):
        return True
    if stripped.startswith("//"):
        return False
    scheme = urlsplit(stripped).scheme.lower()
    return scheme in SAFE_SCHEMES


class _Renderer(RendererHTML):
    """Links that are not safe render as their text; safe ones never send a referrer; images are their alt text."""

    def image(self, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        alt = "".join(child.content for child in tokens[idx].children or [])
        return f'<span class="image-alt">[image: {escape(alt)}]</span>'

    def link_open(self, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        href = str(token.attrGet("href") or "")
        if not safe_href(href):
            token.meta["dropped"] = True
            return ""
        token.attrSet("rel", "nofollow noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    def link_close(self, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        depth = 0
        for back in range(idx - 1, -1, -1):  # find the matching link_open
            kind = tokens[back].type
            if kind == "link_close":
                depth += 1
            elif kind == "link_open":
                if depth == 0:
                    return "" if tokens[back].meta.get("dropped") else self.renderToken(tokens, idx, options, env)
                depth -= 1
        return self.renderToken(tokens, idx, options, env)


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False},
                        renderer_cls=_Renderer).enable("table")
    parser.validateLink = lambda url: True  # every link reaches the renderer, which decides (safe_href)
    return parser


def task_html(body: str) -> str:
    """The body rendered to HTML that holds no markup of the author's and loads nothing."""
    note = ""
    if len(body) > MAX_CHARS:
        body, note = body[:MAX_CHARS], f'<p class="note">(The task text is cut at {MAX_CHARS:,} characters.)</p>'
    return _parser().render(body) + note
