"""Every bundled environment passes every check: static here, and dynamic on the real engine."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sandbox.sandbox import Sandbox
from taskpkg.diagnostics import Severity
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from validators.dynamic import run_dynamic_checks
from validators.static import run_static_checks

ENVIRONMENTS = Path(__file__).resolve().parent.parent / "environments"
BUNDLED = sorted(p for p in ENVIRONMENTS.iterdir() if (p / "task.md").is_file())


def test_at_least_four_environments_in_four_domains() -> None:
    domains = Counter(load_package(p).package.domain for p in BUNDLED)  # type: ignore[union-attr]  # bundled packages load (tested above)
    assert len(BUNDLED) >= 4 and len(domains) >= 4 and set(domains) <= set(DOMAINS)


@pytest.mark.parametrize("package_dir", BUNDLED, ids=lambda p: p.name)
def test_static_check_passes_without_warnings(package_dir: Path) -> None:
    report = run_static_checks(package_dir)
    assert report.passed and report.count(Severity.WARNING) == 0, [d.to_dict() for d in report.diagnostics]
    assert report.instances and report.instances >= 100


@pytest.mark.parametrize("package_dir", BUNDLED, ids=lambda p: p.name)
def test_dynamic_checks_pass_on_the_real_engine(engine: object, package_dir: Path) -> None:
    package = load_package(package_dir).package
    assert package is not None
    with Sandbox(engine) as sandbox:
        result = run_dynamic_checks(package, sandbox, instances=3)
    assert [d.to_dict() for d in result.diagnostics if d.severity.value != "info"] == []
    assert all(t["outcome"] in ("ok", "skipped") for t in result.trials)
