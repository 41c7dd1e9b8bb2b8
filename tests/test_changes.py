"""Which packages a change touches: classify_changes on paths, and changes_between on a real git repository with
hostile file names."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.repo_commands import changed_command
from taskpkg.changes import ChangeSet, GitError, changed_paths, changes_between, classify_changes


# ----- classify_changes --------------------------------------------------------------------------------------------
def test_one_package_and_nothing_else_is_a_single_package() -> None:
    changes = classify_changes(["environments/invoice-matching/task.md",
                                "environments/invoice-matching/environment/Dockerfile"])
    assert changes == ChangeSet(packages=["invoice-matching"], outside=[])
    assert changes.single_package
    assert changes.package_paths == ["environments/invoice-matching"]


def test_a_package_plus_a_readme_change_is_not_a_single_package() -> None:
    changes = classify_changes(["environments/invoice-matching/task.md", "README.md"])
    assert changes.packages == ["invoice-matching"] and changes.outside == ["README.md"]
    assert not changes.single_package


def test_two_packages_are_not_a_single_package_and_come_sorted() -> None:
    changes = classify_changes(["environments/zeta-env/task.md", "environments/alpha-env/verifier.py",
                                "environments/zeta-env/oracle/solve.sh"])
    assert changes.packages == ["alpha-env", "zeta-env"] and not changes.single_package


def test_no_change_is_not_a_single_package() -> None:
    assert classify_changes([]) == ChangeSet([], []) and not ChangeSet().single_package


@pytest.mark.parametrize("path", [
    "environments/README.md",             # a file directly in environments/
    "environments",                       # the folder itself
    "environments/Bad_Name/task.md",      # not a legal package name
    "environments/$(touch pwned)/task.md",
    "environments/a\nb/task.md",
    "environments/ab/task.md",            # too short to be a package name
    "environments/../arena/cli.py",
    "arena/cli.py",
    ".github/workflows/validate.yml",
    "environmentsx/foo-bar/task.md",
])
def test_paths_in_no_legal_package_folder_are_outside(path: str) -> None:
    changes = classify_changes([path])
    assert changes.packages == [] and changes.outside == [path] and not changes.single_package


def test_duplicates_are_listed_once_in_order() -> None:
    changes = classify_changes(["b.txt", "a.txt", "b.txt", "environments/foo-bar/x", "environments/foo-bar/x"])
    assert changes.outside == ["b.txt", "a.txt"] and changes.packages == ["foo-bar"]


def test_json_form() -> None:
    changes = classify_changes(["environments/foo-bar/task.md", "docs/x.md"])
    assert changes.to_dict() == {"packages": ["environments/foo-bar"], "outside": ["docs/x.md"],
                                 "single_package": False}


# ----- changes_between on a real repository ------------------------------------------------------------------------
HOSTILE = [
    "environments/foo-bar/data/with space.csv",
    "environments/foo-bar/data/new\nline.txt",
    "environments/foo-bar/data/$(touch pwned).txt",
    "environments/foo-bar/data/`id`;rm -rf ~.txt",
    "environments/foo-bar/data/-rf",
    "environments/foo-bar/data/caf\u00e9 \u2603.txt",
]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def write(repo: Path, path: str, text: str = "x\n") -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose main branch holds one package and a README."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "commit.gpgsign", "false")
    write(repo, "README.md")
    write(repo, "environments/old-env/task.md")
    write(repo, "environments/old-env/verifier.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def commit(repo: Path, message: str = "change") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def test_hostile_file_names_come_back_exactly_and_name_one_package(repo: Path) -> None:
    for path in HOSTILE:
        write(repo, path)
    head = commit(repo)
    assert sorted(changed_paths("main", head, repo)) == sorted(HOSTILE)
    changes = changes_between("main", head, repo)
    assert changes.packages == ["foo-bar"] and changes.single_package
    assert not (repo / "pwned").exists() and not (Path.cwd() / "pwned").exists()


def test_a_hostile_folder_name_is_outside_never_a_package(repo: Path) -> None:
    write(repo, "environments/$(touch pwned)/task.md")
    write(repo, "environments/x\ny/task.md")
    changes = changes_between("main", commit(repo), repo)
    assert changes.packages == [] and sorted(changes.outside) == sorted(
        ["environments/$(touch pwned)/task.md", "environments/x\ny/task.md"])


def test_a_rename_counts_both_the_old_and_the_new_path(repo: Path) -> None:
    git(repo, "mv", "environments/old-env", "environments/new-env")
    changes = changes_between("main", commit(repo), repo)
    assert changes.packages == ["new-env", "old-env"] and not changes.single_package


def test_a_rename_out_of_a_package_touches_the_package_and_the_outside(repo: Path) -> None:
    git(repo, "mv", "environments/old-env/verifier.py", "verifier.py")
    changes = changes_between("main", commit(repo), repo)
    assert changes.packages == ["old-env"] and changes.outside == ["verifier.py"]


def test_a_deletion_is_a_change_to_its_package(repo: Path) -> None:
    git(repo, "rm", "-q", "environments/old-env/verifier.py")
    changes = changes_between("main", commit(repo), repo)
    assert changes == ChangeSet(packages=["old-env"], outside=[])


def test_a_package_plus_a_readme_change(repo: Path) -> None:
    write(repo, "environments/foo-bar/task.md")
    write(repo, "README.md", "changed\n")
    changes = changes_between("main", commit(repo), repo)
    assert changes.packages == ["foo-bar"] and changes.outside == ["README.md"] and not changes.single_package


def test_changes_on_the_base_branch_since_the_fork_point_do_not_count(repo: Path) -> None:
    write(repo, "environments/foo-bar/task.md")
    head = commit(repo)
    git(repo, "checkout", "-q", "main")
    write(repo, "environments/other-env/task.md")
    write(repo, "README.md", "moved on\n")
    base = commit(repo, "main moves on")
    assert changes_between(base, head, repo) == ChangeSet(packages=["foo-bar"], outside=[])


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "-p", "", "no-such-ref"])
def test_bad_refs_raise_git_error(repo: Path, ref: str) -> None:
    with pytest.raises(GitError):
        changes_between(ref, "HEAD", repo)


def test_not_a_repository_raises_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="failed"):
        changes_between("main", "HEAD", tmp_path)


# ----- arena changed -----------------------------------------------------------------------------------------------
def test_arena_changed_prints_package_folders_one_per_line(repo: Path) -> None:
    write(repo, "environments/foo-bar/task.md")
    write(repo, "environments/zed-env/data/new\nline")
    write(repo, "README.md", "changed\n")
    head = commit(repo)
    result = CliRunner().invoke(changed_command, ["--base", "main", "--head", head, "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    assert result.output == "environments/foo-bar\nenvironments/zed-env\n"


def test_arena_changed_json(repo: Path) -> None:
    write(repo, "environments/foo-bar/task.md")
    write(repo, "README.md", "changed\n")
    commit(repo)
    result = CliRunner().invoke(changed_command, ["--base", "main", "--repo", str(repo), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"packages": ["environments/foo-bar"], "outside": ["README.md"],
                                         "single_package": False, "removed": []}


def test_arena_changed_leaves_out_deleted_packages(repo: Path) -> None:
    write(repo, "environments/gone-env/task.md")
    base = commit(repo)
    subprocess.run(["git", "rm", "-q", "-r", "environments/gone-env"], cwd=repo, check=True)
    write(repo, "environments/kept-env/task.md")
    commit(repo)
    lines = CliRunner().invoke(changed_command, ["--base", base, "--repo", str(repo)])
    assert lines.output == "environments/kept-env\n"
    as_json = json.loads(CliRunner().invoke(changed_command, ["--base", base, "--repo", str(repo), "--format",
                                                              "json"]).output)
    assert as_json["removed"] == ["environments/gone-env"] and as_json["packages"] == ["environments/kept-env"]


def test_arena_changed_with_a_bad_ref_exits_3(repo: Path) -> None:
    result = CliRunner().invoke(changed_command, ["--base", "no-such-ref", "--repo", str(repo)])
    assert result.exit_code == 3 and "no-such-ref" in result.output
