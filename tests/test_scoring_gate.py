"""The gate as `arena score --contamination-only` runs it: the suite's instances made once and read back from the
suite's gate cache, held-out instance files, a renamed suite generator and a one-in-three paraphrase flagged, honest
packages passing, pass / flagged alone in public. Without an engine here (ARENA_NO_DOCKER=1): the cache is filled by
running the suite's (trusted, test-made) generators on this machine; tests/test_scoring_gate_engine.py does it all
in the sandbox."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from arena.suite_commands import score_command
from scoring.contamination import InstanceText
from scoring.suite import load_suite
from scoring.suite_instances import CACHE_FOLDER, InstanceCache, suite_cache, suite_instances
from taskpkg.package import TaskPackage
from tests.support.contamination import paraphrase, rename_code
from tests.support.packages import edit, make_valid_package
from tests.support.suites import STORIES, instance_here, make_suite

ROOT = Path(__file__).resolve().parent.parent
CARGO = ROOT / "suites" / "sample" / "packages" / "cargo-loading"


def mixed_suite(root: Path) -> Path:
    """Seven scaffolded story packages with one instance each, and the sample's cargo-loading (instance 3) for
    math-planning: a suite with real code and real instance files."""
    manifest = make_suite(root, instances=(0,))
    shutil.copytree(CARGO, root / "packages" / "cargo-loading")
    data = yaml.safe_load(manifest.read_text())
    data["items"] = [i for i in data["items"] if i["domain"] != "math-planning"] + [
        {"package": "packages/cargo-loading", "domain": "math-planning", "cluster": "cargo", "instances": [3]}]
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    return manifest


class Counting:
    """An InstanceMaker for the cache's tests: text made from the package and the instance number at once (what the
    sandbox makes is the engine tests' business), and a count of what it made."""

    def __init__(self) -> None:
        self.made: list[tuple[str, int]] = []

    def __call__(self, package: TaskPackage, instance: int) -> InstanceText:
        self.made.append((package.name, instance))
        return InstanceText(f"{package.body}\n(instance {instance})", {"numbers.txt": f"{instance}\n{package.name}\n"})


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mixed suite whose gate cache holds every instance."""
    manifest = mixed_suite(tmp_path_factory.mktemp("suite"))
    suite = load_suite(manifest)
    assert not suite_instances(suite, instance_here, suite_cache(suite)).missing
    return manifest


def test_instances_are_made_once_then_read_from_the_cache(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "suite", instances=(0, 1)))
    maker = Counting()
    first = suite_instances(suite, maker, suite_cache(suite))
    assert len(first.texts) == 16 == len(maker.made) == first.made and not first.missing
    again = suite_instances(suite, maker, suite_cache(suite))
    assert again.texts == first.texts and again.made == 0 and len(maker.made) == 16
    offline = suite_instances(suite, None, suite_cache(suite))
    assert offline.texts == first.texts and not offline.missing
    edit(tmp_path / "suite" / "packages" / "finance-sum" / "task.md", "wants", "needs")  # a new package version
    changed = load_suite(tmp_path / "suite" / "suite.yaml")
    assert suite_instances(changed, None, suite_cache(changed)).missing.keys() == {("finance-sum", 0),
                                                                                   ("finance-sum", 1)}
    assert suite_instances(changed, maker, suite_cache(changed)).made == 2 and maker.made[-2:] == [
        ("finance-sum", 0), ("finance-sum", 1)]
    assert len(list((tmp_path / "suite" / CACHE_FOLDER).glob("finance-sum-*"))) == 1  # the old version's is gone


def test_a_damaged_cache_is_made_again_and_an_unwritable_one_is_reported(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "suite", instances=(0,)))
    suite_instances(suite, Counting(), suite_cache(suite))
    files = sorted((tmp_path / "suite" / CACHE_FOLDER).glob("*.json.gz"))
    assert len(files) == 8
    files[0].write_bytes(b"not gzip")
    files[1].write_bytes(gzip.compress(b'{"format": 1, "digest": "sha256:other", "instances": {}}'))
    files[2].write_bytes(gzip.compress(b'{"format": 1, "instances": []}'))
    maker = Counting()
    assert suite_instances(suite, maker, suite_cache(suite)).made == 3 == len(maker.made)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would go")
    found = suite_instances(suite, Counting(), InstanceCache(blocked / CACHE_FOLDER))
    assert len(found.texts) == 8 and found.cache_note and "could not be written" in found.cache_note


def test_an_interrupted_run_keeps_what_it_made(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "suite", instances=(0,)))

    def interrupted(package: TaskPackage, instance: int) -> InstanceText:
        if package.name == "science-engineering-sum":
            raise KeyboardInterrupt
        return Counting()(package, instance)

    with pytest.raises(KeyboardInterrupt):
        suite_instances(suite, interrupted, suite_cache(suite), workers=1)
    kept = suite_instances(suite, None, suite_cache(suite))
    assert 0 < len(kept.texts) < 8 and ("science-engineering-sum", 0) in kept.missing


def test_the_sample_suites_gate_cache_is_current() -> None:
    suite = load_suite(ROOT / "suites" / "sample" / "suite.yaml")
    found = suite_instances(suite, None, suite_cache(suite))
    assert not found.missing, ("a sample package changed: run `arena suite index --suite suites/sample` and commit "
                               "suites/sample/gate-cache")
    assert len(list((ROOT / "suites" / "sample" / CACHE_FOLDER).iterdir())) == len(suite.packages)
    cargo = next(p for p in suite.packages.values() if p.name == "cargo-loading")
    assert found.texts[("cargo-loading", 6)] == instance_here(cargo, 6)  # what the generator makes


def gate(manifest: Path, package: Path, *extra: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(score_command, ["--contamination-only", "--suite", str(manifest), *extra, str(package)],
                              env={"ARENA_NO_DOCKER": "1"})
    return done.exit_code, done.stdout, done.stderr


def honest_package(parent: Path) -> Path:
    return make_valid_package(parent, "fresh-task", "finance")


def test_held_out_instance_files_are_flagged(indexed: Path, tmp_path: Path) -> None:
    held_out = (indexed.parent / CACHE_FOLDER)
    cargo = next(InstanceCache(held_out).load(p) for p in load_suite(indexed).packages.values()
                 if p.name == "cargo-loading")
    package = honest_package(tmp_path)
    assert gate(indexed, package)[0] == 0
    (package / "environment" / "pallets.csv").write_text(cargo[3].files["pallets.csv"])
    code, out, _ = gate(indexed, package, "--format", "json")
    assert code == 1 and json.loads(out) == {"verdict": "flagged"}


def test_a_renamed_suite_generator_is_flagged(indexed: Path, tmp_path: Path) -> None:
    package = honest_package(tmp_path)
    (package / "instance" / "generate.py").write_text(rename_code((CARGO / "instance" / "generate.py").read_text()))
    report = tmp_path / "report.json"
    code, out, err = gate(indexed, package, "--report", str(report))
    assert code == 1 and out.startswith("contamination gate: flagged against suite test-suite 1.0.0")
    assert "code" not in out and "cargo" not in out + err  # nothing about what matched, in public
    found = json.loads(report.read_text())
    assert found["counts"]["code"] == 1 and found["coverage"] == {"suite_instances": 8, "suite_items": 8,
                                                                  "samples": []}
    assert ("code", "instance/generate.py", "cargo-loading/instance/generate.py") in [
        (m["kind"], m["submitted"], m["suite"]) for m in found["matches"]]  # (its text tables match instances too)


def test_a_one_in_three_paraphrase_is_flagged(indexed: Path, tmp_path: Path) -> None:
    package = honest_package(tmp_path)
    prompt = (CARGO / "task.md").read_text().split("---\n", 2)[2]
    edit(package / "task.md", "The file `/workspace/numbers.txt` holds", paraphrase(prompt, every=3, seed=1))
    code, out, _ = gate(indexed, package, "--format", "json")
    assert code == 1 and json.loads(out) == {"verdict": "flagged"}


def test_honest_packages_pass_and_a_missing_cache_is_said(indexed: Path, tmp_path: Path) -> None:
    assert gate(indexed, ROOT / "environments" / "refund-desk")[:2] == (0, "contamination gate: pass against suite "
                                                                          "test-suite 1.0.0\n")
    bare = make_suite(tmp_path / "bare", instances=(0,))
    code, out, err = gate(bare, honest_package(tmp_path), "--format", "json")
    assert code == 0 and json.loads(out) == {"verdict": "pass"}
    assert "8 of 8 suite instances are not indexed" in err and "arena suite index" in err
    story = make_valid_package(tmp_path / "copy", "copy-task", "finance")
    edit(story / "task.md", "The file `/workspace/numbers.txt` holds", STORIES["healthcare"])
    assert gate(bare, story)[0] == 1  # prompts, data and code are compared even so
