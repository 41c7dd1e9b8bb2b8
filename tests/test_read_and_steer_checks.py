"""What the agent can read (ARENA711) and what it can write that steers the verifier (ARENA712, with its static
companion ARENA506): each broken package under tests/fixtures/broken/ is caught by its own check and no other, on a
real engine; every package the repository holds passes both probes."""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from sandbox.sandbox import Sandbox
from taskpkg.loader import load_package
from tests.support.packages import make_valid_package
from validators.dynamic import READ_PROBE, STEER_PROBE, run_dynamic_checks
from validators.dynamic.readable import fingerprints, named_paths
from validators.dynamic.steering import names_used
from validators.dynamic.verifier_trace import AGENT_UID, agent_can_change
from validators.static import run_static_checks
from validators.static.verifier_workspace import check_workspace_code

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "fixtures" / "broken"
# Each broken package and the checks that catch it: its own (ARENA506 is ARENA712's static companion).
CAUGHT_BY = {
    "arena711-answer-key-in-home": {"ARENA711"},
    "arena711-generator-copies-itself": {"ARENA711"},
    "arena712-imports-agent-folder": {"ARENA712"},
    "arena712-runs-workspace-script": {"ARENA506", "ARENA712", "ARENA713"},  # the script also trusts the inputs
    "arena712-path-folder-for-agent": {"ARENA712"},
}
HELD = sorted([*ROOT.glob("environments/*/task.md"), *ROOT.glob("suites/sample/packages/*/task.md"),
               ROOT / "tests/fixtures/training/echo-word/task.md"])  # flat-reward's oracle fails on purpose


@pytest.fixture(scope="module")
def sandbox(engine: docker.DockerClient) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


def static_ids(package: Path) -> set[str]:
    report = run_static_checks(package)
    return {d.check_id for d in report.diagnostics if d.severity.value in ("error", "warning")}


def test_every_broken_package_is_listed() -> None:
    mine = [p.name for p in BROKEN.iterdir() if p.is_dir() and p.name.startswith(("arena711-", "arena712-"))]
    assert sorted(mine) == sorted(CAUGHT_BY)


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_broken_package_is_caught_by_its_check_only(sandbox: Sandbox, tmp_path: Path, name: str) -> None:
    """Every static and dynamic check (every probe, three instances), as `arena check` runs them."""
    package = shutil.copytree(BROKEN / name, tmp_path / name)
    loaded = load_package(package)
    assert loaded.package is not None
    result = run_dynamic_checks(loaded.package, sandbox, instances=3, probes=None)
    found = static_ids(package) | {d.check_id for d in result.diagnostics}
    assert found == CAUGHT_BY[name], [(d.check_id, d.message) for d in result.diagnostics]
    for finding in result.diagnostics:
        assert finding.file and finding.message and finding.fix
    instances = {t["instance"] for t in result.trials if t["agent"] in ("probe:read-answers", "probe:steer-verifier")}
    assert len(instances) == 3  # the probes run on three distinct instances, not only the first


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.parametrize("task", HELD, ids=lambda p: p.parent.name)
def test_packages_the_repository_holds_pass_both_probes(sandbox: Sandbox, task: Path) -> None:
    """A false positive is as bad as a missed hack: the bundled environments, the sample suite's packages and the
    training fixture pass the reading and steering probes on three instances (the interop fixtures, imported, in
    tests/test_interop_engine.py's way, were run by hand: see the closing note of issue 21)."""
    loaded = load_package(task.parent)
    assert loaded.package is not None
    result = run_dynamic_checks(loaded.package, sandbox, instances=3, probes=(READ_PROBE, STEER_PROBE))
    assert [(d.check_id, d.message) for d in result.diagnostics] == []
    probes = [t for t in result.trials if t["check_id"] in ("ARENA711", "ARENA712")]
    assert len(probes) == 6 and all(t["outcome"] == "ok" for t in probes), probes


def test_static_companion_follows_assignments_but_not_data_reads() -> None:
    runs = ast.parse('import os, subprocess\nw = os.environ.get("ARENA_WORKSPACE", "/workspace")\n'
                     'script = os.path.join(w, "check.sh")\nsubprocess.run(["sh", script])\n')
    (finding,) = check_workspace_code(runs)
    assert finding.check_id == "ARENA506" and finding.line == 4 and "run()" in finding.message
    reads = ast.parse('import json, subprocess\nanswer = open("/workspace/answer.json").read()\n'
                      'subprocess.run(["sort"], input=answer, cwd="/workspace")\n')
    assert check_workspace_code(reads) == []  # data passed by keyword, a workspace cwd: not code it runs


