"""The contamination gate: copies of suite items are flagged (exactly, with light edits, through the generator's
output, with a canary); honest packages pass; the public verdict carries counts only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.suite_commands import score_command
from scoring.contamination import Document, SuiteIndex, submission_documents
from scoring.suite import load_suite
from scoring.text_hashes import normalize
from taskpkg.loader import load_package
from tests.support.packages import edit
from tests.support.suites import CANARY, STORIES, generate_here, make_suite, story_package

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted(p for p in (ROOT / "environments").iterdir() if (p / "task.md").is_file())
SAMPLE = ROOT / "suites" / "sample"


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    make_suite(root)
    return root


@pytest.fixture(scope="module")
def index(suite_dir: Path) -> SuiteIndex:
    return SuiteIndex.of_suite(load_suite(suite_dir / "suite.yaml"))


def scan(index: SuiteIndex, package: Path, **kwargs: object) -> dict:
    loaded = load_package(package).package
    return index.scan(submission_documents(package, loaded, **kwargs)).public()  # type: ignore[arg-type]


HONEST = ("A bakery counts the loaves each oven turned out above or below its plan for the morning shift, writing "
          "shortfalls as negative numbers. The head baker wants the net surplus before the delivery vans leave.")


def submitted(tmp_path: Path, story: str = HONEST) -> Path:
    """A package (the scaffold's task under another name) telling the given story."""
    package = story_package(tmp_path, "fresh-task", "finance")
    edit(package / "task.md", STORIES["finance"], story)
    return package


def test_a_package_copying_a_suite_item_exactly_is_flagged(index: SuiteIndex, tmp_path: Path) -> None:
    result = scan(index, submitted(tmp_path, STORIES["healthcare"]))
    assert result["verdict"] == "flagged"
    assert result["counts"]["exact"] == 1 and result["counts"]["ngram"] >= 1 and result["counts"]["near_duplicate"]


def test_a_copy_with_light_edits_is_flagged(index: SuiteIndex, tmp_path: Path) -> None:
    story = STORIES["law-government"]
    for old, new in (("annual", "yearly"), ("levy", "budget"), ("tomorrow", "on Monday")):
        story = story.replace(old, new)
    assert story != STORIES["law-government"]
    result = scan(index, submitted(tmp_path, story))
    assert result["verdict"] == "flagged" and result["counts"]["exact"] == 0
    assert result["counts"]["near_duplicate"] >= 1  # the prompt alone, and task.md (its frontmatter is scaffold)


def test_the_canaries_are_found_anywhere_in_the_package(index: SuiteIndex, suite_dir: Path, tmp_path: Path) -> None:
    package = submitted(tmp_path)
    assert scan(index, package)["verdict"] == "pass"
    (package / "environment" / "notes.txt").write_text(f"copied from {CANARY} somewhere\n")
    result = scan(index, package)
    assert result == {"verdict": "flagged", "counts": {"exact": 0, "ngram": 0, "near_duplicate": 0, "canary": 1}}
    (package / "environment" / "notes.txt").unlink()
    package_canary = load_package(suite_dir / "packages" / "math-planning-sum").package.canary
    edit(package / "verifier.py", '"""', f'"""{package_canary}\n', )
    assert scan(index, package)["counts"]["canary"] == 1


def test_a_copy_made_by_the_generator_is_flagged_through_its_output(index: SuiteIndex, tmp_path: Path) -> None:
    package = submitted(tmp_path)
    hidden = json.dumps(STORIES["cybersecurity-it"][::-1])  # reversed in the source, written the right way round
    edit(package / "instance" / "generate.py", "    print(json.dumps(",
         f"    (workspace / 'brief.txt').write_text({hidden}[::-1])\n    print(json.dumps(")
    assert scan(index, package)["verdict"] == "pass"  # its files alone do not show the story...
    flagged = scan(index, package, maker=generate_here, samples=[0, 1])
    assert flagged["verdict"] == "flagged" and flagged["counts"]["ngram"] == 2  # ...its two samples copy the item


@pytest.mark.parametrize("environment", BUNDLED, ids=lambda p: p.name)
def test_the_bundled_environments_pass(index: SuiteIndex, environment: Path) -> None:
    assert scan(index, environment, maker=generate_here, samples=[0, 7])["verdict"] == "pass"


def test_the_bundled_environments_pass_against_the_sample_suite() -> None:
    if not (SAMPLE / "packages" / "cargo-loading" / "task.md").is_file():
        pytest.skip("the sample suite's packages are not in this checkout yet (they land from the suite branch)")
    sample = SuiteIndex.of_suite(load_suite(SAMPLE / "suite.yaml"))
    for environment in BUNDLED:
        assert scan(sample, environment)["verdict"] == "pass", environment.name


def test_only_maintainers_see_the_matched_text(index: SuiteIndex, tmp_path: Path) -> None:
    package = submitted(tmp_path, STORIES["healthcare"])
    result = index.scan(submission_documents(package, load_package(package).package))
    story_words = set(normalize(STORIES["healthcare"])) - set(normalize("flagged pass counts verdict exact ngram"))
    assert not story_words & set(normalize(json.dumps(result.public())))
    report = result.maintainer_report()
    assert any(m["excerpt"] and "pharmacist" in m["excerpt"] for m in report["matches"])
    assert {m["suite"] for m in report["matches"]} == {"healthcare-sum/task.md (prompt)"}


def test_arena_score_contamination_only(suite_dir: Path, tmp_path: Path) -> None:
    package = submitted(tmp_path / "pkg", STORIES["finance"])
    report = tmp_path / "maintainers.json"
    done = CliRunner().invoke(score_command, ["--contamination-only", "--suite", str(suite_dir), "--samples", "0",
                                              "--report", str(report), str(package)])
    assert done.exit_code == 1, done.output
    assert "contamination gate: flagged (exact 1," in done.output and "treasury" not in done.output
    assert "treasury" in report.read_text()
    honest = CliRunner().invoke(score_command, ["--contamination-only", "--suite", str(suite_dir), "--samples", "0",
                                                "--format", "json", str(BUNDLED[0])])
    assert honest.exit_code == 0 and json.loads(honest.stdout)["verdict"] == "pass"
    evaluation = CliRunner().invoke(score_command, ["--suite", str(suite_dir), str(package)])
    assert evaluation.exit_code == 2 and "--contamination-only" in evaluation.output


def test_a_shared_run_is_reported_against_the_first_suite_text_and_boilerplate_is_ignored() -> None:
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
