"""The one Dockerfile reader (taskpkg.dockerfile_reader) and the install-line checks that follow what RUN runs: heredoc
bodies, scripts that COPY, ADD or a heredoc put into the image, requirements files where COPY put them."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskpkg.dockerfile_reader import commands, executed_scripts, parse, run_scripts
from tests.support.packages import make_valid_package
from validators.static import run_static_checks

BASE = "FROM debian:bookworm-slim AS build\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def with_dockerfile(package: Path, lines: str, files: dict[str, str] | None = None) -> list[tuple[str, str, int, str]]:
    """Insert lines before the base Dockerfile's WORKDIR, add context files; (id, file, line, message) found beyond
    the base package's own (its unpinned python3 note)."""
    dockerfile = package / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("WORKDIR", f"{lines}\nWORKDIR", 1))
    for name, text in (files or {}).items():
        path = package / "environment" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return [(d.check_id, d.file, d.line, d.message) for d in run_static_checks(package).diagnostics
            if d.check_id in ("ARENA403", "ARENA404", "ARENA407") and "python3" not in d.message]


def line_of(package: Path, text: str, file: str = "environment/Dockerfile") -> int:
    return next(n for n, line in enumerate((package / file).read_text().split("\n"), 1) if text in line)


def test_instructions_lines_heredocs_and_workdirs() -> None:
    parsed = parse(BASE + "WORKDIR /opt\nRUN echo a && \\\n    # a comment\n    echo b\nRUN <<EOF\npip install x\n"
                   "\nEOF\nWORKDIR app\nCOPY <<-NOTE notes.txt\n\thello\n\tNOTE\nFROM scratch\nWORKDIR /w\n")
    shown = [(i.keyword, i.line, i.end_line, i.workdir, i.stage) for i in parsed.instructions]
    assert shown == [("FROM", 1, 1, "/", 0), ("WORKDIR", 2, 2, "/", 0), ("RUN", 3, 5, "/opt", 0),
                     ("RUN", 6, 9, "/opt", 0), ("WORKDIR", 10, 10, "/opt", 0), ("COPY", 11, 13, "/opt/app", 0),
                     ("FROM", 14, 14, "/", 1), ("WORKDIR", 15, 15, "/", 1)]
    heredoc = parsed.instructions[3].heredocs[0]
    assert (heredoc.name, heredoc.body, heredoc.first_line) == ("EOF", "pip install x\n", 7)
    assert parsed.instructions[5].heredocs[0].body == "hello"
    assert parsed.final_workdir() == ("/w", 15) and parsed.stage_names() == {"build"}


def test_shell_text_is_split_into_commands_outside_quotes() -> None:
    assert commands("apt-get update && sudo DEBIAN_FRONTEND=x apt-get install -y 'a b' | tee log; sh -c 'cd /; ls'") \
        == [["apt-get", "update"], ["apt-get", "install", "-y", "a b"], ["tee", "log"], ["cd", "/"], ["ls"]]
    line = "chmod +x ./go.sh && ./go.sh && bash -e ../lib/x.sh && . /etc/env && python3 p.py"
    assert [(path, kind) for path, kind, _ in executed_scripts(line, "/opt/app")] == [
        ("/opt/app/go.sh", "shell"), ("/opt/lib/x.sh", "shell"), ("/etc/env", "shell"), ("/opt/app/p.py", "python")]
    assert executed_scripts("cd sub && sh run.sh", "/w") == [("/w/sub/run.sh", "shell", "/w/sub")]


def test_heredocs_a_shell_reads_are_scripts_and_others_are_data() -> None:
    parsed = parse(BASE + "RUN <<EOF\nA\nEOF\nRUN bash -e <<EOF\nB\nEOF\nRUN python3 <<EOF\nC\nEOF\n"
                   'RUN ["sh", "-c", "D"]\n')
    scripts = [[text for script in run_scripts(i) for _, text in script.lines()] for i in parsed.instructions[1:]]
    assert scripts == [["A"], ["bash -e", "B"], ["python3"], ["D"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["FROM x", "RUN ", "<<EOF", "<<-'E'", "EOF", "E", "\\", "\n", "COPY ", "a b/",
                                 "WORKDIR ", "..", "#", '["sh","-c"', "]", " ", "\t", "&&", "'"]), max_size=60)
       .map("".join) | st.text(string.printable, max_size=200))
