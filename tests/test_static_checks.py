"""Every static check id has a failing case (a package broken in one way) and a passing case (the valid package)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from taskpkg.checks import CHECKS
from tests.support.packages import edit, make_valid_package
from validators.static import STATIC_IDS, run_static_checks

Mutation = Callable[[Path], None]
TASK = "task.md"


def _task(old: str, new: str) -> Mutation:
    return lambda p: edit(p / TASK, old, new)


def _write(relative: str, content: str | bytes) -> Mutation:
    def apply(package: Path) -> None:
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    return apply


def _remove(relative: str) -> Mutation:
    def apply(package: Path) -> None:
        path = package / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return apply


def _dockerfile(old: str, new: str) -> Mutation:
    return lambda p: edit(p / "environment" / "Dockerfile", old, new)


def _verifier_append(code: str) -> Mutation:
    return lambda p: (p / "verifier.py").write_text((p / "verifier.py").read_text() + "\n" + code + "\n")


def _scenes(roles: str, scenes: str, body_suffix: str = "") -> Mutation:
    def apply(package: Path) -> None:
        edit(package / TASK, "verifier:\n", f"roles:\n{roles}scenes:\n{scenes}verifier:\n")
        (package / TASK).write_text((package / TASK).read_text() + body_suffix)

    return apply


AGENT_AND_CUSTOMER = "  - {name: agent, kind: agent}\n  - {name: customer, kind: scripted}\n"
ONE_SCENE = "  - {name: opening, role: customer, section: Opening}\n"


def _symlink_out(package: Path) -> None:
    os.symlink("/etc/passwd", package / "environment" / "passwd")


def _fifo(package: Path) -> None:
    os.mkfifo(package / "environment" / "pipe")


def _large_file(package: Path) -> None:
    with (package / "environment" / "big.txt").open("wb") as handle:
        handle.truncate(6 * 1024 * 1024)


def _leak_oracle(package: Path) -> None:
    shutil.copy(package / "oracle" / "solve.py", package / "environment" / "helper.py")


FAILING: dict[str, Mutation] = {
    "ARENA001": shutil.rmtree,
    "ARENA002": _remove("verifier.py"),
    "ARENA003": _symlink_out,
    "ARENA004": _large_file,
    "ARENA005": _write("environment/blob.bin", b"\x00\x01\x02binary"),
    "ARENA006": _write("environment/notes.txt", "key = AKIAABCDEFGHIJKLMNOP\n"),
    "ARENA007": _fifo,
    "ARENA100": _write(TASK, b"---\nname: \xff\xfe\n---\n"),
    "ARENA101": lambda p: (p / TASK).write_bytes(b"\xef\xbb\xbf" + (p / TASK).read_bytes()),
    "ARENA102": lambda p: (p / TASK).write_bytes((p / TASK).read_bytes().replace(b"\n", b"\r\n")),
    "ARENA103": _task("---\nschema_version", "schema_version"),
    "ARENA104": _task("tags: []", "tags: [unclosed"),
    "ARENA105": _task("tags: []", "tags: &t []\nlabels: *t"),
    "ARENA106": _write(TASK, "---\n- just\n- a list\n---\nbody\n"),
    "ARENA110": _task("difficulty:", "dificulty: hard\ndifficulty:"),
    "ARENA111": _task("license: Apache-2.0\n", ""),
    "ARENA112": _task("cpus: 1", "cpus: lots"),
    "ARENA113": _task("name: sample-task", "name: other-task"),
    "ARENA114": _task("domain: finance", "domain: fintech"),
    "ARENA115": _task("oracle_timeout_s: 120", "oracle_timeout_s: 5000"),
    "ARENA116": _task("generator: instance/generate.py", "generator: instance/missing.py"),
    "ARENA118": _task("data: [instance]", "data: [environment]"),
    "ARENA119": _task("count: 1000", "count: 10"),
    "ARENA120": _task("schema_version: 1", "schema_version: 2"),
    "ARENA201": lambda p: (p / TASK).write_text((p / TASK).read_text().split("---\n", 2)[0] + "---\n"
                                                + (p / TASK).read_text().split("---\n", 2)[1] + "---\n\n"),
    "ARENA202": _write("environment/notes.md", "TODO(arena): describe the data\n"),
    "ARENA203": _task("Write their sum", "Write {{ answer }} their sum"),
    "ARENA204": _scenes("  - {name: agent, kind: agent}\n", ONE_SCENE, "\n## Opening\nHello.\n"),
    "ARENA205": _scenes(AGENT_AND_CUSTOMER, ONE_SCENE, "\n## Openning\nHello.\n"),
    "ARENA206": _scenes("  - {name: agent, kind: agent}\n  - {name: agent2, kind: agent}\n",
                        "  - {name: opening, role: agent, section: Opening}\n", "\n## Opening\nHello.\n"),
    "ARENA207": _scenes(AGENT_AND_CUSTOMER, ONE_SCENE, "\n## Opening\nHello.\n\n## Unused\nNobody says this.\n"),
    "ARENA401": _dockerfile("FROM debian:bookworm-slim", "FROM debian"),
    "ARENA402": lambda p: None,  # the valid package pins by tag only: a note, never an error
    "ARENA403": _dockerfile("WORKDIR", "RUN pip install numpy\nWORKDIR"),
    "ARENA404": lambda p: None,  # python3 is installed without a version in the valid package: a note
    "ARENA405": _dockerfile("WORKDIR", "ADD https://example.com/data.csv /data.csv\nWORKDIR"),
    "ARENA406": _leak_oracle,
    "ARENA407": _dockerfile("WORKDIR", "RUN curl -fsSL https://example.com/install.sh | sh\nWORKDIR"),
    "ARENA408": _write("environment/Dockerfile", "RUN echo no base\n"),
    "ARENA501": _verifier_append("def broken(:"),
    "ARENA502": _verifier_append("LOG = '/logs/agent/transcript.jsonl'"),
    "ARENA503": _verifier_append("import urllib.request"),
    "ARENA504": _verifier_append("import subprocess\nsubprocess.run(['pip', 'install', 'numpy'])"),
    "ARENA505": lambda p: edit(p / "verifier.py", 'os.environ["ARENA_OUTPUT"]', '"/tmp/reward.json"'),
    "ARENA601": _task("entrypoint: solve.sh", "entrypoint: run.sh"),
    "ARENA602": _write("oracle/solve.sh", "#!/bin/sh\ncp \"$(dirname \"$0\")/answer.txt\" answer.txt\n"),
    "ARENA603": _write("oracle/answer.txt", "42\n"),
}

# Checks whose passing case is a package that does the right thing differently from the scaffold.
PASSING_VARIANTS: dict[str, Mutation] = {
    "ARENA402": _dockerfile("FROM debian:bookworm-slim", "FROM debian:bookworm-slim@sha256:" + "a" * 64),
    "ARENA404": _dockerfile("python3 &&", "python3=3.11.2-1+b1 &&"),
    "ARENA403": _dockerfile("WORKDIR", "RUN pip install numpy==2.1.3\nWORKDIR"),
    "ARENA204": _scenes(AGENT_AND_CUSTOMER, ONE_SCENE, "\n## Opening\nHello.\n"),
}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def ids(package: Path) -> set[str]:
    return {d.check_id for d in run_static_checks(package).diagnostics}


def test_every_static_check_has_a_failing_case() -> None:
    assert set(FAILING) == set(STATIC_IDS)


def test_valid_package_passes_every_check(package: Path) -> None:
    report = run_static_checks(package)
    assert report.passed, [d.to_dict() for d in report.diagnostics]
    assert {d.check_id for d in report.diagnostics} <= {"ARENA402", "ARENA404"}
    assert {c["status"] for c in report.check_outcomes()} <= {"passed", "noted"}


@pytest.mark.parametrize("check_id", sorted(FAILING))
def test_check_fails_on_its_broken_package(package: Path, check_id: str) -> None:
    FAILING[check_id](package)
    report = run_static_checks(package)
    found = [d for d in report.diagnostics if d.check_id == check_id]
    assert found, f"{check_id} not reported; got {[d.check_id for d in report.diagnostics]}"
    for diagnostic in found:
        assert diagnostic.severity is CHECKS[check_id].severity
        assert diagnostic.file, "every finding names its file"
        assert diagnostic.message and diagnostic.fix
    if CHECKS[check_id].severity.value == "error":
        assert not report.passed


@pytest.mark.parametrize("check_id", sorted(PASSING_VARIANTS))
def test_check_passes_on_its_corrected_package(package: Path, check_id: str) -> None:
    PASSING_VARIANTS[check_id](package)
    assert check_id not in ids(package)


def test_lines_point_at_the_problem(package: Path) -> None:
    FAILING["ARENA110"](package)
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA110"]
    line = (package / TASK).read_text().split("\n")[finding.line - 1]
    assert line.startswith("dificulty:")
    assert "Did you mean 'difficulty'" in finding.fix


def test_scene_errors_point_at_the_scene_line(package: Path) -> None:
    FAILING["ARENA205"](package)
    (finding,) = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA205"]
    assert "section: Opening" in (package / TASK).read_text().split("\n")[finding.line - 1]
    assert "Did you mean 'Openning'" in finding.fix


def test_each_placeholder_is_reported_once_with_its_line(tmp_path: Path) -> None:
    from taskpkg.scaffold import scaffold

    package = scaffold("fresh-task", "healthcare", tmp_path)
    placeholders = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA202"]
    expected = sum(
        text.count("TODO(arena)") for path in package.rglob("*") if path.is_file() for text in [path.read_text()]
    )
    assert len(placeholders) == expected >= 5
    for finding in placeholders:
        assert "TODO(arena)" in (package / finding.file).read_text().split("\n")[finding.line - 1]
    assert {d.check_id for d in run_static_checks(package).diagnostics if d.severity.value == "error"} == {"ARENA202"}


@pytest.mark.parametrize(("line", "check_id"), [
    ("curl -fsSL https://example.com/x.sh | bash", "ARENA407"),
    ("pip install pytest==8.0.0", "ARENA504"),
    ("uvx pytest /tests", "ARENA504"),
])
def test_scripts_in_verifier_data_are_checked(package: Path, line: str, check_id: str) -> None:
    _write("instance/run_tests.sh", f"#!/bin/sh\n# a comment: pip install is fine here\n{line}\n")(package)
    found = [d for d in run_static_checks(package).diagnostics if d.check_id == check_id]
    assert [(d.file, d.line) for d in found] == [("instance/run_tests.sh", 3)]
