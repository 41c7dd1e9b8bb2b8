"""native -> Harbor -> native: the export is a working Harbor task, and importing it gives the package back exactly."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import pytest

from interop import InteropError, export_harbor, harbor_needed_by, import_task
from taskpkg.loader import load_package
from tests.fixtures.interop.episodes import harbor_episode, native_episode
from tests.fixtures.interop.minibox import Minibox, available
from tests.support.packages import edit, make_valid_package

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "interop"
BUNDLED = sorted(p for p in (ROOT / "environments").glob("*") if load_package(p).package is not None)
needs_minibox = pytest.mark.skipif(available() is not None, reason=f"no minibox here: {available()}")


def tree(folder: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file's bytes and whether it is executable, by relative path (caches skipped)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def multi_scene(parent: Path) -> Path:
    """A valid package with a scripted role and two scenes."""
    package = make_valid_package(parent, "sum-dialogue", "math-planning")
    task = package / "task.md"
    edit(task, "verifier:\n", "roles:\n  - {name: agent, kind: agent}\n  - {name: clerk, kind: scripted}\nscenes:\n"
         "  - {name: ask, role: clerk, section: Request}\n  - {name: remind, role: clerk, section: Reminder}\n"
         "verifier:\n")
    text = task.read_text()
    task.write_text(text.replace("The file `/workspace", "## Request\n\nThe file `/workspace", 1)
                    + "\n## Reminder\n\nWrite only the integer, please ({{ instance.count }} numbers).\n")
    assert load_package(package).ok, load_package(package).diagnostics
    return package


def packages(tmp_path: Path) -> list[Path]:
    made = [make_valid_package(tmp_path / "made", "sum-numbers"), multi_scene(tmp_path / "made")]
    imported = import_task(FIXTURES / "harbor" / "claim-review", tmp_path / "made").package_path
    return [*made, imported, *BUNDLED]


def test_round_trip_preserves_every_file(tmp_path: Path) -> None:
    for package in packages(tmp_path):
        exported = export_harbor(package, tmp_path / "harbor")
        result = import_task(exported, tmp_path / "back")
        assert result.package_path == tmp_path / "back" / package.name
        assert tree(result.package_path) == tree(package), package.name
        assert result.report.lost == result.report.todo == [] and "restored" in result.report.mapped[0]


def test_the_export_reads_as_the_package_says(tmp_path: Path) -> None:
    package = load_package(multi_scene(tmp_path)).package
    assert package is not None
    exported = export_harbor(package.root, tmp_path / "harbor")
    config = tomllib.loads((exported / "task.toml").read_text())
    limits = package.limits
    assert config["task"]["name"] == "arena/sum-dialogue" and config["task"]["description"] == package.title
    assert config["agent"] == {"timeout_sec": limits.agent_timeout_s, "user": 1000}
    assert config["verifier"] == {"timeout_sec": limits.verifier_timeout_s, "user": "root"}
    assert config["environment"] == {"build_timeout_sec": limits.build_timeout_s, "cpus": limits.cpus,
                                     "memory_mb": limits.memory_mb, "storage_mb": limits.storage_mb,
                                     "network_mode": "no-network", "allow_internet": False,
                                     "workdir": "/workspace"}
    assert config["schema_version"] == "1.1", "the oldest task schema that carries everything written"
    text = (exported / "task.toml").read_text()
    assert text.startswith("# Written by `arena export` from the package sum-dialogue. Needs Harbor 0.5.0 or later "
                           "(task schema 1.1, 2 steps).\n")
    assert config["metadata"]["arena"]["harbor"] == "0.5.0" and harbor_needed_by(exported) == "0.5.0"
    assert config["metadata"]["category"] == "math-planning" and config["metadata"]["arena"]["name"] == "sum-dialogue"
    assert [s["name"] for s in config["steps"]] == ["ask", "remind"] and config["multi_step_reward_strategy"] == "final"
    first = (exported / "steps" / "ask" / "instruction.md").read_text()
    assert first.startswith(f"<!-- arena canary GUID {package.canary} -->\n\nThe file `/workspace/numbers.txt` holds ")
    assert "{{" not in first and (exported / "environment" / "arena-instance-0" / "numbers.txt").is_file()
    dockerfile = (exported / "environment" / "Dockerfile").read_text()
    assert "COPY --chown=1000:1000 arena-instance-0/ /workspace/" in dockerfile
    assert (exported / "steps" / "remind" / "solution" / "solve.sh").read_bytes() == \
        (package.root / "oracle" / "solve.sh").read_bytes(), "the oracle runs once, after the last scene"
    assert "exit 0" in (exported / "steps" / "ask" / "solution" / "solve.sh").read_text()


@needs_minibox
@pytest.mark.parametrize("solve", [True, False])
def test_verifier_behaviour_is_the_same_in_all_three(tmp_path: Path, solve: bool) -> None:
    for package in packages(tmp_path):
        exported = export_harbor(package, tmp_path / "harbor")
        back = import_task(exported, tmp_path / "back").package_path
        native = native_episode(Minibox(tmp_path / "n" / package.name), package, solve=solve)
        harbor = harbor_episode(Minibox(tmp_path / "h" / package.name), exported, solve=solve)
        again = native_episode(Minibox(tmp_path / "a" / package.name), back, solve=solve)
        expected = 1.0 if solve else 0.0
        assert (native.reward, harbor.reward, again.reward) == (expected, expected, expected), \
            (package.name, native.output[-500:], harbor.output[-500:])


@needs_minibox
def test_a_verifier_error_is_no_reward_in_harbor(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "broken-verifier")
    (package / "verifier.py").write_text("import os\nraise SystemExit(os.environ['ARENA_OUTPUT'] and 2)\n")
    exported = export_harbor(package, tmp_path / "harbor")
    outcome = harbor_episode(Minibox(tmp_path / "box"), exported)
    assert outcome.reward is None and "arena verifier error: verifier.py exited with status 2" in outcome.output


def test_edits_made_on_the_harbor_side(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    exported = export_harbor(package, tmp_path / "harbor")
    edit(exported / "task.toml", "timeout_sec = 900.0", "timeout_sec = 1200.0")
    edit(exported / "instruction.md", "integers", "whole numbers")
    result = import_task(exported, tmp_path / "back", name="sum-numbers-v2")
    restored = load_package(result.package_path).package
    assert restored is not None and restored.name == "sum-numbers-v2"
    assert restored.limits.agent_timeout_s == 1200 and restored.body == load_package(package).package.body
    assert any("agent_timeout_s set to 1200 (was 900)" in n for n in result.report.mapped)
    assert any(u.startswith("instruction.md: the instructions changed after export") for u in result.report.todo)
    dockerfile = exported / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().split("# >>> arena export")[0])
    with pytest.raises(InteropError, match="environment/Dockerfile: lost the lines `arena export` added"):
        import_task(exported, tmp_path / "again")


def test_an_oracle_entrypoint_other_than_solve_sh(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    (package / "oracle" / "solve.sh").unlink()
    edit(package / "task.md", "entrypoint: solve.sh", "entrypoint: solve.py")
    exported = export_harbor(package, tmp_path / "harbor")
    assert 'exec python3 "$(dirname "$0")/solve.py"' in (exported / "solution" / "solve.sh").read_text()
    assert tree(import_task(exported, tmp_path / "back").package_path) == tree(package)
    (package / "oracle" / "solve.sh").write_text("#!/bin/sh\necho unrelated\n")
    with pytest.raises(InteropError, match=r"oracle/solve\.py: is the entrypoint, but oracle/solve\.sh also exists"):
        export_harbor(package, tmp_path / "again")


def test_export_refuses_broken_packages_and_generators(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    edit(package / "task.md", "memory_mb: 512", "memory_mb: lots")
    with pytest.raises(InteropError, match=r"task\.md:\d+: the package has 1 error\(s\), first: limits\.memory_mb"):
        export_harbor(package, tmp_path / "harbor")
    edit(package / "task.md", "memory_mb: lots", "memory_mb: 512")
    (package / "instance" / "generate.py").write_text("raise RuntimeError('no seed')\n")
    with pytest.raises(InteropError, match=r"instance/generate\.py: failed for instance 0.*RuntimeError: no seed"):
        export_harbor(package, tmp_path / "harbor")
    (package / "instance" / "generate.py").write_text("print('not json')\n")
    with pytest.raises(InteropError, match="did not print one JSON object"):
        export_harbor(package, tmp_path / "harbor")
    assert not (tmp_path / "harbor" / "sum-numbers").exists()


def test_export_of_an_imported_task_needs_no_instance_files(tmp_path: Path) -> None:
    package = import_task(FIXTURES / "harbor" / "invoice-total", tmp_path / "made").package_path
    exported = export_harbor(package, tmp_path / "harbor")
    assert not (exported / "environment" / "arena-instance-0").exists()
    dockerfile = "environment/Dockerfile"
    assert (exported / dockerfile).read_bytes() == (package / dockerfile).read_bytes()
    assert (exported / "tests" / "arena" / "verifier_data" / "test.sh").is_file()
    again = export_harbor(import_task(exported, tmp_path / "back").package_path, tmp_path / "harbor2")
    assert tree(again) == tree(exported)
    shutil.rmtree(tmp_path / "harbor2")


def test_links_and_paths_that_leave_the_package_are_refused(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    outside = tmp_path / "host-secret.py"
    outside.write_text("print('secret')\n")
    (package / "verifier.py").unlink()
    (package / "verifier.py").symlink_to(outside)
    with pytest.raises(InteropError, match=r"verifier\.py: is a symbolic link that leaves the package"):
        export_harbor(package, tmp_path / "harbor")
    (package / "verifier.py").unlink()
    shutil.copyfile(outside, package / "verifier.py")
    exported = export_harbor(package, tmp_path / "harbor")
    edit(exported / "task.toml", 'oracle = "solution"', 'oracle = "../../.."')
    with pytest.raises(InteropError, match=r"\[metadata\.arena\]\.oracle points outside the task"):
        import_task(exported, tmp_path / "back")


def test_a_prompt_value_the_generator_does_not_print(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    edit(package / "task.md", "{{ instance.count }} integers", "{{ instance.total }} integers")
    with pytest.raises(InteropError, match=r"instance/generate\.py: printed no value 'total' for instance 0"):
        export_harbor(package, tmp_path / "harbor")
