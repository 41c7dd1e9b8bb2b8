"""The check registry (validators.registry): every rule is joined to the functions that raise it, a rule with no
check or a check of no rule is refused, a check is registered only for rules its code can raise, and which rules a
report lists as run is read from the registry."""

from __future__ import annotations

import ast
import dataclasses
from functools import cache
from pathlib import Path

import pytest

from taskpkg.diagnostics import Diagnostic
from taskpkg.rules import RULES, Category, ids
from taskpkg.rules.generator import ARENA301
from tests.support.packages import edit, make_valid_package
from tests.support.rule_sites import raise_sites
from tests.test_rules import ROOT, project_sources
from validators import registry as checks
from validators.registry import Check, Needs, check, join, judged, register, registry
from validators.static import run_static_checks


def _no_findings() -> list[Diagnostic]:
    return []


def test_every_rule_has_a_registered_check_that_runs_when_its_category_does() -> None:
    joined = registry()
    assert list(joined) == list(RULES)
    for rule_id, entry in joined.items():
        assert entry.rule is RULES[rule_id] and entry.checks, rule_id
        wanted = {Needs.ENGINE} if entry.rule.category is Category.DYNAMIC else \
            {Needs.FOLDER, Needs.PACKAGE} if entry.rule.category is Category.STATIC else set(Needs)
        assert {c.needs for c in entry.checks} <= wanted, (rule_id, [c.name for c in entry.checks])
    assert joined["ARENA403"].checks[0].name == "validators.static.dockerfile.check_dockerfile"
    assert joined["ARENA113"].checks[0].name == "taskpkg.loader.load_package"


def test_a_rule_with_no_registered_check_is_refused() -> None:
    stray = dataclasses.replace(RULES["ARENA002"], id="ARENA099")
    registry()
    with pytest.raises(ValueError, match="no check is registered for ARENA099"):
        join({**RULES, stray.id: stray}, checks.CHECKS)
    without_lint = [c for c in checks.CHECKS if c.function.__name__ != "lint_packages"]
    with pytest.raises(ValueError, match="no check is registered for ARENA008, ARENA010: decorate"):
        join(RULES, without_lint)


def test_a_check_of_no_rule_or_of_an_unknown_rule_is_refused() -> None:
    before = list(checks.CHECKS)
    with pytest.raises(ValueError, match="_no_findings is registered for no rule"):
        check(needs=Needs.FOLDER)(_no_findings)
    with pytest.raises(ValueError, match="registered for no rule"):
        register(_no_findings, needs=Needs.PACKAGE)
    assert before == checks.CHECKS
    with pytest.raises(ValueError, match="registered for no rule"):
        join(RULES, [*before, Check(_no_findings, (), Needs.FOLDER)])
    copy = dataclasses.replace(RULES["ARENA301"])  # equal, but not the rule the registry holds
    with pytest.raises(ValueError, match=r"registered for ARENA301, which is not the rule taskpkg\.rules holds"):
        join(RULES, [*before, Check(_no_findings, (copy,), Needs.PACKAGE)])


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


@cache
def _imported(path: Path) -> tuple[str, ...]:
    """The modules a source file imports (and, for `from package import name`, the module package.name)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return tuple(found)


@cache
def _reachable(module: str) -> frozenset[Path]:
    """The project's source files a module imports, however indirectly, and its own."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        path = _module_file(todo.pop())
        if path is not None and path not in seen:
            seen.add(path)
            todo += _imported(path)
    return frozenset(seen)


def test_a_check_is_registered_only_for_rules_its_code_raises() -> None:
    """Each rule a check names has a raise site in the check's module or a module it imports."""
    sites = raise_sites(project_sources())
    for rule_id, entry in registry().items():
        for made in entry.checks:
            reachable = _reachable(made.function.__module__)
            assert any(Path(site.file) in reachable for site in sites[rule_id]), \
                f"{made.name} is registered for {rule_id}, which nothing it imports raises"


def test_rules_run_are_read_from_the_registry() -> None:
    registry()
    assert judged({Needs.FOLDER, Needs.PACKAGE}) == frozenset(ids(Category.STATIC))
    assert judged({Needs.ENGINE}) == frozenset(ids(Category.DYNAMIC))  # never ARENA700 or ARENA901
    folder_only = judged({Needs.FOLDER})
    assert {"ARENA003", "ARENA008", "ARENA403", "ARENA501", "ARENA502"} <= folder_only
    assert not {"ARENA113", "ARENA301", "ARENA406", "ARENA602"} & folder_only


def test_a_package_that_does_not_load_lists_the_folders_checks_and_what_was_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = make_valid_package(tmp_path / "environments")
    edit(package / "task.md", "schema_version: 1", "schema_version: 7")
    report = run_static_checks(package)
    assert set(report.checks_run) == judged({Needs.FOLDER}) | {"ARENA120"}
    # A check registered for a folder is listed as run from then on: nothing else decides it.
    monkeypatch.setattr(checks, "CHECKS", [*checks.CHECKS, Check(_no_findings, (ARENA301,), Needs.FOLDER)])
    assert "ARENA301" in run_static_checks(package).checks_run


def test_the_static_runner_calls_every_registered_static_check(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """So a rule listed as run was checked: each check that needs a folder or a package is called on a valid one."""
    import validators.static as runner

    registry()
    static = [made for made in checks.CHECKS if made.needs in (Needs.FOLDER, Needs.PACKAGE)]
    called: set[str] = set()
    for made in static:
        name = made.function.__name__
        assert getattr(runner, name, None) is made.function, f"validators.static never calls {made.name}"

        def spy(*args: object, _made: Check = made, **kwargs: object) -> object:
            called.add(_made.name)
            return _made.function(*args, **kwargs)

        monkeypatch.setattr(runner, name, spy)
    report = run_static_checks(make_valid_package(tmp_path / "environments"))
    assert report.passed and called == {made.name for made in static}
