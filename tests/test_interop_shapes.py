"""`arena import` on the shapes real tasks take: a separate verifier image, linked folders, Terminal-Bench's older
format, domains in the task's own metadata, uv installs, verifiers that read the agent's logs, a verifier shim with a
guarded network fallback, and files the image and the verifier share.

Each fixture is imported as described, its report says what was mapped, what was lost and what the author must still
do, and nothing is ever copied from outside the task.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from interop import ImportResult, InteropError, export_harbor, import_task
from taskpkg.loader import load_package
from tests.fixtures.interop.episodes import native_episode, provide_pytest
from tests.fixtures.interop.minibox import Minibox, available
from tests.support.packages import edit, make_valid_package
from validators.dynamic.leaks import hidden_files
from validators.static import run_static_checks

pytestmark = pytest.mark.usefixtures("pip_registry")  # pins resolve against an empty local index
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
SHAPES = {  # fixture → import options
    "harbor/sensor-drift": {},
    "harbor/claims-audit": {},
    "benchflow/ticket-triage": {},
    "terminal-bench/quota-report": {"github": "tlindqvist", "license": "MIT"},
}
needs_minibox = pytest.mark.skipif(available() is not None, reason=f"no minibox here: {available()}")


def copy(fixture: str, tmp_path: Path) -> Path:
    task = tmp_path / "src" / fixture.split("/")[1]
    shutil.copytree(FIXTURES / fixture, task, symlinks=True)
    return task


def diagnostics(package: Path) -> list[tuple[str, str | None, int | None]]:
    return [(d.check_id, d.file, d.line) for d in run_static_checks(package).diagnostics]


def errors(package: Path) -> list[tuple[str, str | None, int | None]]:
    return [(d.check_id, d.file, d.line) for d in run_static_checks(package).diagnostics
            if d.severity.value == "error"]


def entries(result: ImportResult, kind: str, containing: str) -> list[str]:
    return [entry for entry in getattr(result.report, kind) if containing in entry]


@pytest.mark.parametrize("fixture", sorted(SHAPES))
def test_every_shape_imports_with_a_report_in_three_parts(fixture: str, tmp_path: Path) -> None:
    result = import_task(FIXTURES / fixture, tmp_path, **SHAPES[fixture])
    assert load_package(result.package_path).package is not None
    report = result.report
    assert report.mapped and report.todo, "every import maps fields and leaves at least the instance generator to do"
    for entry in (*report.mapped, *report.lost, *report.todo):
        where, _, what = entry.partition(": ")
        assert where and what and not where.startswith("/"), entry
    assert any("domain" in entry for entry in report.mapped)


# --- a separate verifier image ----------------------------------------------------------------------------------


def test_a_separate_verifier_image_is_built_into_the_package(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "harbor" / "sensor-drift", tmp_path)
    package = result.package_path
    dockerfile = (package / "environment" / "Dockerfile").read_text()
    block = dockerfile[dockerfile.index("# >>> arena import"):]
    assert "RUN pip install --no-cache-dir pytest==8.3.4\n" in block and block.endswith("# <<< arena import\n")
    assert "COPY" not in block and "reference" not in block, "no test file enters the agent's image"
    assert "chmod" not in block, "a RUN that only prepares the test files is not needed"
    assert sorted(p.name for p in (package / "verifier_data").iterdir()) == ["reference", "test.sh", "test_drift.py"]
    verifier = (package / "verifier.py").read_text()
    assert 'PLACEMENTS = (("reference", "/opt/grader/reference/"),)' in verifier
    assert 'WORKDIR = "/tests"' in verifier
    mapped = "\n".join(result.report.mapped)
    assert "tests/Dockerfile: the separate verifier image is built into the package: 1 setup line(s)" in mapped
    assert "reference put at /opt/grader/reference/ at verification" in mapped
    assert "task.toml:2: artifacts: the arena's verifier starts from the agent's whole final filesystem" in mapped
    assert not entries(result, "todo", "installs packages"), "the verifier image's Dockerfile never runs then"
    assert [c for c, _, _ in errors(package)] == []


@needs_minibox
def test_the_separate_verifier_scores_with_its_tools_and_placed_files(tmp_path: Path) -> None:
    package = import_task(FIXTURES / "harbor" / "sensor-drift", tmp_path / "packages").package_path
    solved_box = Minibox(tmp_path / "solved")
    solved = native_episode(solved_box, package, env=provide_pytest(solved_box))
    assert solved.reward == 1.0, solved.output
    assert solved_box.path("/opt/grader/reference/expected.json").is_file(), "placed where the verifier image had it"
    idle_box = Minibox(tmp_path / "idle")
    idle = native_episode(idle_box, package, solve=False, env=provide_pytest(idle_box))
    assert idle.reward == 0.0, idle.output
    bare = native_episode(Minibox(tmp_path / "bare"), package)
    assert bare.reward == 0.0, "without the tools the block installs, pytest is missing and the tests fail"


@pytest.mark.parametrize(("change", "expected"), [
    (lambda t: [(t / "tests" / "requirements.txt").write_text("pytest==8.3.4\n"), edit(
        t / "tests" / "Dockerfile", "RUN pip install --no-cache-dir pytest==8.3.4",
        "COPY requirements.txt /tmp/requirements.txt\nRUN pip install -r /tmp/requirements.txt")],
     ("todo", "tests/Dockerfile:4: `RUN pip install -r /tmp/requirements.txt` uses the tests' own files")),
    (lambda t: edit(t / "tests" / "Dockerfile", "FROM python:3.12-slim",
                    "FROM python:3.12-slim AS build\nRUN true\nFROM python:3.12-slim"),
     ("todo", "tests/Dockerfile:4: a verifier image built in several stages")),
    (lambda t: edit(t / "tests" / "Dockerfile", "FROM python:3.12-slim", "FROM debian:bookworm-slim"),
     ("todo", "environment/Dockerfile: the separate verifier image is built FROM debian:bookworm-slim, the agent's "
              "FROM python:3.12-slim")),
    (lambda t: (t / "tests" / "Dockerfile").unlink() or edit(
        t / "task.toml", 'environment_mode = "separate"\n',
        'environment_mode = "separate"\n\n[verifier.environment]\ndocker_image = "acme/grader:2"\ncpus = 4\n'),
     ("todo", "environment/Dockerfile: the separate verifier runs in the prebuilt image acme/grader:2")),
    (lambda t: (t / "tests" / "Dockerfile").unlink(),
     ("mapped", "a separate verifier with no image of its own runs in a fresh copy of the task's environment")),
    (lambda t: edit(t / "tests" / "Dockerfile", "WORKDIR /tests", "WORKDIR /tests\nEXPOSE 8080"),
     ("lost", "tests/Dockerfile:8: EXPOSE in the verifier image has no meaning")),
])
def test_what_a_verifier_image_cannot_build_in_is_reported(tmp_path: Path, change, expected: tuple[str, str]) -> None:
    task = copy("harbor/sensor-drift", tmp_path)
    change(task)
    result = import_task(task, tmp_path / "out")
    kind, text = expected
    assert entries(result, kind, text), getattr(result.report, kind)


def test_the_verifier_image_resources_are_reported_lost(tmp_path: Path) -> None:
    task = copy("harbor/sensor-drift", tmp_path)
    edit(task / "task.toml", 'environment_mode = "separate"\n',
         'environment_mode = "separate"\n\n[verifier.environment]\ncpus = 4\nallow_internet = true\n')
    result = import_task(task, tmp_path / "out")
    assert entries(result, "lost", "verifier.environment.cpus (the separate verifier's own resources) is not used")
    assert entries(result, "lost", "[verifier.environment]: network_mode 'public'")
    assert "RUN pip install --no-cache-dir pytest==8.3.4" in (
        result.package_path / "environment" / "Dockerfile").read_text()


# --- linked folders ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["environment", "tests", "solution"])
def test_a_task_folder_linked_out_of_the_task_is_refused(tmp_path: Path, folder: str) -> None:
    task = copy("harbor/invoice-total", tmp_path)
    outside = tmp_path / "elsewhere" / folder
    shutil.move(task / folder, outside)
    (outside / "host-secret.txt").write_text("never copy me")
    (task / folder).symlink_to(outside)
    with pytest.raises(InteropError, match=rf"^{folder}/: a symbolic link to .*, outside the task\. Fix: Copy"):
        import_task(task, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("host-secret.txt"))


def test_a_configured_path_out_of_the_task_is_refused(tmp_path: Path) -> None:
    task = copy("benchflow/dose-check", tmp_path)
    shutil.copytree(task / "verifier", tmp_path / "src" / "shared-checks")
    edit(task / "task.md", "verifier:\n  timeout_sec: 60\n", "verifier: ../shared-checks/\n")
    with pytest.raises(InteropError, match=r"^\.\./shared-checks/: resolves to .*, outside the task"):
        import_task(task, tmp_path / "out")


def test_links_inside_the_task_are_followed_and_links_out_reported(tmp_path: Path) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    (tmp_path / "host.txt").write_text("host file")
    (task / "tests" / "host.txt").symlink_to(tmp_path / "host.txt")
    (task / "tests" / "vendor" / "outside").symlink_to(tmp_path)
    (task / "environment" / "claims-copy.csv").symlink_to(task / "environment" / "claims.csv")
    result = import_task(task, tmp_path / "out")
    package = result.package_path
    assert not (package / "verifier_data" / "host.txt").exists()
    assert not (package / "verifier_data" / "vendor" / "outside").exists()
    assert (package / "environment" / "claims-copy.csv").read_text().startswith("claim,policy_limit,paid")
    assert entries(result, "lost", "tests/host.txt: a symbolic link to")
    assert entries(result, "lost", "tests/vendor/outside: a symbolic link to")
    assert not any("host file" in p.read_text(errors="replace") for p in package.rglob("*") if p.is_file())


def test_export_refuses_a_package_whose_files_leave_it(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")
    (tmp_path / "secret.txt").write_text("host")
    (package / "oracle" / "notes.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(InteropError, match=r"^oracle/notes\.txt: a symbolic link to .*, outside the task"):
        export_harbor(package, tmp_path / "harbor")
    assert not (tmp_path / "harbor" / "sum-numbers").exists()


def test_export_refuses_instance_files_that_link_out(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "made", "sum-numbers")

    def maker(pkg, scratch: Path) -> tuple[dict, Path]:
        workspace = scratch / "workspace"
        workspace.mkdir()
        (workspace / "numbers.txt").symlink_to("/etc/hostname")
        return {"count": 1}, workspace

    with pytest.raises(InteropError, match=r"numbers\.txt: a symbolic link to /etc/hostname.*Fix: Make the generator"):
        export_harbor(package, tmp_path / "harbor", maker)


# --- Terminal-Bench's older format ---------------------------------------------------------------------------------


def test_the_older_terminal_bench_format_imports(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "terminal-bench" / "quota-report", tmp_path, github="tlindqvist", license="MIT")
    package = result.package_path
    assert result.source_format == "terminal-bench"
    loaded = load_package(package).package
    assert loaded is not None and loaded.domain == "cybersecurity-it"
    assert (loaded.limits.agent_timeout_s, loaded.limits.verifier_timeout_s) == (360, 60)
    assert loaded.body.startswith("The file /app/usage.csv lists files")
    assert sorted(p.name for p in (package / "environment").iterdir()) == ["Dockerfile", "usage.csv"], \
        "the format's own files (task.yaml, tests, solution, run-tests.sh) never reach the image"
    assert sorted(p.name for p in (package / "verifier_data").iterdir()) == ["run-tests.sh", "test_outputs.py"]
    verifier = (package / "verifier.py").read_text()
    assert 'REWARD_FROM = "exit-status"' in verifier and 'EXTRA_ENV = {"TEST_DIR": "/tests"}' in verifier
    assert loaded.oracle_entrypoint == "run_oracle.sh" and (package / "oracle" / "solve.sh").is_file()
    assert entries(result, "mapped", "task.yaml:7: domain cybersecurity-it from category 'system-administration'")
    assert entries(result, "lost", "task.yaml:15: expert_time_estimate_min")
    assert [c for c, _, _ in errors(package)] == [], "uv installs with --python are pinned; nothing else is wrong"


@needs_minibox
def test_the_older_format_scores_by_the_exit_status_of_its_tests(tmp_path: Path) -> None:
    package = import_task(FIXTURES / "terminal-bench" / "quota-report", tmp_path / "packages").package_path
    box = Minibox(tmp_path / "solved")
    solved = native_episode(box, package, env=provide_pytest(box))
    assert (solved.reward, solved.details["reward_file"], solved.details["exit_code"]) == (1.0, "exit status", 0)
    idle_box = Minibox(tmp_path / "idle")
    idle = native_episode(idle_box, package, solve=False, env=provide_pytest(idle_box))
    assert idle.reward == 0.0 and idle.details["exit_code"] != 0, idle.output


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: (t / "run-tests.sh").unlink(),
     r"^run-tests\.sh: is missing: a task in Terminal-Bench's older format \(task\.yaml\) is verified by it\. Fix: "
     r"Add run-tests\.sh .*harbor tasks migrate"),
    (lambda t: (t / "Dockerfile").unlink(),
     r"^Dockerfile: is missing, so this task in Terminal-Bench's older format \(task\.yaml\) has no image"),
    (lambda t: (t / "task.yaml").write_text("instruction: [unclosed\n"), r"^task\.yaml:\d+: YAML syntax error"),
    (lambda t: (t / "task.yaml").write_text("author_name: x\n"), r"^task\.yaml: has no `instruction`"),
])
def test_an_older_format_task_that_cannot_import_says_why_and_what_to_do(tmp_path: Path, change, message) -> None:
    task = copy("terminal-bench/quota-report", tmp_path)
    change(task)
    with pytest.raises(InteropError, match=message):
        import_task(task, tmp_path / "out")


def test_older_format_variants(tmp_path: Path) -> None:
    task = copy("terminal-bench/quota-report", tmp_path)
    (task / "solution.sh").unlink()
    (task / "solution.yaml").write_text("- command: python3 make_report.py\n  min_timeout_sec: 5\n")
    edit(task / "Dockerfile", "COPY usage.csv /app/usage.csv", "COPY usage.csv /app/usage.csv\nCOPY tests/ /app/tests/")
    config = (task / "task.yaml").read_text()
    prompt = config[config.index("|-\n") + 3: config.index("author_name")]
    (task / "task.yaml").write_text("descriptions:\n  - key: base\n    description: |-\n"
                                    + prompt.replace("  ", "      ", 2) + config[config.index("author_name"):])
    result = import_task(task, tmp_path / "out", github="tlindqvist", license="MIT")
    package = result.package_path
    assert load_package(package).package.body.startswith("The file /app/usage.csv")
    assert errors(package) == [("ARENA202", "oracle/solve.sh", 2)], "a missing solution is one clear error"
    assert "solution.yaml (keystrokes typed" in (package / "oracle" / "solve.sh").read_text()
    assert entries(result, "todo", "environment/Dockerfile:8: `COPY tests/ /app/tests/` puts the tests")


def test_a_folder_of_tasks_is_pointed_at_its_tasks(tmp_path: Path) -> None:
    with pytest.raises(InteropError, match=r"its sub-folders quota-report are tasks: import them one at a time"):
        import_task(FIXTURES / "terminal-bench", tmp_path)


# --- domains from the task's own metadata ----------------------------------------------------------------------------


@pytest.mark.parametrize(("metadata", "domain", "said"), [
    ('domain = "insurance"', "finance", "domain finance from metadata.domain 'insurance'"),
    ('field = "Clinical pharmacology"', "healthcare", "domain healthcare from metadata.field 'Clinical pharmacology'"),
    ('field = "Humanities"\nsubfield = "Contract law"', "law-government",
     "domain law-government from metadata.subfield 'Contract law'"),
    ('category = "games"\ntags = ["logistics", "routing", "spreadsheet", "scheduling"]', "math-planning",
     "domain math-planning from tag 'logistics'"),
    ('category = "Cybersecurity"\ntags = ["accounting"]', "cybersecurity-it",
     "domain cybersecurity-it from metadata.category 'Cybersecurity'"),
])
def test_the_domain_comes_from_the_task_metadata_naming_the_field(tmp_path: Path, metadata: str, domain: str,
                                                                  said: str) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    edit(task / "task.toml", 'domain = "insurance"', metadata)
    result = import_task(task, tmp_path / "out")
    assert load_package(result.package_path).package.domain == domain
    assert entries(result, "mapped", said), result.report.mapped


def test_domain_is_asked_for_only_when_nothing_maps(tmp_path: Path) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    edit(task / "task.toml", 'domain = "insurance"', 'category = "software-engineering"\ntags = ["games"]')
    with pytest.raises(InteropError) as raised:
        import_task(task, tmp_path / "out")
    assert str(raised.value).startswith("task.toml:10: none of metadata.category 'software-engineering', tag 'games' "
                                        "maps to one of the arena's eight domains (coding is deliberately not")
    assert "Pass --domain with one of: finance" in str(raised.value)
    result = import_task(task, tmp_path / "out", domain="office-documents")
    assert entries(result, "mapped", "--domain: domain office-documents")
    other = import_task(FIXTURES / "harbor" / "claims-audit", tmp_path / "other", domain="math-planning")
    assert entries(other, "mapped", "--domain: domain math-planning (metadata.domain 'insurance' at task.toml:10 "
                                    "suggests finance)")


# --- install lines, log-reading verifiers, one finding per problem -------------------------------------------------


@pytest.mark.parametrize(("line", "unpinned"), [
    ("RUN uv pip install --python $VIRTUAL_ENV/bin/python pytest==8.3.4", []),
    ("RUN uv pip install --system --python /usr/local/bin/python3 --index-url https://pypi.org/simple numpy==2.1.3",
     []),
    ("RUN pip install --no-cache-dir -e . && pip install pandas==2.2.3 > /dev/null 2>&1", []),
    ("RUN uv pip install -p 3.12 --only-binary :all: requests", ["requests"]),
    ("RUN pip install --target /opt/lib pytest httpx==0.27.2", ["pytest"]),
])
def test_install_lines_understand_options_that_take_a_value(tmp_path: Path, line: str, unpinned: list[str]) -> None:
    package = make_valid_package(tmp_path, "sum-numbers")
    dockerfile = package / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + line + "\n")
    found = [d.message for d in run_static_checks(package).diagnostics if d.check_id == "ARENA403"]
    assert found == [f"Python package '{name}' is installed without an exact version" for name in unpinned]


def test_a_verifier_reading_the_agent_logs_is_one_error_per_line_in_shell_and_python(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "harbor" / "claims-audit", tmp_path)
    package = result.package_path
    # check.py's line 14 is 17 once ruff's formatter has put two blank lines between its definitions
    assert errors(package) == [("ARENA502", "verifier_data/check.py", 17), ("ARENA502", "verifier_data/test.sh", 3)]
    places = {"verifier_data/check.py:17", "verifier_data/test.sh:3"}
    assert {e.split(": ")[0] for e in entries(result, "todo", "reads the agent's logs")} == places
    assert not any(e.split(": ")[0] in places for e in result.todo_except(places)), "shown once, by the check"


def test_a_task_about_trajectories_is_not_reading_the_agents(tmp_path: Path) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    (task / "tests" / "test.sh").write_text("#!/bin/sh\n# the projectile's trajectory\npython3 /tests/check.py 0 "
                                            "&& echo 1 > /logs/verifier/reward.txt || echo 0 > "
                                            "/logs/verifier/reward.txt\n")
    edit(task / "tests" / "check.py", 'steps = Path("/logs/agent/trajectory.json")',
         'steps = Path("/app/trajectory.json")')
    result = import_task(task, tmp_path / "out")
    assert errors(result.package_path) == [] and not entries(result, "todo", "agent's logs")


def test_an_install_line_is_reported_once_at_the_file_to_edit(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "harbor" / "port-audit", tmp_path)
    found = [(c, f, n) for c, f, n in errors(result.package_path) if c in ("ARENA504", "ARENA407")]
    assert found == [("ARENA504", "verifier_data/test.sh", 2), ("ARENA407", "verifier_data/test.sh", 3),
                     ("ARENA504", "verifier_data/test.sh", 5), ("ARENA504", "verifier_data/test.sh", 6)]
    assert "FETCHES" not in (result.package_path / "verifier.py").read_text()


# --- the verifier shim's guarded fallback --------------------------------------------------------------------------


def test_a_guarded_fallback_the_image_makes_unreachable_is_commented_out(tmp_path: Path) -> None:
    result = import_task(FIXTURES / "benchflow" / "ticket-triage", tmp_path)
    package = result.package_path
    script = (package / "verifier_data" / "test.sh").read_text().split("\n")
    assert script[7].startswith("    : # arena import, installed at build time instead: curl -LsSf")
    assert script[10].endswith("status=$?")
    assert script[4] == '    python3 -m pytest -q "$BENCHFLOW_VERIFIER_DIR/test_triage.py"', "the live branch stays"
    assert entries(result, "mapped", "verifier_data/test.sh:8-11: the install fallback behind `python3 -c \"import "
                                     "pytest\" >/dev/null 2>&1` (line 4) is resolved at import: environment/"
                                     "Dockerfile already installs pytest")
    assert "# >>> arena import" not in (package / "environment" / "Dockerfile").read_text(), "nothing to add"
    assert errors(package) == [] and not entries(result, "todo", "verifier_data/test.sh")


def test_a_guarded_fallback_installs_the_tool_the_image_lacks_at_build_time(tmp_path: Path) -> None:
    task = copy("benchflow/ticket-triage", tmp_path)
    edit(task / "environment" / "Dockerfile", "RUN pip install --no-cache-dir pytest==8.3.4\n", "")
    result = import_task(task, tmp_path / "out")
    package = result.package_path
    assert "installed at build time instead: curl -LsSf" in (package / "verifier_data" / "test.sh").read_text()
    dockerfile = (package / "environment" / "Dockerfile").read_text()
    assert "RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir pytest==8.3.4\n" in dockerfile
    assert errors(package) == []


@needs_minibox
def test_the_shim_with_its_fallback_dropped_still_scores(tmp_path: Path) -> None:
    package = import_task(FIXTURES / "benchflow" / "ticket-triage", tmp_path / "packages").package_path
    box = Minibox(tmp_path / "solved")
    assert native_episode(box, package, env=provide_pytest(box)).reward == 1.0
    idle = Minibox(tmp_path / "idle")
    assert native_episode(idle, package, solve=False, env=provide_pytest(idle)).reward == 0.0


# --- shared files are not leaks; hidden content is -----------------------------------------------------------------


def test_inputs_and_a_licensed_library_shared_with_the_verifier_are_not_leaks(tmp_path: Path) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    edit(task / "tests" / "test.sh", 'if grep -q "tallylib" /logs/agent/commands.txt 2>/dev/null; then used_library=1; '
         'else used_library=0; fi\n', "used_library=0\n")
    edit(task / "tests" / "check.py", 'steps = Path("/logs/agent/trajectory.json")', 'steps = Path("/nonexistent")')
    package = import_task(task, tmp_path / "out").package_path
    assert not [d for d in diagnostics(package) if d[0] == "ARENA406"]
    loaded = load_package(package).package
    hidden = set(hidden_files(loaded).values())
    assert "verifier_data/claims.csv" not in hidden and "verifier_data/vendor/tallylib/tallylib.py" not in hidden
    assert "verifier_data/check.py" in hidden and "verifier.py" in hidden


@pytest.mark.parametrize(("change", "leaked"), [
    (lambda t: [(t / "tests" / "expected.txt").write_text("C-101\nC-103\n" * 4),
                shutil.copy(t / "tests" / "expected.txt", t / "environment" / "expected.txt")],
     "verifier_data/expected.txt"),
    (lambda t: shutil.copy(t / "tests" / "check.py", t / "environment" / "check.py"), "verifier_data/check.py"),
    (lambda t: (t / "environment" / "vendor" / "tallylib" / "LICENSE").write_text("All rights reserved.\n"),
     "verifier_data/vendor/tallylib/tallylib.py"),
])
def test_a_hidden_files_content_in_the_image_is_still_a_leak(tmp_path: Path, change, leaked: str) -> None:
    task = copy("harbor/claims-audit", tmp_path)
    change(task)
    package = import_task(task, tmp_path / "out").package_path
    found = [d for d in run_static_checks(package).diagnostics if d.check_id == "ARENA406"]
    assert any(leaked in d.message for d in found), [d.message for d in found]


def test_arena_import_shows_each_problem_once(tmp_path: Path) -> None:
    """The CLI prints what was lost and what is still to do; a to-do the static check reports at the same place is
    shown once, as the check's finding."""
    from click.testing import CliRunner

    from arena.interop_commands import import_command

    done = CliRunner().invoke(import_command, [str(FIXTURES / "harbor" / "port-audit"), "--out", str(tmp_path),
                                               "--github", "mallory-sec"], env={"COLUMNS": "200"})
    assert done.exit_code == 1, done.output
    assert "\nLost (" in done.output and "\nTo do (" in done.output and "mapped fields and notes: -v" in done.output
    for place in ("verifier_data/test.sh:2", "verifier_data/test.sh:3", "verifier_data/test.sh:5",
                  "verifier_data/test.sh:6"):
        assert done.output.count(place) == 1, (place, done.output)
    verbose = CliRunner().invoke(import_command, [str(FIXTURES / "harbor" / "invoice-total"), "--out",
                                                  str(tmp_path / "v"), "-v"], env={"COLUMNS": "200"})
    assert verbose.exit_code == 0 and "\nMapped (" in verbose.output and "domain finance from" in verbose.output


def test_only_what_runs_at_verification_is_scanned(tmp_path: Path) -> None:
    """A shared-mode verifier never builds tests/Dockerfile, and a README may say anything: neither is a to-do."""
    task = copy("harbor/sensor-drift", tmp_path)
    edit(task / "task.toml", 'environment_mode = "separate"', 'environment_mode = "shared"\n\n[verifier.environment]\n'
         'docker_image = "acme/grader:2"')
    (task / "tests" / "README.md").write_text("To run by hand: pip install pytest && curl -s localhost:8000\n")
    result = import_task(task, tmp_path / "out")
    assert not [e for e in result.report.todo if e.startswith("verifier_data/")], result.report.todo
    assert entries(result, "lost", "verifier.environment.docker_image' is ignored: in shared mode")
    assert "# >>> arena import" not in (result.package_path / "environment" / "Dockerfile").read_text()
