"""Dynamic checks on the real engine: the valid package passes them all, and each deliberately broken package is
caught by the right check id."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.scripted import ScriptedAgent
from sandbox import containers
from sandbox.agent_interface import Action, Observation
from sandbox.sandbox import Sandbox
from taskpkg.check_report import PackageReport, Report
from taskpkg.loader import load_package
from taskpkg.rules import RULES, Category, Rule
from tests.support.packages import edit, make_valid_package
from validators.dynamic import DYNAMIC_IDS, run_dynamic_checks
from validators.dynamic.leaks import _layer_folders, scan_image
from validators.dynamic.probes import PROBES


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


@pytest.fixture
def package_dir(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def dynamic(sandbox: Sandbox, package_dir: Path, probes: tuple[str, ...] | None = (), instances: int = 1):
    loaded = load_package(package_dir)
    assert loaded.package is not None, [d.to_dict() for d in loaded.diagnostics]
    return run_dynamic_checks(loaded.package, sandbox, instances=instances, probes=probes)


def ids(result) -> set[str]:
    return {d.check_id for d in result.diagnostics}


def errors(result) -> set[str]:
    return {d.check_id for d in result.diagnostics if d.severity.value == "error"}


def test_valid_package_passes_every_dynamic_check(sandbox: Sandbox, package_dir: Path) -> None:
    for rule in RULES.values():  # every dynamic rule's passing example is this package, unchanged
        if rule.category is Category.DYNAMIC:
            rule.passing.apply(package_dir)
    result = dynamic(sandbox, package_dir, probes=None, instances=2)  # None: every probe
    assert errors(result) == set(), [d.message for d in result.diagnostics]
    assert {t["check_id"] for t in result.trials} >= {"ARENA702", "ARENA703", "ARENA704", "ARENA705", "ARENA707",
                                                      "ARENA713", "ARENA714", "ARENA716"}
    assert all(t["outcome"] in ("ok", "skipped") for t in result.trials), result.trials
    assert len(result.trials) >= 6 * 2  # the cold-check target: at least six times a bare script's trials
    oracle = [t for t in result.trials if t["agent"] == "oracle"]
    assert {t["reward"] for t in oracle} == {1.0} and len({t["instance"] for t in oracle}) == 2


DYNAMIC = [r for r in RULES.values() if r.category is Category.DYNAMIC]
PACKAGE_EXAMPLES = [r for r in DYNAMIC if not r.failing.situation]


@pytest.mark.parametrize("rule", PACKAGE_EXAMPLES, ids=lambda r: r.id)
def test_failing_example_triggers_exactly_its_rule(sandbox: Sandbox, package_dir: Path, rule: Rule) -> None:
    """Each dynamic rule's failing example, from the registry, run for real; its passing example is the valid package
    above (tests/test_rules.py checks that every one of them is)."""
    rule.failing.apply(package_dir)
    result = dynamic(sandbox, package_dir, rule.failing.probes, rule.failing.instances)
    assert ids(result) == {rule.id}, [(d.check_id, d.message) for d in result.diagnostics]
    for finding in result.diagnostics:
        assert finding.severity is rule.severity and finding.file and finding.message and finding.fix


def test_every_dynamic_rule_is_run_here_or_by_its_named_test() -> None:
    situations = {r.id: r.failing.tested_by for r in DYNAMIC if r.failing.situation}
    assert situations == {"ARENA705": "tests/test_dynamic_checks.py::test_network_reaching_container_is_caught"}
    assert {r.id for r in PACKAGE_EXAMPLES} | set(situations) == set(DYNAMIC_IDS)


class _BrokenProbe(ScriptedAgent):
    """A scripted agent of the arena with a bug: it fails on its first step."""

    def act(self, observation: Observation) -> Action:
        raise RuntimeError("a bug in the arena's own agent")


def test_arena_fault_is_not_the_package_fault(sandbox: Sandbox, package_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROBES, "broken", lambda: _BrokenProbe("probe:broken", ["true"], 30))
    result = dynamic(sandbox, package_dir, probes=("broken",))
    assert ids(result) == {"ARENA901"}, [(d.check_id, d.message) for d in result.diagnostics]
    (finding,) = result.diagnostics
    assert "a bug in the arena's own agent" in finding.message and "not your package's" in finding.fix
    assert [t["outcome"] for t in result.trials if t["agent"] == "probe:broken"] == ["error"]
    report = Report("full", [PackageReport(str(package_dir), "sample-task", None, None, 1000, result.diagnostics,
                                           [], 1.0, result.trials)])
    assert not report.passed and report.arena_fault


def test_failing_build_step_is_named(sandbox: Sandbox, package_dir: Path) -> None:
    RULES["ARENA701"].failing.apply(package_dir)
    (finding,) = [d for d in dynamic(sandbox, package_dir).diagnostics if d.check_id == "ARENA701"]
    assert "RUN exit 3" in finding.message


def test_build_timeout_ends_the_build(sandbox: Sandbox, package_dir: Path) -> None:
    # A layer no earlier build made: a timed-out build may finish in the engine later and be cached.
    edit(package_dir / "environment" / "Dockerfile", "WORKDIR /workspace",
         f"RUN sleep 120 && echo {uuid.uuid4().hex}\nWORKDIR /workspace")
    edit(package_dir / "task.md", "build_timeout_s: 600", "build_timeout_s: 4")
    (finding,) = [d for d in dynamic(sandbox, package_dir).diagnostics if d.check_id == "ARENA701"]
    assert "did not finish within limits.build_timeout_s (4 s)" in finding.message


def test_hanging_oracle_ends_at_its_limit(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "oracle" / "solve.py", "total = sum", "import time\ntime.sleep(600)\ntotal = sum")
    edit(package_dir / "task.md", "oracle_timeout_s: 120", "oracle_timeout_s: 3")
    result = dynamic(sandbox, package_dir)
    oracle = [d for d in result.diagnostics if d.check_id == "ARENA702"]
    assert oracle and "did not finish within limits.oracle_timeout_s (3 s)" in oracle[0].message
    assert all(t["duration_s"] < 60 for t in result.trials)
    assert any(t["outcome"] == "timeout" for t in result.trials)


@pytest.mark.parametrize(("written", "reason"), [
    ('{"reward": 1.5}', "outside [0, 1]"),
    ('{"reward": NaN}', "outside [0, 1]"),
    ("not json", "not valid JSON"),
    ('{"reward": 1, "bonus": 2}', "keys other than"),
])
def test_invalid_rewards_are_verifier_errors(sandbox: Sandbox, package_dir: Path, written: str, reason: str) -> None:
    edit(package_dir / "verifier.py", '    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(score()))',
         f'    Path(os.environ["ARENA_OUTPUT"]).write_text({written!r})')
    result = dynamic(sandbox, package_dir)
    messages = [d.message for d in result.diagnostics if d.check_id == "ARENA709"]
    assert messages and all(reason in m for m in messages)
    assert all(t["reward"] is None for t in result.trials)


def test_verifier_that_writes_nothing_is_a_verifier_error(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "verifier.py", '    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(score()))',
         "    score()")
    messages = [d.message for d in dynamic(sandbox, package_dir).diagnostics if d.check_id == "ARENA709"]
    assert messages and "wrote no reward file" in messages[0]


def test_hanging_verifier_ends_at_its_limit(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "verifier.py", "def score() -> dict:", "def score() -> dict:\n    __import__('time').sleep(600)")
    edit(package_dir / "task.md", "verifier_timeout_s: 60", "verifier_timeout_s: 3")
    result = dynamic(sandbox, package_dir)
    messages = [d.message for d in result.diagnostics if d.check_id == "ARENA709"]
    assert messages and "did not finish within limits.verifier_timeout_s" in messages[0]
    assert all(t["duration_s"] < 60 for t in result.trials)


def test_missing_prompt_value_is_a_setup_error(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "task.md", "holds {{ instance.count }} integers", "holds {{ instance.total }} integers")
    messages = [d.message for d in dynamic(sandbox, package_dir).diagnostics if d.check_id == "ARENA710"]
    assert messages and "instance.total" in messages[0]


def test_network_reaching_container_is_caught(sandbox: Sandbox, package_dir: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Give the containers a network on purpose: the egress probe must notice."""
    monkeypatch.setattr(containers, "NETWORK_MODE", "bridge")
    result = dynamic(sandbox, package_dir, probes=("reach-network",))
    (finding,) = [d for d in result.diagnostics if d.check_id == "ARENA705"]
    assert "eth0" in finding.message and "sandbox failure" in finding.fix


