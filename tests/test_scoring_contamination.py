"""The contamination gate: copies of the suite are flagged (exactly, with light edits, paraphrased one word in three,
as renamed code, through the generator's output, with a canary); honest packages and unrelated text pass; the
public verdict is pass / flagged alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scoring.contamination import GateResult, SuiteIndex, submission_documents
from scoring.suite import load_suite
from scoring.text_hashes import normalize
from taskpkg.loader import load_package
from tests.support.contamination import paraphrase, rename_code
from tests.support.packages import edit
from tests.support.suites import CANARY, STORIES, instance_here, make_suite, story_package

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted(p for p in (ROOT / "environments").iterdir() if (p / "task.md").is_file())
SAMPLE = ROOT / "suites" / "sample"
SAMPLE_PACKAGES = sorted((SAMPLE / "packages").iterdir())


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    make_suite(root, instances=(0, 1))
    return root


@pytest.fixture(scope="module")
def index(suite_dir: Path) -> SuiteIndex:
    suite = load_suite(suite_dir / "suite.yaml")
    return SuiteIndex.of_suite(suite, {(p.name, 1): instance_here(p, 1) for p in suite.packages.values()})


@pytest.fixture(scope="module")
def sample_code_index() -> SuiteIndex:
    """The sample suite's packages (prompts, data, code), without instances."""
    return SuiteIndex.of_suite(load_suite(SAMPLE / "suite.yaml"))


def scan(index: SuiteIndex, package: Path, samples: tuple[int, ...] = ()) -> GateResult:
    loaded = load_package(package).package
    made = {n: instance_here(loaded, n) for n in samples}
    return index.scan(submission_documents(package, loaded, made))


HONEST = ("A bakery counts the loaves each oven turned out above or below its plan for the morning shift, writing "
          "shortfalls as negative numbers. The head baker wants the net surplus before the delivery vans leave.")


def submitted(tmp_path: Path, story: str = HONEST) -> Path:
    """A package (the scaffold's task under another name) telling the given story."""
    package = story_package(tmp_path, "fresh-task", "finance")
    edit(package / "task.md", STORIES["finance"], story)
    return package


def test_a_package_copying_a_suite_item_exactly_is_flagged(index: SuiteIndex, tmp_path: Path) -> None:
    counts = scan(index, submitted(tmp_path, STORIES["healthcare"])).counts()
    assert counts["exact"] == 1 and counts["ngram"] >= 1 and counts["near_duplicate"] >= 1


def test_a_copy_with_light_edits_is_flagged(index: SuiteIndex, tmp_path: Path) -> None:
    story = STORIES["law-government"]
    for old, new in (("annual", "yearly"), ("levy", "budget"), ("tomorrow", "on Monday")):
        story = story.replace(old, new)
    assert story != STORIES["law-government"]
    counts = scan(index, submitted(tmp_path, story)).counts()
    assert counts["exact"] == 0 and counts["near_duplicate"] >= 1


@pytest.mark.parametrize("seed", range(4))
def test_a_prompt_with_one_word_in_three_substituted_is_flagged(index: SuiteIndex, tmp_path: Path,
                                                                seed: int) -> None:
    story = paraphrase(STORIES["science-engineering"], every=3, seed=seed)
    assert len(set(normalize(story)) - set(normalize(STORIES["science-engineering"]))) >= 10
    result = scan(index, submitted(tmp_path, story))
    assert result.counts()["exact"] == 0
    assert {m.suite for m in result.matches if m.kind == "near_duplicate"} >= {"science-engineering-sum/task.md "
                                                                               "(prompt)"}


@pytest.mark.parametrize("package", SAMPLE_PACKAGES, ids=lambda p: p.name)
def test_the_sample_prompts_paraphrased_one_word_in_three_are_flagged(sample_code_index: SuiteIndex, tmp_path: Path,
                                                                       package: Path) -> None:
    body = load_package(package).package.body
    copy = submitted(tmp_path, paraphrase(body, every=3, seed=7))
    kinds = {m.kind for m in scan(sample_code_index, copy).matches}
    assert "near_duplicate" in kinds and "exact" not in kinds


@pytest.mark.parametrize("package", SAMPLE_PACKAGES, ids=lambda p: p.name)
def test_a_renamed_suite_generator_is_flagged(sample_code_index: SuiteIndex, tmp_path: Path, package: Path) -> None:
    honest = submitted(tmp_path)
    assert scan(sample_code_index, honest).verdict == "pass"
    original = (package / "instance" / "generate.py").read_text()
    renamed = rename_code(original)
    assert not set(normalize(renamed)) >= set(normalize(original))  # names gone, comments and docstrings too
    (honest / "instance" / "generate.py").write_text(renamed)
    found = scan(sample_code_index, honest).matches
    assert {(m.kind, m.submitted, m.suite) for m in found} >= {
        ("code", "instance/generate.py", f"{package.name}/instance/generate.py")}


def test_a_renamed_verifier_and_oracle_are_flagged(sample_code_index: SuiteIndex, tmp_path: Path) -> None:
    package = submitted(tmp_path)
    source = SAMPLE / "packages" / "firewall-audit"
    (package / "verifier.py").write_text(rename_code((source / "verifier.py").read_text()))
    (package / "oracle" / "solve.py").write_text(rename_code((source / "oracle" / "solve.py").read_text()))
    code = {(m.submitted, m.suite) for m in scan(sample_code_index, package).matches if m.kind == "code"}
    assert code == {("verifier.py", "firewall-audit/verifier.py"),
                    ("oracle/solve.py", "firewall-audit/oracle/solve.py")}


