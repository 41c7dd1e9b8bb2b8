"""The held-out suite: the manifest's rules (each refusal names file and line), opaque ids, its location from
configuration, `arena suite add` and `arena suite check`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from arena.suite_commands import suite_add, suite_check
from scoring.suite import SuiteError, item_id, load_suite, suite_location
from tests.support.packages import edit
from tests.support.suites import CANARY, make_suite, story_package

ROOT = Path(__file__).resolve().parent.parent
FIVE = ("finance", "healthcare", "law-government", "office-documents", "customer-operations")


def test_a_suite_loads_with_counts_and_opaque_ids(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path))
    assert (suite.name, suite.version, suite.canary, suite.public) == ("test-suite", "1.0.0", CANARY, True)
    assert suite.counts() == dict.fromkeys(suite.counts(), 3) and len(suite.counts()) == 8
    ids = [item.id for item in suite.items]
    assert len(set(ids)) == 24 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    first = suite.items[0]
    assert first.id == item_id(CANARY, "finance-sum", 0) != item_id("another canary!!", "finance-sum", 0)
    assert first.cluster == "finance-sum" and first.cluster_id and "finance" not in first.cluster_id
    assert first.line == 21  # the line of its instance in the manifest


def _mutate(manifest: Path, change: callable) -> None:
    data = yaml.safe_load(manifest.read_text())
    change(data)
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def _unbalance(data: dict) -> None:
    data["items"][0]["instances"] = list(range(10))
    data["domains"]["finance"] = 10


def _outside(data: dict) -> None:
    data["items"][1]["package"] = "../elsewhere"


@pytest.mark.parametrize(("change", "marker", "message"), [
    (_unbalance, ("domains:", 0), "finance holds 10 of 31 items (32%), over 20%"),
    (lambda d: d["items"][2].update(domain="cooking"), ("domain: cooking", 0), "is not one of"),
    (lambda d: d["domains"].update(cooking=1), ("domains:", 0), "cooking"),
    (lambda d: d["items"][3].update(package="packages/absent"), ("packages/absent", 0),
     "no package at packages/absent"),
    (_outside, ("../elsewhere", 0), "leaves the suite's folder"),
    (lambda d: d["items"][0].update(domain="healthcare"), ("packages/finance-sum", 0),
     "the entry says domain healthcare but finance-sum is finance"),
    (lambda d: d["items"][0]["instances"].append(1000), ("- 1000", 0), "instance 1000 of finance-sum does not exist"),
    (lambda d: (d["items"][0]["instances"].append(2), d["domains"].update(finance=4)), ("- 2", 1),
     "instance 2 of finance-sum is listed twice (first on line {first})"),
    (lambda d: d["domains"].update(finance=4), ("finance: 4", 0), "domains.finance states 4 items but 3 are listed"),
    (lambda d: d.pop("canary"), None, "'canary' is a required property"),
    (lambda d: d.update(canary="short"), ("canary:", 0), "canary"),
])
def test_a_broken_manifest_is_refused_with_its_file_and_line(tmp_path: Path, change: callable,
                                                              marker: tuple[str, int] | None, message: str) -> None:
    manifest = make_suite(tmp_path)
    _mutate(manifest, change)
    lines = manifest.read_text().splitlines()
    if marker is None:
        where = f"{manifest}: "
    else:
        found = [n for n, text in enumerate(lines, start=1) if marker[0] in text]
        where = f"{manifest}:{found[marker[1]]}: "
        message = message.format(first=found[0])
    with pytest.raises(SuiteError) as caught:
        load_suite(manifest)
    text = str(caught.value)
    assert text.startswith(where) and message in text, text


def test_a_package_that_does_not_load_is_named_with_its_reason(tmp_path: Path) -> None:
    manifest = make_suite(tmp_path, FIVE)
    edit(tmp_path / "packages" / "finance-sum" / "task.md", "difficulty: medium", "difficulty: impossible")
    with pytest.raises(SuiteError, match=r"suite.yaml:\d+: package packages/finance-sum does not load \(ARENA112 "
                                         r"task.md:\d+: difficulty"):
        load_suite(manifest)


def test_yaml_the_strict_reader_refuses_is_an_error_with_its_line(tmp_path: Path) -> None:
    manifest = make_suite(tmp_path, FIVE)
    manifest.write_text(manifest.read_text() + "name: again\n")
    with pytest.raises(SuiteError, match=r"suite.yaml:\d+: duplicate key 'name'"):
        load_suite(manifest)


def test_the_suite_comes_from_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_SUITE", raising=False)
    with pytest.raises(SuiteError, match="no suite given"):
        suite_location(None)
    assert suite_location(str(tmp_path)) == tmp_path / "suite.yaml"
    monkeypatch.setenv("ARENA_SUITE", str(tmp_path / "private.yaml"))
    assert suite_location(None) == tmp_path / "private.yaml"
    assert suite_location(tmp_path / "given.yaml") == tmp_path / "given.yaml"


def test_the_sample_manifest_names_one_package_per_domain() -> None:
    data = yaml.safe_load((ROOT / "suites" / "sample" / "suite.yaml").read_text())
    assert sorted(e["domain"] for e in data["items"]) == sorted(data["domains"]) and len(data["domains"]) == 8
    assert {e["package"] for e in data["items"]} == {f"packages/{n}" for n in (
        "receivables-aging", "lab-result-flags", "permit-eligibility", "expense-consolidation", "ticket-routing",
        "beam-reactions", "firewall-audit", "cargo-loading")}
    if (ROOT / "suites" / "sample" / "packages" / "cargo-loading").is_dir():  # the packages land on their own branch
        suite = load_suite(ROOT / "suites" / "sample" / "suite.yaml")
        assert len(suite.items) == 64 and set(suite.counts().values()) == {8}


# ----- arena suite add / check -----------------------------------------------------------------------------------
def test_suite_add_builds_a_suite_and_keeps_its_counts(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    runner = CliRunner()
    suite_dir = tmp_path / "private"
    outputs = []
    for domain in FIVE:
        package = story_package(sources, f"{domain}-sum", domain)
        done = runner.invoke(suite_add, [str(package), "--suite", str(suite_dir), "--count", "4"])
        assert done.exit_code == 0, done.output
        outputs.append(done.output)
    assert "warning: finance holds 4 of 4 items (100%), over 20%" in outputs[0] and "warning" not in outputs[-1]
    again = runner.invoke(suite_add, [str(sources / "finance-sum"), "--suite", str(suite_dir), "--instances", "0"])
    assert again.exit_code == 0 and "20 items" in again.output  # instance 0 was listed already
    suite = load_suite(suite_dir / "suite.yaml")
    assert suite.counts() == dict.fromkeys(FIVE, 4) and suite.version == "0.6.0" and not suite.public
    assert (suite_dir / "packages" / "finance-sum" / "task.md").is_file()
    assert sorted(i.instance for i in suite.items if i.package == "finance-sum") == [0, 333, 666, 999]
    assert suite.canary.startswith("arena-suite-canary:")
    other = story_package(tmp_path / "other", "finance-sum", "finance")
    edit(other / "task.md", "treasury desk", "trading desk")
    done = runner.invoke(suite_add, [str(other), "--suite", str(suite_dir)])
    assert done.exit_code == 1 and "a different package named finance-sum is already in the suite" in done.output
    assert load_suite(suite_dir / "suite.yaml").version == "0.6.0"  # nothing changed


def test_suite_add_imports_a_benchflow_task(tmp_path: Path) -> None:
    source = ROOT / "tests" / "fixtures" / "interop" / "benchflow" / "dose-check"
    done = CliRunner().invoke(suite_add, [str(source), "--suite", str(tmp_path), "--instances", "0",
                                          "--domain", "healthcare", "--keep-version"])
    assert done.exit_code == 0, done.output
    suite = load_suite(tmp_path / "suite.yaml", check_balance=False)
    assert suite.counts() == {"healthcare": 1} and suite.version == "0.0.0"
    assert (tmp_path / "packages" / suite.items[0].package / "task.md").is_file()


def test_suite_check_static_finds_imbalance_and_duplicates(tmp_path: Path) -> None:
    manifest = make_suite(tmp_path, FIVE)
    shutil.copytree(tmp_path / "packages" / "finance-sum", tmp_path / "packages" / "finance-copy")
    edit(tmp_path / "packages" / "finance-copy" / "task.md", "name: finance-sum", "name: finance-copy")
    _mutate(manifest, lambda d: (d["items"].append({"package": "packages/finance-copy", "domain": "finance",
                                                    "instances": [5]}), d["domains"].update(finance=4)))
    done = CliRunner().invoke(suite_check, ["--suite", str(manifest), "--static"])
    assert done.exit_code == 1
    assert "finance holds 4 of 16 items (25%)" in done.output
    assert "finance-copy duplicates finance-sum" in done.output
    passing = make_suite(tmp_path / "fine", FIVE)
    done = CliRunner().invoke(suite_check, ["--suite", str(passing), "--static"])
    assert done.exit_code == 0 and "15 items" in done.output and "passed" in done.output, done.output


def test_suite_check_runs_every_item_in_the_sandbox(tmp_path: Path, engine: object) -> None:
    manifest = make_suite(tmp_path, FIVE, instances=(0,))
    edit(tmp_path / "packages" / "healthcare-sum" / "oracle" / "solve.py", '"answer.txt"', '"wrong.txt"')
    done = CliRunner().invoke(suite_check, ["--suite", str(manifest), "--workers", "3"])
    assert done.exit_code == 1, done.output
    assert "healthcare-sum instance 0: the oracle scored 0.0, not 1" in done.stdout
    assert done.stdout.count("error: ") == 1 and "1 problem(s)" in done.stdout
    assert done.stderr.count(": ok (") == 4 and "(5/5)" in done.stderr
    assert "healthcare-sum" not in done.stderr  # progress names items by their opaque ids
