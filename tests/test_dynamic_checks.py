"""Dynamic checks on the real engine: the valid package passes them all, and each deliberately broken package is
caught by the right check id."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox import containers
from sandbox.episode import Sandbox
from taskpkg.loader import load_package
from tests.support.packages import edit, make_valid_package
from validators.dynamic import DYNAMIC_IDS, run_dynamic_checks
from validators.dynamic.leaks import _layer_folders, scan_image


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:  # type: ignore[arg-type]
        yield box


@pytest.fixture
def package_dir(tmp_path: Path) -> Path:
    return make_valid_package(tmp_path / "environments")


def dynamic(sandbox: Sandbox, package_dir: Path, probes: tuple[str, ...] = (), instances: int = 1):
    loaded = load_package(package_dir)
    assert loaded.package is not None, [d.to_dict() for d in loaded.diagnostics]
    return run_dynamic_checks(loaded.package, sandbox, instances=instances, probes=probes)


def ids(result) -> set[str]:
    return {d.check_id for d in result.diagnostics}


def errors(result) -> set[str]:
    return {d.check_id for d in result.diagnostics if d.severity.value == "error"}


def test_valid_package_passes_every_dynamic_check(sandbox: Sandbox, package_dir: Path) -> None:
    result = dynamic(sandbox, package_dir, probes=None, instances=2)  # type: ignore[arg-type]
    assert errors(result) == set(), [d.message for d in result.diagnostics]
    assert {t["check_id"] for t in result.trials} >= {"ARENA702", "ARENA703", "ARENA704", "ARENA705", "ARENA707"}
    assert all(t["outcome"] == "ok" for t in result.trials), result.trials
    assert len(result.trials) >= 6 * 2  # the cold-check target: at least six times a bare script's trials
    oracle = [t for t in result.trials if t["agent"] == "oracle"]
    assert {t["reward"] for t in oracle} == {1.0} and len({t["instance"] for t in oracle}) == 2


def _python(path: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda p: edit(p / path, old, new)


def _task(old: str, new: str) -> Callable[[Path], None]:
    return lambda p: edit(p / "task.md", old, new)


def _both(*mutations: Callable[[Path], None]) -> Callable[[Path], None]:
    def apply(package: Path) -> None:
        for mutation in mutations:
            mutation(package)
    return apply


def _leak(package: Path) -> None:
    (package / "environment" / "solve_copy.py").write_bytes((package / "oracle" / "solve.py").read_bytes())
    edit(package / "environment" / "Dockerfile", "WORKDIR /workspace", "COPY solve_copy.py /opt/\nWORKDIR /workspace")


BROKEN: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "ARENA701": (_python("environment/Dockerfile", "WORKDIR /workspace", "RUN exit 3\nWORKDIR /workspace"), ()),
    "ARENA702": (_python("oracle/solve.py", 'f"{total}\\n"', 'f"{total + 1}\\n"'), ()),
    "ARENA703": (_python("verifier.py", '"answer.txt is missing"}}', '"answer.txt is missing"}, "reward": 1.0}'), ()),
    "ARENA704": (_python("verifier.py", '{"reason": "correct"}', '{"reason": "correct", "nonce": __import__("os")'
                         '.urandom(4).hex()}'), ()),
    "ARENA706": (_leak, ()),
    "ARENA707": (_python("verifier.py", "    if not answer.is_file():",
                         '    if Path("/tmp/reward.json").exists():\n'
                         '        return {"reward": 1.0, "details": {"reason": "trusted a report"}}\n'
                         "    if not answer.is_file():"), ("forge-reward",)),
    "ARENA708": (_both(_python("oracle/solve.py", "total = sum", "import time\ntime.sleep(2.2)\ntotal = sum"),
                       _task("oracle_timeout_s: 120", "oracle_timeout_s: 4")), ()),
    "ARENA709": (_python("verifier.py", "    if text != str(expected):",
                         "    int(text)\n    if text != str(expected):"), ("junk-mentioned-files",)),
    "ARENA710": (_python("instance/generate.py", "    numbers = build_instance", "    raise SystemExit(4)\n"
                         "    numbers = build_instance"), ()),
}


@pytest.mark.parametrize("check_id", sorted(BROKEN))
def test_broken_package_is_caught_by_its_check(sandbox: Sandbox, package_dir: Path, check_id: str) -> None:
    mutation, probes = BROKEN[check_id]
    mutation(package_dir)
    result = dynamic(sandbox, package_dir, probes)
    assert check_id in ids(result), [(d.check_id, d.message) for d in result.diagnostics]
    finding = next(d for d in result.diagnostics if d.check_id == check_id)
    assert finding.file and finding.message and finding.fix


def test_every_dynamic_check_has_a_broken_package() -> None:
    assert set(BROKEN) | {"ARENA705"} == set(DYNAMIC_IDS) - {"ARENA700"}


def test_failing_build_step_is_named(sandbox: Sandbox, package_dir: Path) -> None:
    BROKEN["ARENA701"][0](package_dir)
    (finding,) = [d for d in dynamic(sandbox, package_dir).diagnostics if d.check_id == "ARENA701"]
    assert "RUN exit 3" in finding.message


def test_build_timeout_ends_the_build(sandbox: Sandbox, package_dir: Path) -> None:
    edit(package_dir / "environment" / "Dockerfile", "WORKDIR /workspace", "RUN sleep 120\nWORKDIR /workspace")
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
    assert "eth0" in finding.message


def test_leak_scan_reads_layers_in_place_and_from_the_saved_image_alike(sandbox: Sandbox, package_dir: Path) -> None:
    _leak(package_dir)
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
    BROKEN["ARENA710"][0](package_dir)
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