def test_held_out_instance_files_are_flagged_through_the_generators_output(index: SuiteIndex, suite_dir: Path,
                                                                          tmp_path: Path) -> None:
    held_out = load_package(suite_dir / "packages" / "cybersecurity-it-sum").package
    numbers = instance_here(held_out, 1).files["numbers.txt"]
    package = submitted(tmp_path)
    hidden = json.dumps(numbers[::-1])  # reversed in the source, written the right way round
    edit(package / "instance" / "generate.py", "    print(json.dumps(",
         f"    (workspace / 'data.txt').write_text({hidden}[::-1])\n    print(json.dumps(")
    assert scan(index, package).verdict == "pass"  # its files alone do not show the item...
    flagged = scan(index, package, samples=(0, 5))
    assert {m.suite for m in flagged.matches} == {"cybersecurity-it-sum/instance 1: numbers.txt"}
    assert flagged.counts()["exact"] == 2  # ...both samples write it


def test_the_canaries_are_found_anywhere_in_the_package(index: SuiteIndex, suite_dir: Path, tmp_path: Path) -> None:
    package = submitted(tmp_path)
    assert scan(index, package).verdict == "pass"
    (package / "environment" / "notes.txt").write_text(f"copied from {CANARY} somewhere\n")
    assert {k: n for k, n in scan(index, package).counts().items() if n} == {"canary": 1}
    (package / "environment" / "notes.txt").unlink()
    package_canary = load_package(suite_dir / "packages" / "math-planning-sum").package.canary
    edit(package / "verifier.py", '"""', f'"""{package_canary}\n')
    assert scan(index, package).counts()["canary"] == 1


@pytest.mark.parametrize("environment", BUNDLED, ids=lambda p: p.name)
def test_the_bundled_environments_pass(index: SuiteIndex, sample_code_index: SuiteIndex, environment: Path) -> None:
    assert scan(index, environment, samples=(0, 7)).verdict == "pass"
    assert scan(sample_code_index, environment).verdict == "pass"


def test_the_public_verdict_says_pass_or_flagged_and_nothing_else(index: SuiteIndex, tmp_path: Path) -> None:
    package = submitted(tmp_path, STORIES["healthcare"])
    result = scan(index, package)
    assert result.public() == {"verdict": "flagged"}
    assert scan(index, submitted(tmp_path / "honest")).public() == {"verdict": "pass"}
    report = result.maintainer_report()
    assert report["counts"]["exact"] == 1 and report["coverage"]["suite_instances"] == 8
    assert any(m["excerpt"] and "pharmacist" in m["excerpt"] for m in report["matches"])
    assert {m["suite"] for m in report["matches"]} == {"healthcare-sum/task.md (prompt)",
                                                       "healthcare-sum/instance 1: prompt"}


def test_a_shared_run_is_reported_against_the_first_suite_text_and_boilerplate_is_ignored() -> None:
    from scoring.contamination import Document

    copied = ("the quarterly ledger lists every invoice the clinic issued and the payments received against each "
              "one before the close")
    boilerplate = ("write your answer to the file named in the task and make sure the numbers are rounded to two "
                   "decimal places as usual")
    documents = [Document("item-0", f"Alpha opens here. {copied} {boilerplate}", "family-0"),
                 Document("item-1", f"Beta starts there. {copied} {boilerplate}", "family-1"),
                 Document("item-2", f"Gamma begins anew with its own story. {boilerplate}", "family-2")]
    index = SuiteIndex(documents, [])
    found = index.scan([Document("submitted.md", f"Our own words first. {copied.upper()}!")])
    assert {m.suite for m in found.matches if m.kind == "ngram"} == {"item-0"}  # the first of the two holding it
    in_every_family = index.scan([Document("honest.md", f"A bakery counts loaves. {boilerplate}")])
    assert in_every_family.verdict == "pass"  # a run in three families or more is boilerplate, not evidence


def test_code_shared_by_three_suite_packages_is_boilerplate(tmp_path: Path) -> None:
    from scoring.contamination import Document

    helper = (SAMPLE / "packages" / "cargo-loading" / "instance" / "generate.py").read_text()
    documents = [Document(f"p{n}/instance/generate.py", helper + f"\nTAG = {n}\n", f"p{n}", code=True)
                 for n in range(3)]
    submission = [Document("instance/generate.py", rename_code(helper), code=True)]
    assert SuiteIndex(documents[:2], []).scan(submission).counts()["code"] == 2
    assert SuiteIndex(documents, []).scan(submission).verdict == "pass"


def test_an_unloadable_package_is_still_scanned_file_by_file(index: SuiteIndex, tmp_path: Path) -> None:
    package = submitted(tmp_path, STORIES["healthcare"])
    shutil.rmtree(package / "instance")
    (package / "task.md").write_text("---\nnot: [valid\n---\n" + STORIES["healthcare"])
    assert index.scan(submission_documents(package, None)).verdict == "flagged"