def test_steering_probe_knows_what_the_verifier_imports_and_runs() -> None:
    package = load_package(BROKEN / "arena712-imports-agent-folder").package
    assert package is not None
    used = names_used(package)
    assert "/opt/scoring" in used["import_dirs"] and {"rules", "generate", "json"} <= set(used["modules"])
    script = load_package(BROKEN / "arena712-runs-workspace-script").package
    assert script is not None and "sh" in names_used(script)["programs"]


def test_reading_probe_fingerprints_hidden_files_only(tmp_path: Path) -> None:
    package = load_package(make_valid_package(tmp_path)).package
    assert package is not None
    printed = {f["path"] for f in fingerprints(package)}
    assert printed == {"verifier.py", "instance/generate.py", "oracle/solve.py", "oracle/solve.sh"}
    assert named_paths(package) == ["/workspace/answer.txt", "/workspace/numbers.txt"]


@pytest.mark.skipif(os.getuid() == AGENT_UID, reason="the agent user's own files are writable to it by owner")
def test_traced_run_judges_writability_by_the_agent_users_permissions(tmp_path: Path) -> None:
    hidden = tmp_path / "closed-to-others"
    hidden.mkdir()
    hidden.chmod(0o700)
    assert not agent_can_change(str(hidden / "x"))  # a folder it cannot search hides everything below
    root = Path(tempfile.mkdtemp(dir="/tmp"))  # /tmp can be searched by anyone, unlike pytest's own folder
    try:
        _judged_by_mode_bits(root)
    finally:
        shutil.rmtree(root)


def _judged_by_mode_bits(root: Path) -> None:
    root.chmod(0o755)
    shared, closed = root / "shared", root / "closed"
    shared.mkdir()
    closed.mkdir()
    shared.chmod(0o777)
    closed.chmod(0o755)
    (closed / "module.py").write_text("X = 1\n")
    (closed / "module.py").chmod(0o644)
    assert agent_can_change(str(shared)) and agent_can_change(str(shared / "missing" / "deeper"))
    assert not agent_can_change(str(closed)) and not agent_can_change(str(closed / "module.py"))
    assert not agent_can_change(str(closed / "missing.py"))
    (closed / "module.py").chmod(0o666)
    assert agent_can_change(str(closed / "module.py"))  # a file anyone may write


@pytest.mark.engine
@pytest.mark.slow
def test_near_copy_in_the_image_is_shown_with_its_match(sandbox: Sandbox, tmp_path: Path) -> None:
    """Not byte-identical (ARENA706 would see that): re-indented, with a line added."""
    package = make_valid_package(tmp_path)
    text = (package / "verifier.py").read_text()
    (package / "environment" / "check_copy.py").write_text("# kept for reference\n" + text.replace("    ", "  "))
    dockerfile = package / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("WORKDIR /workspace",
                                                         "COPY check_copy.py /opt/tools/\nWORKDIR /workspace"))
    loaded = load_package(package)
    assert loaded.package is not None
    result = run_dynamic_checks(loaded.package, sandbox, instances=1, probes=(READ_PROBE,))
    (finding,) = result.diagnostics
    assert finding.check_id == "ARENA711" and finding.file == "verifier.py"
    assert "/opt/tools/check_copy.py (in the image) is a near-copy of verifier.py" in finding.message
    assert "Score the final state" in finding.message  # the match is shown


@pytest.mark.engine
def test_a_generators_copy_is_made_at_instance_time_whatever_its_modification_time(sandbox: Sandbox,
                                                                                     tmp_path: Path) -> None:
    """Whether a file was made at instance time is read from its change time: a copy the generator backdates to
    before the image (as a whole-second snapshot time can also read) is still its own, not an image file's."""
    name = "arena711-generator-copies-itself"
    package = shutil.copytree(BROKEN / name, tmp_path / name)
    generator = package / "instance" / "generate.py"
    copy_line = '    shutil.copyfile(__file__, workspace / ".generate.py")\n'
    assert copy_line in generator.read_text()
    generator.write_text(generator.read_text().replace(
        copy_line, copy_line + '    os.utime(workspace / ".generate.py", (1_000_000_000, 1_000_000_000))\n'))
    loaded = load_package(package)
    assert loaded.package is not None
    result = run_dynamic_checks(loaded.package, sandbox, instances=1, probes=(READ_PROBE,))
    messages = [d.message for d in result.diagnostics if d.check_id == "ARENA711"]
    assert messages and all("(made at instance time)" in m for m in messages), messages
