"""The contamination gate on real corpora, against the sample suite with every listed instance: the sample packages
pass against the other items, and so do the bundled environments, the interop fixtures, licences and generic
configuration files; paraphrased instances are flagged. (bench/contamination_accuracy.py prints the same figures.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scoring.contamination import Document, InstanceText, SuiteIndex, as_code, submission_documents
from scoring.suite import Suite, load_suite
from scoring.suite_instances import suite_cache, suite_instances
from taskpkg.loader import load_package
from tests.support.contamination import paraphrase, unrelated_texts
from tests.support.suites import instance_here

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "suites" / "sample"
BUNDLED = sorted(p for p in (ROOT / "environments").iterdir() if (p / "task.md").is_file())
INTEROP = sorted(p for kind in ("benchflow", "harbor", "terminal-bench")
                 for p in (ROOT / "tests" / "fixtures" / "interop" / kind).iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def sample_instances() -> tuple[Suite, dict[tuple[str, int], InstanceText]]:
    """The sample suite and its 64 instances, from its gate cache (tests/test_scoring_gate.py checks it is current)."""
    suite = load_suite(SAMPLE / "suite.yaml")
    found = suite_instances(suite, None, suite_cache(suite))
    assert not found.missing and len(found.texts) == len(suite.items) == 64
    return suite, found.texts


@pytest.fixture(scope="module")
def sample_index(sample_instances: tuple[Suite, dict]) -> SuiteIndex:
    return SuiteIndex.of_suite(*sample_instances)


def without(suite: Suite, texts: dict, name: str) -> SuiteIndex:
    """The suite less one package and its items."""
    root = next(p.root for p in suite.packages.values() if p.name == name)
    rest = dataclasses.replace(suite, items=tuple(i for i in suite.items if i.path != root),
                               packages={k: p for k, p in suite.packages.items() if p.name != name})
    return SuiteIndex.of_suite(rest, {key: text for key, text in texts.items() if key[0] != name})


def package_documents(root: Path, samples: tuple[int, ...]) -> list[Document]:
    package = load_package(root).package
    return submission_documents(root, package, {n: instance_here(package, n) for n in samples})


@pytest.mark.parametrize("package", sorted((SAMPLE / "packages").iterdir()), ids=lambda p: p.name)
def test_a_sample_package_passes_against_the_other_items(sample_instances: tuple[Suite, dict],
                                                         package: Path) -> None:
    index = without(*sample_instances, package.name)
    result = index.scan(package_documents(package, (3, 500, 999)))
    assert result.verdict == "pass", result.maintainer_report()["matches"][:3]


@pytest.mark.parametrize("environment", BUNDLED, ids=lambda p: p.name)
def test_a_bundled_environment_passes_against_the_suite_and_its_instances(sample_index: SuiteIndex,
                                                                          environment: Path) -> None:
    result = sample_index.scan(package_documents(environment, (0, 7, 500)))
    assert result.verdict == "pass", result.maintainer_report()["matches"][:3]


@pytest.mark.parametrize("task", INTEROP, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_interop_fixture_passes(sample_index: SuiteIndex, task: Path) -> None:
    assert sample_index.scan(submission_documents(task)).verdict == "pass"


def test_licences_and_generic_configuration_pass(sample_index: SuiteIndex) -> None:
    texts = unrelated_texts()
    assert len(texts) >= 30
    result = sample_index.scan([*texts, *as_code(texts)])
    assert result.verdict == "pass", result.maintainer_report()["matches"][:3]


def test_paraphrased_instances_are_flagged(sample_instances: tuple[Suite, dict], sample_index: SuiteIndex) -> None:
    _, texts = sample_instances
    prompts = {f"{name}/instance {n}: prompt": text.prompt for (name, n), text in texts.items()}
    for source, prompt in sorted(prompts.items())[::4]:
        copy = Document("brief.md", paraphrase(prompt, every=3, seed=len(source)))
        assert source in {m.suite for m in sample_index.scan([copy]).matches if m.kind == "near_duplicate"}
