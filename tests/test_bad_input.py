"""Bad input never crashes the parser: each case gives a diagnostic naming the file (and line where there is one)."""

from __future__ import annotations

import os
import shutil
import string
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskpkg import strict_yaml
from taskpkg.loader import load_package
from taskpkg.rules.task_file import ARENA104, ARENA105
from taskpkg.task_file import MAX_TASK_BYTES
from tests.support.packages import make_valid_package
from validators.static import run_static_checks


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def frontmatter_of(package: Path) -> str:
    return (package / "task.md").read_text().split("---\n")[1]


def write_task(package: Path, text: str | bytes) -> None:
    path = package / "task.md"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def only(package: Path, check_id: str):
    found = [d for d in load_package(package).diagnostics if d.check_id == check_id]
    assert found, [d.to_dict() for d in load_package(package).diagnostics]
    return found[0]


CASES = {
    "empty file": ("", "ARENA100", 1),
    "only whitespace": ("\n\n  \n", "ARENA100", 1),
    "no frontmatter": ("# Just a prompt\n", "ARENA103", 1),
    "unterminated frontmatter": ("---\nname: x\n", "ARENA103", 1),
    "yaml syntax error": ("---\nname: [x\ntitle: y\n---\nbody\n", "ARENA104", None),
    "tab indentation": ("---\nlimits:\n\tcpus: 1\n---\nbody\n", "ARENA104", 3),
    "alias bomb": ("---\na: &a [x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n---\nbody\n", "ARENA105", 3),
    "python tag": ("---\nname: !!python/object/apply:os.system [ls]\n---\nbody\n", "ARENA105", 2),
    "duplicate key": ("---\nname: a\nname: b\n---\nbody\n", "ARENA105", 3),
    "list frontmatter": ("---\n- a\n---\nbody\n", "ARENA106", 2),
    "scalar frontmatter": ("---\njust words\n---\nbody\n", "ARENA106", 2),
    "empty frontmatter": ("---\n---\nbody\n", "ARENA106", 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_task_md(package: Path, case: str) -> None:
    text, check_id, line = CASES[case]
    write_task(package, text)
    finding = only(package, check_id)
    assert finding.file == "task.md"
    if line is not None:
        assert finding.line == line
    assert not run_static_checks(package).passed


def test_yaml_error_line_counts_from_the_top_of_task_md(package: Path) -> None:
    write_task(package, "---\nschema_version: 1\nname: [x\n---\nbody\n")
    finding = only(package, "ARENA104")
    assert finding.line in (3, 4, 5) and finding.column is not None


def test_non_utf8_names_the_line(package: Path) -> None:
    write_task(package, b"---\nschema_version: 1\ntitle: caf\xe9\n---\n")
    finding = only(package, "ARENA100")
    assert finding.line == 3 and "0xe9" in finding.message


def test_bom_and_crlf_are_warnings_and_the_package_still_loads(package: Path) -> None:
    raw = (package / "task.md").read_bytes()
    write_task(package, b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    result = load_package(package)
    assert result.package is not None
    assert {d.check_id for d in result.diagnostics} == {"ARENA101", "ARENA102"}


def test_huge_task_md(package: Path) -> None:
    write_task(package, "---\n" + "x" * (MAX_TASK_BYTES + 1))
    assert "limit" in only(package, "ARENA100").message


def test_wrong_types_name_the_json_path(package: Path) -> None:
    text = (package / "task.md").read_text().replace("memory_mb: 512", "memory_mb: '512'")
    write_task(package, text.replace("- name: Grace Hopper", "- name: 7"))
    paths = {d.message.split(":")[0] for d in load_package(package).diagnostics if d.check_id == "ARENA112"}
    assert {"limits.memory_mb", "authors[0].name"} <= paths


def test_unquoted_version_is_explained(package: Path) -> None:
    write_task(package, (package / "task.md").read_text().replace('version: "0.1.0"', "version: 1.0"))
    finding = only(package, "ARENA112")
    assert finding.message.startswith("version") and "Quote it" in finding.fix


def test_missing_task_md_and_folders(package: Path) -> None:
    shutil.rmtree(package / "oracle")
    shutil.rmtree(package / "environment")
    (package / "task.md").unlink()
    report = run_static_checks(package)
    missing = {d.file for d in report.diagnostics if d.check_id == "ARENA002"}
    assert missing == {"task.md", "environment/Dockerfile", "oracle"}


def test_task_md_symlink_escaping_is_not_followed(package: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text((package / "task.md").read_text())
    (package / "task.md").unlink()
    os.symlink(secret, package / "task.md")
    report = run_static_checks(package)
    assert {"ARENA002", "ARENA003"} <= {d.check_id for d in report.diagnostics}
    assert report.name is None


def test_symlinked_folder_escaping(package: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("x")
    os.symlink(outside, package / "environment" / "data")
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA003"]
    assert finding.file == "environment/data"


def test_generator_path_cannot_escape(package: Path) -> None:
    write_task(package, (package / "task.md").read_text().replace("instance/generate.py", "../../etc/passwd"))
    assert "inside the package" in only(package, "ARENA116").message


def test_diagnostics_are_json_serialisable_for_every_case(package: Path) -> None:
    import json

    for text, _, _ in CASES.values():
        write_task(package, text)
        json.dumps(run_static_checks(package).to_dict())


# Hypothesis: the frontmatter parser and the loader never raise, whatever the text.
YAMLISH = st.text(alphabet=string.printable + "äé€\u2028\t", max_size=400)
FRAGMENTS = st.lists(
    st.sampled_from(["name: ", "- ", "&a ", "*a ", "!!str ", "{", "}", "[", "]", ": ", "'", '"', "\n", "  ", "#",
                     "limits:\n  cpus: ", "---\n", "<<: ", "? ", "|\n  ", "1e9", "null", "~", "\\x00"]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(YAMLISH, FRAGMENTS))
def test_strict_yaml_never_raises_anything_but_its_error(text: str) -> None:
    try:
        document = strict_yaml.load(text)
    except strict_yaml.StrictYamlError as exc:
        assert exc.rule in (ARENA104, ARENA105) and exc.message and exc.fix
        assert exc.finding("task.md", exc.line).check_id == exc.rule.id
    else:
        assert _plain(document.data), document.data


def _plain(value: object) -> bool:
    """Whether a value is plain data: mappings with text keys, lists, and scalars (no constructed objects)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool | date)


def test_plain_data_check_refuses_constructed_objects() -> None:
    assert _plain({"a": [1, 2.5, None, True, "x", date(2024, 1, 1)]})
    assert not _plain({"a": object()}) and not _plain({1: "x"}) and not _plain([{"k": {1, 2}}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(YAMLISH, FRAGMENTS), st.binary(max_size=64))
def test_loader_never_raises(package: Path, frontmatter: str, tail: bytes) -> None:
    write_task(package, b"---\n" + frontmatter.encode("utf-8", "surrogatepass") + b"\n---\nprompt\n" + tail)
    result = load_package(package)
    for diagnostic in result.diagnostics:
        assert diagnostic.file == "task.md" and diagnostic.check_id.startswith("ARENA")
    assert result.package is None or result.ok  # a package comes back only when nothing of error severity was found