def test_leak_scan_reads_layers_in_place_and_from_the_saved_image_alike(sandbox: Sandbox, package_dir: Path) -> None:
    RULES["ARENA706"].failing.apply(package_dir)
    package = load_package(package_dir).package
    assert package is not None
    tag = sandbox.image(package).tag
    if os.geteuid() == 0 and sandbox.client.info()["Driver"] == "overlay2":
        assert _layer_folders(sandbox.client, tag) is not None  # the fast path is the one taken here
    in_place = scan_image(sandbox.client, tag, package)
    saved = scan_image(sandbox.client, tag, package, read_storage=False)
    assert [d.message for d in in_place] == [d.message for d in saved]
    (finding,) = saved
    assert "/opt/solve_copy.py" in finding.message and finding.file == "oracle/solve.py"


def test_setup_error_reaches_every_trial_of_its_instance(sandbox: Sandbox, package_dir: Path) -> None:
    RULES["ARENA710"].failing.apply(package_dir)
    result = dynamic(sandbox, package_dir, probes=("wipe-workspace",))
    assert {t["agent"] for t in result.trials} == {"oracle", "nop", "probe:wipe-workspace"}
    assert {t["outcome"] for t in result.trials} == {"error"}
    assert all("exited with status 4" in t["log"] for t in result.trials)
    assert [d.check_id for d in result.diagnostics] == ["ARENA710"]  # one finding, not one per trial


def test_image_without_python_is_a_setup_error_not_a_crash(sandbox: Sandbox, package_dir: Path) -> None:
    dockerfile = package_dir / "environment" / "Dockerfile"
    dockerfile.write_text("\n".join(line for line in dockerfile.read_text().splitlines() if "python3" not in line))
    result = dynamic(sandbox, package_dir, probes=("wipe-workspace",))
    setup = [d.message for d in result.diagnostics if d.check_id == "ARENA710"]
    assert setup and "python3" in setup[0] and "the image must provide python3" in setup[0]
    assert {t["outcome"] for t in result.trials} == {"error"}
