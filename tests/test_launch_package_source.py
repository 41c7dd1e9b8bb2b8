"""The trained package is the checked package: it is taken out of git with no attribute applied, its digest is the
verdict's or the job refuses to start, and git attributes on a package are an error of the static checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from launch.job_run import JobPaths, JobRun
from launch.package_source import ExtractError, extract
from launch.spec import JobSpec
from taskpkg.digest import package_digest
from validators.static.files import check_files, walk

ROOT = Path(__file__).resolve().parent.parent
ECHO_WORD = ROOT / "tests" / "fixtures" / "training" / "echo-word"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose package carries a `.gitattributes` that `git archive` would obey."""
    repo = tmp_path / "repo"
    shutil.copytree(ECHO_WORD, repo / "environments" / "echo-word")
    (repo / "environments" / "echo-word" / ".gitattributes").write_text(
        "verifier.py export-subst\noracle export-ignore\n")
    verifier = repo / "environments" / "echo-word" / "verifier.py"
    verifier.write_text(verifier.read_text() + "\n# $Format:%s$\n")
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "SECRET commit message")
    return repo


def test_extraction_ignores_the_packages_git_attributes_where_git_archive_obeys_them(repo: Path,
                                                                                    tmp_path: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD")
    folder = extract(repo, commit, "echo-word", tmp_path / "out")
    checked = repo / "environments" / "echo-word"  # the plain checkout CI checked
    assert package_digest(folder) == package_digest(checked)
    assert "$Format:%s$" in (folder / "verifier.py").read_text() and (folder / "oracle").is_dir()
    # What `git archive` makes of the same commit: another package.
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "environments/echo-word"],
                             capture_output=True, check=True).stdout
    (tmp_path / "archived").mkdir()
    subprocess.run(["tar", "-x", "-C", str(tmp_path / "archived")], input=archive, check=True)
    archived = tmp_path / "archived" / "environments" / "echo-word"
    assert "SECRET commit message" in (archived / "verifier.py").read_text() and not (archived / "oracle").exists()
    assert package_digest(archived) != package_digest(checked)


def test_extraction_refuses_what_is_not_a_package_file(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match="no files"):
        extract(repo, git(repo, "rev-parse", "HEAD"), "no-such-package", tmp_path / "out")
    with pytest.raises(ExtractError, match="failed"):
        extract(repo, "0" * 40, "echo-word", tmp_path / "out")


def test_the_job_refuses_to_start_on_a_package_that_is_not_the_checked_one(tmp_path: Path) -> None:
    package = tmp_path / "echo-word"
    shutil.copytree(ECHO_WORD, package)
    spec = JobSpec("echo-word", "0123456789abcdef0123456789abcdef01234567", "cpu-small",
                   package_digest=package_digest(package))
    (package / "verifier.py").write_text((package / "verifier.py").read_text() + "\n# changed after the checks\n")
    said: list[str] = []
    code = JobRun(spec, JobPaths(package, tmp_path / "out", "unused"), said.append, env={}).run()
    assert code == 2
    assert any("is not the one that passed its checks" in line and spec.package_digest in line for line in said)
    assert not any("started" in line for line in said)  # nothing ran
    # The same job with the checked package gets past the check (and fails later, at its gate, on no suite).
    ok = replace(spec, package_digest=package_digest(package))
    said.clear()
    assert JobRun(ok, JobPaths(package, tmp_path / "out-2", str(tmp_path / "no-suite")), said.append, env={}).run() == 1
    assert "arena-job: gate: started (output in logs/gate.log)" in said


def test_git_attributes_on_a_package_are_an_error(repo: Path) -> None:
    package = repo / "environments" / "echo-word"
    found = [d for d in check_files(walk(package)) if d.check_id == "ARENA009"]
    assert [d.file for d in found] == [".gitattributes"]
    git(repo, "rm", "-q", "environments/echo-word/.gitattributes")  # git reads the index where the file is gone
    assert not [d for d in check_files(walk(package)) if d.check_id == "ARENA009"]
    (repo / ".gitattributes").write_text("environments/**/*.py text eol=crlf\n")  # the repository's own
    found = [d for d in check_files(walk(package)) if d.check_id == "ARENA009"]
    assert found and all(d.file.endswith(".py") for d in found)
    assert "gets the git attribute" in found[0].message and "text: set" in found[0].message


def test_the_job_refuses_a_suite_that_is_not_the_one_it_was_given(tmp_path: Path) -> None:
    suite = ROOT / "suites" / "sample"
    digest = subprocess.run([sys.executable, "-m", "arena", "suite", "digest", "--suite", str(suite)],
                            capture_output=True, text=True, check=True).stdout.strip()
    spec = JobSpec("echo-word", "0123456789abcdef0123456789abcdef01234567", "cpu-small",
                   suite_digest="sha256:" + "0" * 64)
    said: list[str] = []
    assert JobRun(spec, JobPaths(ECHO_WORD, tmp_path / "out", str(suite)), said.append, env={}).run() == 2
    assert any(f"its digest is {digest}" in line for line in said) and not any("started" in line for line in said)
    said.clear()
    right = replace(spec, suite_digest=digest)
    run = JobRun(right, JobPaths(ECHO_WORD, tmp_path / "out-2", str(suite / "missing")), said.append, env={})
    assert run.run() in (2, 3)  # a suite that is not there cannot be checked: nothing starts either
    assert not any("started" in line for line in said)
