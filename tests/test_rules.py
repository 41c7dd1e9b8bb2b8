"""The rule registry: every rule is one complete unit, its examples behave as documented when run for real, every
message case is raised somewhere (read from the code's syntax trees), and CONTRIBUTING.md's table is generated from
it. tests/test_rule_registry.py holds each rule to its registered check.

Static rules' examples run here through the real static checker; dynamic rules' examples run on the real engine in
tests/test_dynamic_checks.py; situations (rules no package can show) name the test that makes them, checked below.
"""

from __future__ import annotations

import ast
import os
import string
from pathlib import Path

import pytest

from taskpkg.diagnostics import Severity
from taskpkg.rules import RULES, Category, Rule, ids
from taskpkg.rules.examples import Write, visible
from taskpkg.rules.render import BEGIN, END, explain_markdown, replace_table, suggestions, table_markdown
from tests.support.packages import make_valid_package
from tests.support.rule_sites import raise_sites
from validators.static import run_static_checks

ROOT = Path(__file__).resolve().parent.parent
STATIC = [r for r in RULES.values() if r.category is Category.STATIC]
FAMILY_OF = {Category.STATIC: range(0, 700), Category.DYNAMIC: range(701, 800),
             Category.INFRASTRUCTURE: range(900, 1000)}


def materialise(parent: Path, rule: Rule, which: str) -> Path:
    """The base package with the rule's failing or passing example made in it."""
    root = make_valid_package(parent / which / "environments")
    getattr(rule, which).apply(root)
    return root


@pytest.mark.parametrize("rule", STATIC, ids=lambda r: r.id)
def test_static_examples_behave_as_documented(tmp_path: Path, rule: Rule) -> None:
    failing = run_static_checks(materialise(tmp_path, rule, "failing"))
    passing = run_static_checks(materialise(tmp_path, rule, "passing"))
    failing_ids = {d.check_id for d in failing.diagnostics}
    passing_ids = {d.check_id for d in passing.diagnostics}
    assert rule.id not in passing_ids and passing.passed, [d.to_dict() for d in passing.diagnostics]
    # The failing example triggers exactly this rule: nothing its passing counterpart does not have already.
    assert failing_ids - passing_ids == {rule.id}, [d.to_dict() for d in failing.diagnostics]
    for finding in (d for d in failing.diagnostics if d.check_id == rule.id):
        assert finding.severity is rule.severity
        assert finding.file and finding.message and finding.fix, finding
    assert failing.passed is (rule.severity is not Severity.ERROR)
    assert {"check_id": rule.id, "title": rule.title, "status": "passed"} in passing.check_outcomes()


def test_every_rule_is_complete_and_in_its_family() -> None:
    assert len(RULES) >= 59
    for rule in RULES.values():
        assert int(rule.id[5:]) in FAMILY_OF[rule.category] or rule.id == "ARENA700", rule.id
        assert rule.title and rule.doc.endswith(".") and rule.advice, rule.id
        assert all(m.text and m.fix for m in rule.messages.values()), rule.id
        if rule.category is not Category.INFRASTRUCTURE:
            assert not rule.passing.situation, f"{rule.id}: a package check's passing example is a package"
        if rule.category is Category.STATIC:
            assert not rule.failing.situation, f"{rule.id}: a static rule's failing example runs as a package"


def test_dynamic_passing_examples_are_the_base_package() -> None:
    """So the valid package's full dynamic run (tests/test_dynamic_checks.py) is every one of them, run for real."""
    for rule in RULES.values():
        if rule.category is Category.DYNAMIC:
            assert rule.passing.unchanged, rule.id


def test_static_and_dynamic_are_decided_by_category_alone() -> None:
    from validators.dynamic import DYNAMIC_IDS
    from validators.static import STATIC_IDS

    assert set(STATIC_IDS) == {r.id for r in STATIC}
    assert set(DYNAMIC_IDS) == set(ids(Category.DYNAMIC))
    assert set(ids(Category.INFRASTRUCTURE)) == {"ARENA700", "ARENA901"}


def test_every_template_formats_with_its_fields() -> None:
    for rule in RULES.values():
        for case, message in rule.messages.items():
            fields = {name: 1 for name in message.fields()}
            assert message.text.format(**fields) and message.fix.format(**fields), (rule.id, case)
            assert all(name for _, name, _, _ in string.Formatter().parse(message.text) if name is not None)


def test_found_takes_exactly_the_fields_of_its_case() -> None:
    rule = RULES["ARENA113"]
    finding = rule.found("task.md", 3, name="a", folder="b")
    assert (finding.message, finding.line) == ("name is 'a' but the folder is 'b'", 3)
    with pytest.raises(TypeError, match="takes the fields"):
        rule.found("task.md", name="a")
    with pytest.raises(KeyError, match="no case 'nope'"):
        rule.found("task.md", case="nope", name="a", folder="b")


