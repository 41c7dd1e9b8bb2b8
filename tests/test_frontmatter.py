"""The one frontmatter reader (taskpkg.frontmatter): lines are lines of the whole document, every failure is a
FrontmatterError with its rule, and no text makes it raise anything else (fuzzed)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskpkg.frontmatter import FrontmatterError, read_frontmatter, split_frontmatter

DOCUMENT = "---\nname: a\nlimits:\n  cpus: 2\ntags: [x, y]\n---\n# Prompt\n\nDo {{ instance.n }}.\n"


def test_lines_are_lines_of_the_document() -> None:
    front = read_frontmatter(DOCUMENT)
    assert front.data == {"name": "a", "limits": {"cpus": 2}, "tags": ["x", "y"]}
    lines = DOCUMENT.split("\n")
    assert lines[front.line_of(("limits", "cpus")) - 1] == "  cpus: 2"
    assert lines[front.line_of(("tags", 1)) - 1].startswith("tags:")
    assert front.body == "# Prompt\n\nDo {{ instance.n }}.\n" and lines[front.body_first_line - 1] == "# Prompt"


@pytest.mark.parametrize(("text", "rule", "line"), [
    ("# no fences\n", "ARENA103", 1),
    ("---\nname: a\n", "ARENA103", 1),
    ("---\nname: a\nname: b\n---\n", "ARENA105", 3),
    ("---\na: &x [1]\nb: *x\n---\n", "ARENA105", 3),
    ("---\nname: !!python/object:os.system x\n---\n", "ARENA105", 2),
    ("---\nok: 1\nname: [x\n---\n", "ARENA104", None),
    ("---\n- a list\n---\n", "ARENA106", 2),
    ("---\n---\nbody\n", "ARENA106", 2),
])
def test_each_failure_names_its_rule_and_document_line(text: str, rule: str, line: int | None) -> None:
    with pytest.raises(FrontmatterError) as caught:
        read_frontmatter(text, "tasks/x/task.md")
    finding = caught.value.finding("tasks/x/task.md")
    assert finding.check_id == rule and finding.file == "tasks/x/task.md" and finding.message and finding.fix
    if line is not None:
        assert finding.line == line


def test_the_error_names_the_file_it_was_given() -> None:
    with pytest.raises(FrontmatterError, match=r"elsewhere\.md does not start"):
        split_frontmatter("no fence", "elsewhere.md")


def test_an_alias_bomb_is_refused_before_it_grows() -> None:
    layers = "\n".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 30))
    with pytest.raises(FrontmatterError) as caught:
        read_frontmatter(f"---\nl0: &l0 [lol]\n{layers}\n---\n")
    assert caught.value.rule.id == "ARENA105" and caught.value.line == 3


FRAGMENTS = st.lists(st.sampled_from([
    "---\n", "--- \n", "name: ", "- ", "&a ", "*a ", "!!str ", "{", "}", "[", "]", ": ", "'", '"', "\n", "  ", "#",
    "\t", "<<: ", "? ", "|\n  ", "x", "1", "~", "\r", "\ufeff", "{{ instance.k }}",
]), max_size=50).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(FRAGMENTS, st.text(alphabet=string.printable + "äé\u2028", max_size=300)))
def test_any_text_reads_or_fails_with_a_located_frontmatter_error(text: str) -> None:
    lines = text.split("\n")
    try:
        front = read_frontmatter(text)
    except FrontmatterError as exc:
        finding = exc.finding("task.md")
        assert finding.check_id in {"ARENA103", "ARENA104", "ARENA105", "ARENA106"} and finding.message
        assert finding.line is None or 1 <= finding.line <= len(lines)
        return
    assert isinstance(front.data, dict)
    assert all(2 <= line < front.body_first_line - 1 for line in front.document.lines.values())
    assert lines[front.body_first_line - 2].rstrip() == "---"
    assert front.body == "\n".join(lines[front.body_first_line - 1:])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"k_[a-z_]{0,8}", fullmatch=True),  # never a YAML word such as `off`
                       st.one_of(st.integers(-10**6, 10**6), st.from_regex(r"[A-Za-z][A-Za-z ]{0,12}", fullmatch=True)),
                       min_size=1, max_size=6),
       st.text(alphabet=string.ascii_letters + " \n#-", max_size=80))
def test_written_frontmatter_reads_back_with_every_key_on_its_line(data: dict, body: str) -> None:
    yaml_lines = [f"{key}: {value!r}" if isinstance(value, str) else f"{key}: {value}" for key, value in data.items()]
    text = "---\n" + "\n".join(yaml_lines) + "\n---\n" + body
    front = read_frontmatter(text)
    assert front.data == data
    for index, key in enumerate(data):
        assert front.line_of((key,)) == index + 2
    assert front.body == body
