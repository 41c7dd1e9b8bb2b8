"""The small pieces: YAML writing, source locations, and the category-to-domain table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interop.map.domain import DOMAIN_WORDS, domain_of, slug
from interop.read.tables import toml_locator, yaml_table
from interop.write.frontmatter import render, scalar
from taskpkg import strict_yaml
from taskpkg.domains import DOMAINS

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_any_string_survives_the_strict_yaml_parser(text: str) -> None:
    document = strict_yaml.load(f"title: {scalar(text)}\nlist: [{scalar(text)}, x]\nflow: {{a: {scalar(text)}}}\n")
    assert document.data == {"title": text, "list": [text, "x"], "flow": {"a": text}}


def test_plain_where_unambiguous_quoted_otherwise() -> None:
    assert [scalar(v) for v in ("finance", "Ada Lovelace", "yes", "1.0.0", "a: b", "# x", "-x", 2, 0.5)] == [
        "finance", "Ada Lovelace", '"yes"', '"1.0.0"', '"a: b"', '"# x"', '"-x"', "2", "0.5"]


def test_render_places_comments_and_flow_items() -> None:
    text = render({"authors": [{"name": "Ada", "github": "x"}], "limits": {"pids": 256}, "network": {"agent": "none"},
                   "tags": ["a", "b"], "version": "1.0.0"},
                  {("authors", 0, "github"): "TODO(arena): handle", ("limits", "pids"): "default"})
    assert text == ('authors:\n  - name: Ada\n    github: x  # TODO(arena): handle\nlimits:\n  pids: 256  # default\n'
                    'network: {agent: none}\ntags: [a, b]\nversion: "1.0.0"\n')
    assert strict_yaml.load(text).data["authors"] == [{"name": "Ada", "github": "x"}]


def test_locations_of_keys() -> None:
    toml = 'version = "1"\n\n[task]\nname = "a/b"\n\n[[steps]]\nname = "one"\n[steps.agent]\ntimeout_sec = 2\n' \
           '\n[[steps]]\nname = "two"\n'
    found = toml_locator("task.toml", toml)
    assert found.where(("task", "name")) == "task.toml:4" and found.where(("steps", 1, "name")) == "task.toml:12"
    assert found.where(("steps", 0, "agent", "timeout_sec")) == "task.toml:9"
    assert found.where(("task", "nothing")) == "task.toml:3" and found.where(("other",)) == "task.toml"
    yaml = "task:\n  name: a\nmetadata:\n  tags:\n    - x\n    - y\n"
    data, located = yaml_table("task.md", yaml, 2)
    assert data["metadata"]["tags"] == ["x", "y"]
    assert located.where(("task", "name")) == "task.md:3" and located.where(("metadata", "tags", 1)) == "task.md:7"


@pytest.mark.parametrize(("category", "domain"), [
    ("Accounting", "finance"), ("financial_analysis", "finance"), ("Clinical", "healthcare"),
    ("legal", "law-government"), ("spreadsheets", "office-documents"), ("customer-support", "customer-operations"),
    ("data-science", "science-engineering"), ("system-administration", "cybersecurity-it"),
    ("scheduling", "math-planning"), ("software-engineering", None), ("games", None), ("security-finance", None),
])
def test_domain_of(category: str, domain: str | None) -> None:
    assert domain_of(category) == domain


def test_the_table_covers_exactly_the_eight_domains() -> None:
    assert set(DOMAIN_WORDS) == set(DOMAINS)
    words = [w for ws in DOMAIN_WORDS.values() for w in ws]
    assert len(words) == len(set(words)) and all(slug(w) == w for w in words)
