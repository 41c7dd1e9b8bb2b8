"""Messages a contributor can act on, on the real engine: a prompt placeholder the generator does not print is one
finding at task.md's line with a did-you-mean and nothing else; a failed build names the Dockerfile line and shows the
engine's output without terminal codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.sandbox import Sandbox
from taskpkg.loader import load_package
from tests.support.packages import edit, make_valid_package
from validators.dynamic import run_dynamic_checks


@pytest.fixture
def package_dir(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def check(sandbox: Sandbox, package_dir: Path, instances: int = 1, probes: tuple[str, ...] | None = ()):
    package = load_package(package_dir).package
    assert package is not None
    return run_dynamic_checks(package, sandbox, instances=instances, probes=probes).diagnostics


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().split("\n"), 1) if text in line)


def test_an_unprinted_placeholder_is_one_finding_at_its_line(sandbox: Sandbox, package_dir: Path) -> None:
    task = package_dir / "task.md"
    edit(task, "holds {{ instance.count }} integers", "holds {{ instance.cuont }} integers")
    found = check(sandbox, package_dir, instances=2, probes=None)  # every trial, every probe: one root cause
    assert [(d.check_id, d.file, d.line) for d in found] == [("ARENA710", "task.md", line_of(task, "cuont"))]
    assert "instance.cuont" in found[0].message and "it prints: count" in found[0].message
    assert found[0].fix.startswith("Did you mean {{ instance.count }}?")


def test_a_placeholder_with_no_near_key_lists_what_is_printed(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "task.md", "integers, one per line.", "integers, one per line, from {{ instance.ledger }}.")
    (finding,) = check(sandbox, package_dir)
    assert (finding.check_id, finding.file, finding.line) == ("ARENA710", "task.md", line_of(package_dir / "task.md",
                                                                                            "instance.ledger"))
    assert "'ledger'" in finding.message and "it prints: count" in finding.message
    assert finding.fix.startswith("Print 'ledger'")


def test_a_failed_build_names_its_line_and_shows_plain_output(sandbox: Sandbox, package_dir: Path) -> None:
    dockerfile = package_dir / "environment" / "Dockerfile"
    edit(dockerfile, "WORKDIR /workspace",
         "# a comment and a continued line before the failing one\nRUN echo a \\\n    b\n"
         "RUN printf '\\033[1;31mboom: no such package\\033[0m\\n' && exit 7\nWORKDIR /workspace")
    (finding,) = check(sandbox, package_dir)
    assert (finding.check_id, finding.file, finding.line) == ("ARENA701", "environment/Dockerfile",
                                                               line_of(dockerfile, "exit 7"))
    assert f"environment/Dockerfile:{finding.line}" in finding.message
    assert "\nboom: no such package\n" in finding.message and "\x1b" not in finding.message  # the output, uncoloured


def test_a_heredoc_the_engine_cannot_read_says_why(sandbox: Sandbox, package_dir: Path) -> None:
    dockerfile = package_dir / "environment" / "Dockerfile"
    edit(dockerfile, "WORKDIR /workspace", "RUN <<EOF\necho made > /made.txt\nEOF\nWORKDIR /workspace")
    (finding,) = check(sandbox, package_dir)
    assert (finding.check_id, finding.line) == ("ARENA701", line_of(dockerfile, "echo made"))
    assert "does not read heredocs" in finding.message