def project_sources() -> dict[Path, str]:
    """The project's own Python outside tests, the rule registry and packages (never a virtual environment's)."""
    sources = {}
    for folder, children, files in os.walk(ROOT):
        children[:] = [c for c in children if not c.startswith(".") and c not in {"tests", "rules", "environments",
                                                                                  "node_modules", "__pycache__"}]
        for name in files:
            if name.endswith(".py"):
                path = Path(folder) / name
                sources[path] = path.read_text(encoding="utf-8")
    return sources


def _literals(source: str) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_every_rule_and_case_is_raised_somewhere() -> None:
    """No dead rule, no dead template, read from the code's syntax trees (an id in a comment or a string is no raise
    site): each rule has a raise site outside the registry, and each case is given there, or, where a site computes
    its case, is a string of that site's module."""
    sources = project_sources()
    sites = raise_sites(sources)
    for rule in RULES.values():
        assert sites.get(rule.id), f"{rule.id} is raised nowhere (no {rule.id}.found(...) call)"
        given = {site.case for site in sites[rule.id] if site.case is not None}
        computed = set().union(*(_literals(sources[Path(site.file)]) for site in sites[rule.id] if site.case is None))
        never = set(rule.cases) - given - computed
        assert not never, f"{rule.id}: cases never raised: {never}"


def test_a_rule_named_only_in_comments_and_strings_is_raised_nowhere() -> None:
    source = ("from taskpkg.rules.package_files import ARENA002, ARENA004\n"
              "# ARENA003 is raised here\n"
              "NOTE = 'ARENA005.found(path)'\n"
              "def check(rule=ARENA004):\n"
              "    \"\"\"ARENA006.found(...)\"\"\"\n"
              "    return [ARENA002.found('x', path='x', kind='file'), partial(ARENA004.found, case='file')]\n")
    sites = raise_sites({Path("module.py"): source})
    assert {rule_id: [s.case for s in found] for rule_id, found in sites.items()} == {"ARENA002": [""],
                                                                                       "ARENA004": ["file"]}
    violation = ("from taskpkg.rules.rule import RuleViolation\nfrom taskpkg.rules.task_file import ARENA104\n"
                 "class YamlError(RuleViolation): pass\nclass Deeper(YamlError): pass\n"
                 "raise Deeper(ARENA104, 'syntax', 1, None)\nraise YamlError(ARENA104, case, 1, None)\n")
    assert [s.case for s in raise_sites({Path("m.py"): violation})["ARENA104"]] == ["syntax", None]


def _test_function(reference: str) -> ast.FunctionDef:
    file, _, name = reference.partition("::")
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    assert found, f"{reference} does not exist"
    return found[0]


def test_situations_name_tests_that_exist_and_assert_their_rule() -> None:
    for rule in RULES.values():
        if rule.failing.situation:
            function = _test_function(rule.failing.tested_by)
            assert rule.id in ast.unparse(function), f"{rule.failing.tested_by} never names {rule.id}"
        if rule.passing.situation:
            _test_function(rule.passing.tested_by)


def test_table_has_one_row_per_rule() -> None:
    """CONTRIBUTING.md holds this table, kept current by tests/test_workflows.py."""
    rows = table_markdown().splitlines()[2:]
    assert len(rows) == len(RULES)
    for row, rule in zip(rows, RULES.values(), strict=True):
        assert row.startswith(f"| `{rule.id}` | {rule.category.value} | {rule.severity.value} | {rule.title} |")
    assert "`curl ... \\| sh`" in table_markdown()  # a | inside a cell is escaped


def test_replacing_the_table_keeps_the_rest_and_needs_its_markers() -> None:
    stale = f"# Before\n\n{BEGIN}\n| old | table |\n{END}\n\nAfter.\n"
    fresh = replace_table(stale)
    assert fresh.startswith("# Before\n\n") and fresh.endswith(f"{END}\n\nAfter.\n") and "| old |" not in fresh
    assert replace_table(fresh) == fresh
    with pytest.raises(ValueError, match="markers"):
        replace_table("no markers here")


def test_explanations_show_doc_examples_fix_and_messages() -> None:
    for rule in RULES.values():
        text = explain_markdown(rule)
        assert text.startswith(f"# {rule.id}: {rule.title}\n") and rule.doc in text and rule.advice in text
        for example in (rule.failing, rule.passing):
            for change in example.changes:
                assert change.describe()[0] in text
            assert example.tested_by in text
    assert "`oracle/solve.py`" in explain_markdown(RULES["ARENA702"])
    assert "forge-reward" in explain_markdown(RULES["ARENA707"])


def test_examples_show_invisible_bytes() -> None:
    assert visible(b"name: \xff\r\n") == "name: \\xff\\r"
    assert Write("task.md", "\ufeff---\n").describe() == ("task.md", "\\ufeff---")


@pytest.mark.parametrize(("typed", "nearest"), [("ARENA117", "ARENA116"), ("arena7o2", "ARENA702"),
                                                ("ARENA7020", "ARENA702")])
def test_unknown_ids_get_the_nearest_known_one(typed: str, nearest: str) -> None:
    assert suggestions(typed)[0] == nearest