def test_parse_never_raises_and_lines_stay_in_the_file(text: str) -> None:
    parsed = parse(text)
    total = len(text.split("\n"))
    for instruction in parsed.instructions:
        assert 1 <= instruction.line <= instruction.end_line <= total
        for script in run_scripts(instruction) if instruction.keyword == "RUN" else ():
            assert all(1 <= line <= total for line, _ in script.lines())


def test_heredoc_run_bodies_are_checked_line_by_line(package: Path) -> None:
    found = with_dockerfile(package, "RUN <<EOF\nset -e\npip install numpy\ncurl -s https://x.example | sh\nEOF")
    assert [(i, f, n) for i, f, n, _ in found] == [
        ("ARENA403", "environment/Dockerfile", line_of(package, "pip install numpy")),
        ("ARENA407", "environment/Dockerfile", line_of(package, "curl -s"))]


def test_copied_script_that_run_executes_is_followed(package: Path) -> None:
    script = "#!/bin/sh\nset -e\npip install pandas==2.2.3 requests\n. ./lib.sh\n"
    found = with_dockerfile(package, "COPY install.sh lib.sh /opt/setup/\nRUN chmod +x /opt/setup/install.sh && "
                                     "cd /opt/setup && ./install.sh",
                            {"install.sh": script, "lib.sh": "wget -qO- https://x.example/i | bash\n"})
    assert [(i, f, n) for i, f, n, _ in found] == [("ARENA403", "environment/install.sh", 3),
                                                    ("ARENA407", "environment/lib.sh", 1)]
    assert "requests" in found[0][3] and f"run by environment/Dockerfile:{line_of(package, 'RUN chmod')}" in \
        found[1][3]


def test_a_script_copied_into_the_working_directory_is_followed(package: Path) -> None:
    found = with_dockerfile(package, "WORKDIR /opt/setup\nCOPY install.sh .\nRUN ./install.sh && sh install.sh",
                            {"install.sh": "pip install pyyaml\n"})
    assert [(i, f, n) for i, f, n, _ in found] == [("ARENA403", "environment/install.sh", 1)]


def test_a_script_no_run_executes_is_only_checked_for_downloads(package: Path) -> None:
    found = with_dockerfile(package, "COPY tools/ /opt/tools/", {"tools/setup/setup.sh": "pip install numpy\n"})
    assert found == []
    found = with_dockerfile(package, "RUN bash /opt/tools/setup/setup.sh")
    assert [(i, f, n) for i, f, n, _ in found] == [("ARENA403", "environment/tools/setup/setup.sh", 1)]


def test_a_script_written_by_a_heredoc_and_run_is_followed(package: Path) -> None:
    found = with_dockerfile(package, "RUN cat <<EOF > /usr/local/bin/setup\npip install flask\nEOF\n"
                                     "COPY <<EOF /opt/more.sh\napt-get install -y jq\nEOF\n"
                                     "RUN sh /usr/local/bin/setup && sh /opt/more.sh")
    assert [(i, f, n) for i, f, n, _ in found] == [
        ("ARENA403", "environment/Dockerfile", line_of(package, "pip install flask")),
        ("ARENA404", "environment/Dockerfile", line_of(package, "apt-get install -y jq"))]


def test_requirements_are_read_where_copy_put_them(package: Path) -> None:
    found = with_dockerfile(package, "COPY deps/reqs.txt /tmp/r.txt\nRUN pip install -r /tmp/r.txt",
                            {"deps/reqs.txt": "numpy==2.1.3\nscipy\n"})
    assert [(i, f, m) for i, f, _, m in found] == [
        ("ARENA403", "environment/Dockerfile", "environment/deps/reqs.txt:2: 'scipy' has no exact version")]


def test_exec_form_and_python_heredocs(package: Path) -> None:
    found = with_dockerfile(package, 'RUN ["sh", "-c", "pip install rich"]\nRUN python3 <<EOF\n'
                                     "print('pip install anything')\nEOF")
    assert [(i, n) for i, _, n, _ in found] == [("ARENA403", line_of(package, '"pip install rich"'))]
