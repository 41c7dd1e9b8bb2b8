"""The gate in the sandbox, end to end: `arena suite index` makes the suite's instances in containers and caches them;
`arena score --contamination-only` reads the cache, makes random samples of the submission in containers, and flags
a generator that writes a held-out item's files or is a renamed copy of a suite generator; an honest package passes;
a package whose instances cannot be made fails the gate rather than pass unseen."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.suite_commands import score_command, suite_group
from scoring.suite import load_suite
from scoring.suite_instances import CACHE_FOLDER, suite_cache
from tests.support.contamination import rename_code
from tests.support.packages import edit, make_valid_package
from tests.support.suites import instance_here
from tests.test_scoring_gate import CARGO, mixed_suite

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def indexed(engine: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    manifest = mixed_suite(tmp_path_factory.mktemp("suite"))
    done = CliRunner().invoke(suite_group, ["index", "--suite", str(manifest)])
    assert done.exit_code == 0, done.output
    assert "8 of 8 instances in" in done.stdout and done.stdout.endswith(f"{CACHE_FOLDER} (8 made now)\n")
    assert "arena: suite instances: 8/8 made" in done.stderr  # progress, a line per tenth off a terminal
    return manifest


def gate(manifest: Path, package: Path, *extra: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(score_command, ["--contamination-only", "--suite", str(manifest), *extra, str(package)])
    return done.exit_code, done.stdout, done.stderr


def test_the_suite_is_indexed_in_the_sandbox_once(indexed: Path) -> None:
    suite = load_suite(indexed)
    cargo = next(p for p in suite.packages.values() if p.name == "cargo-loading")
    assert suite_cache(suite).load(cargo)[3] == instance_here(cargo, 3)  # the sandbox made what the generator makes
    stamps = {p: p.stat().st_mtime_ns for p in (indexed.parent / CACHE_FOLDER).iterdir()}
    again = CliRunner().invoke(suite_group, ["index", "--suite", str(indexed)])
    assert again.exit_code == 0 and "(0 made now)" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in (indexed.parent / CACHE_FOLDER).iterdir()} == stamps


def test_a_generator_writing_held_out_files_is_flagged_through_its_samples(indexed: Path, tmp_path: Path) -> None:
    cargo = instance_here(next(p for p in load_suite(indexed).packages.values() if p.name == "cargo-loading"), 3)
    package = make_valid_package(tmp_path, "fresh-task", "finance")
    hidden = json.dumps(cargo.files["pallets.csv"][::-1])
    edit(package / "instance" / "generate.py", "    print(json.dumps(",
         f"    (workspace / 'stock.csv').write_text({hidden}[::-1])\n    print(json.dumps(")
    assert gate(indexed, package, "--samples", "0")[0] == 0  # its files and code alone show nothing
    report = tmp_path / "report.json"
    code, out, err = gate(indexed, package, "--report", str(report))
    assert code == 1 and out.startswith("contamination gate: flagged") and "made" not in err  # the cache was read
    found = json.loads(report.read_text())
    assert len(found["coverage"]["samples"]) == 3 and found["coverage"]["suite_instances"] == 8
    suites = {m["suite"] for m in found["matches"]}
    assert "cargo-loading/instance 3: pallets.csv" in suites
    # Beside it, only the prompt this package shares with the suite's scaffold-made `<domain>-sum` packages: the
    # samples are drawn at random, and one whose count is such an instance's renders the same prompt, rightly.
    assert all(s.split("/")[0].endswith("-sum") and s.endswith(": prompt")
               for s in suites - {"cargo-loading/instance 3: pallets.csv"}), suites


def test_a_working_renamed_copy_of_a_suite_package_is_flagged(indexed: Path, tmp_path: Path) -> None:
    package = shutil.copytree(CARGO, tmp_path / "truck-packing")
    generator = package / "instance" / "generate.py"
    generator.write_text(rename_code(generator.read_text()))
    task = (package / "task.md").read_text()
    canary = next(line for line in task.splitlines() if line.startswith("canary:"))
    (package / "task.md").write_text(task.replace("name: cargo-loading", "name: truck-packing").replace(
        canary, "canary: 0d7e5c3a-9a49-4c8e-bb1f-3c2f8e61a0d4"))
    report = tmp_path / "report.json"
    assert gate(indexed, package, "--report", str(report))[0] == 1
    kinds = {m["kind"] for m in json.loads(report.read_text())["matches"]}
    assert {"code", "exact"} <= kinds  # the renamed generator, and the instances it makes


def test_an_honest_package_passes_and_one_whose_instances_fail_is_not_passed(indexed: Path, tmp_path: Path) -> None:
    assert gate(indexed, Path(__file__).resolve().parent.parent / "environments" / "shift-scheduling")[0] == 0
    broken = make_valid_package(tmp_path, "fresh-task", "finance")
    edit(broken / "instance" / "generate.py", "    numbers = ", "    raise SystemExit(3)\n    numbers = ")
    code, out, err = gate(indexed, broken)
    assert code == 1 and out == "" and "could not be made in the sandbox" in err and "arena show" in err
