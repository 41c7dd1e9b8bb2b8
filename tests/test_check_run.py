"""`arena check` as a whole (validators.checking): static checks always, dynamic ones where an engine answers,
skipped with ARENA700 where they cannot run, and the arena's own faults told apart from a package's."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskpkg.check_report import PackageReport, Report
from taskpkg.rules import RULES, Category, ids
from taskpkg.rules.dynamic import ARENA709
from taskpkg.rules.infrastructure import ARENA700, ARENA901
from tests.support.packages import make_valid_package
from validators.checking import check_packages


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def test_full_check_runs_the_dynamic_checks(engine: object, package: Path) -> None:
    report = check_packages([package], "auto", instances=1, show_progress=False, use_cache=False)
    (result,) = report.packages
    assert report.mode == "full" and report.passed, [d.to_dict() for d in result.diagnostics]
    assert "ARENA700" not in {d.check_id for d in result.diagnostics}
    assert set(result.checks_run) >= set(ids(Category.STATIC)) | set(ids(Category.DYNAMIC))
    assert {t["check_id"] for t in result.trials} >= {"ARENA702", "ARENA703", "ARENA704"}


def test_static_errors_skip_the_dynamic_checks(engine: object, package: Path) -> None:
    RULES["ARENA113"].failing.apply(package)
    report = check_packages([package], "auto", instances=1, show_progress=False, use_cache=False)
    (result,) = report.packages
    skipped = [d for d in result.diagnostics if d.check_id == "ARENA700"]
    assert [d.message for d in skipped] == [ARENA700.messages["static_errors"].text]
    assert result.trials == [] and not set(ids(Category.DYNAMIC)) & set(result.checks_run)


def test_static_mode_never_asks_for_an_engine(package: Path) -> None:
    report = check_packages([package], "static", show_progress=False)
    assert report.mode == "static" and report.passed
    assert not {d.check_id for d in report.packages[0].diagnostics} & set(ids(Category.INFRASTRUCTURE))
    with pytest.raises(ValueError, match="mode"):
        check_packages([package], "sometimes")


def _report(*findings: object) -> Report:
    return Report("full", [PackageReport("environments/x", "x", "X", "finance", 100, list(findings), [], 1.0)])


def test_a_run_failed_only_by_the_arena_is_the_arenas_fault() -> None:
    arena = ARENA901.found(None, agent="probe:x", instance=0, error="boom")
    package = ARENA709.found("verifier.py", agent="oracle", instance=0, error="crash")
    skipped = ARENA700.found(".", case="no_engine")
    assert _report(arena).arena_fault and not _report(arena).passed
    assert _report(arena, skipped).arena_fault  # warnings do not change whose fault the errors are
    assert not _report(arena, package).arena_fault  # the package failed a check of its own too
    assert not _report(skipped).arena_fault and _report(skipped).passed
