"""`arena import` on fixture tasks of both formats: what is written, what is reported, what the static check says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from interop import ImportResult, InteropError, detect_format, import_task
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from validators.static import run_static_checks

pytestmark = pytest.mark.usefixtures("pip_registry")  # pins resolve against an empty local index
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
HARBOR, BENCHFLOW = FIXTURES / "harbor", FIXTURES / "benchflow"
# Fixtures that must pass the static check; their only findings are these documented ones.
EXPECTED_FINDINGS = {("warning", "ARENA119"), ("info", "ARENA402")}
COMPLIANT = {
    "invoice-total": (HARBOR, {}),
    "room-plan": (HARBOR, {"github": "ada-l"}),
    "claim-review": (HARBOR, {}),
    "dose-check": (BENCHFLOW, {}),
    "rota-plan": (BENCHFLOW, {"github": "nick-example", "license": "CC0-1.0"}),
    "refund-triage": (BENCHFLOW, {}),
}


def findings(package: Path) -> set[tuple[str, str]]:
    return {(d.severity.value, d.check_id) for d in run_static_checks(package).diagnostics}


def messages(package: Path, check_id: str) -> list[str]:
    return [f"{d.location()} {d.message}" for d in run_static_checks(package).diagnostics if d.check_id == check_id]


def everything(result: ImportResult) -> str:
    """The whole report as one text."""
    return "\n".join([*result.report.mapped, *result.report.lost, *result.report.todo])


def frontmatter(package: Path) -> TaskPackage:
    loaded = load_package(package)
    assert loaded.package is not None, [d.to_dict() for d in loaded.diagnostics]
    return loaded.package


@pytest.mark.parametrize("name", sorted(COMPLIANT))
def test_compliant_fixtures_import_and_pass_the_static_check(name: str, tmp_path: Path) -> None:
    folder, options = COMPLIANT[name]
    result = import_task(folder / name, tmp_path, **options)
    assert result.package_path == tmp_path / name and result.source_format == folder.name
    assert findings(result.package_path) == EXPECTED_FINDINGS
    assert any("ARENA119" in entry for entry in result.report.todo), "the expected warning must be explained"
    package = frontmatter(result.package_path)
    assert package.instance_count == 1 and package.verifier_data == ("verifier_data",)
    assert (result.package_path / "verifier_data" / "test.sh").is_file()
    assert not any((result.package_path / "environment").rglob("test.sh")), "tests must never reach the image"


def test_harbor_fields_map_onto_the_frontmatter(tmp_path: Path) -> None:
    result = import_task(HARBOR / "invoice-total", tmp_path)
    package = frontmatter(result.package_path)
    assert (package.name, package.title, package.version, package.domain, package.difficulty, package.license) == (
        "invoice-total", "Total the open invoices of a small ledger", "1.2.0", "finance", "easy", "MIT")
    assert package.tags == ("invoices", "csv", "bookkeeping")
    assert [(a.name, a.github) for a in package.authors] == [("ada-l", "ada-l")]
    assert package.canary == "4b1d6c8e-3f0a-4f1e-9c2d-7a5b8e9f0a1b"
    limits = package.limits
    assert (limits.build_timeout_s, limits.agent_timeout_s, limits.verifier_timeout_s, limits.cpus,
            limits.memory_mb, limits.storage_mb) == (300, 600, 120, 1, 1024, 2048)
    assert (limits.oracle_timeout_s, limits.max_turns, limits.pids) == (600, 100, 256)
    assert package.body.startswith("# Total the open invoices\n") and "canary" not in package.body
    defaulted = [u for u in result.report.mapped if "not in the source" in u]
    assert len(defaulted) == 3 and all(k in " ".join(defaulted) for k in ("oracle_timeout_s", "max_turns", "pids"))
    text = (result.package_path / "task.md").read_text()
    assert "max_turns: 100  # not in the source: arena import's default" in text
    assert package.oracle_entrypoint == "run_oracle.sh", "a bash solve.sh is run through a wrapper, not with sh"
    assert (result.package_path / "oracle" / "solve.sh").read_bytes() == \
        (HARBOR / "invoice-total" / "solution" / "solve.sh").read_bytes()


def test_missing_fields_get_defaults_and_todo_markers_the_check_points_at(tmp_path: Path) -> None:
    result = import_task(HARBOR / "bare", tmp_path)
    package = result.package_path
    text = everything(result)
    for limit in ("build_timeout_s", "agent_timeout_s", "verifier_timeout_s", "max_turns", "cpus", "memory_mb",
                  "storage_mb", "pids"):
        assert f"{limit} not in the source" in text, limit
    assert "Harbor's default 600 used" in text and "derived from the prompt (the source has none)" in text
    assert "no reference solution" in text and "the source names no author" in text and "no licence" in text
    assert any("no network policy declared" in entry for entry in result.report.lost)
    placeholders = messages(package, "ARENA202")
    assert all("placeholder written by `arena import`" in m for m in placeholders), placeholders
    assert any("no reference solution" in m for m in placeholders)
    assert any("task.md:" in m and "GitHub handle" in m for m in placeholders)
    assert any("no licence in the source (task.toml); confirm" in m for m in placeholders)
    oracle = [d for d in run_static_checks(package).diagnostics if d.file == "oracle/solve.sh"]
    assert [(d.check_id, d.line) for d in oracle] == [("ARENA202", 2)], "a missing solution is one clear error"
    assert result.todo_except({"oracle/solve.sh:2"}) == [e for e in result.report.todo
                                                          if not e.startswith("oracle/solve.sh:2:")]


def test_the_github_and_license_options_fill_what_the_source_lacks(tmp_path: Path) -> None:
    without = import_task(BENCHFLOW / "rota-plan", tmp_path / "a")
    assert any(u.startswith("task.md:") and "no GitHub handle for Nicholas Example" in u for u in without.report.todo)
    assert len(messages(without.package_path, "ARENA202")) == 2
    given = import_task(BENCHFLOW / "rota-plan", tmp_path / "b", github="nick-example", license="CC0-1.0")
    package = frontmatter(given.package_path)
    assert [(a.name, a.github) for a in package.authors] == [("Nicholas Example", "nick-example")]
    assert package.license == "CC0-1.0"


def test_noncompliant_harbor_task_imports_and_the_check_says_what_to_change(tmp_path: Path) -> None:
    result = import_task(HARBOR / "port-audit", tmp_path)
    package = result.package_path
    assert frontmatter(package).domain == "cybersecurity-it"
    found = findings(package)
    assert {("error", "ARENA401"), ("error", "ARENA403"), ("error", "ARENA504")} <= found
    installs = messages(package, "ARENA504")
    assert any("pip install pytest==8.4.1" in m for m in installs) and any("apt-get" in m for m in installs)
    lost, todo = "\n".join(result.report.lost), "\n".join(result.report.todo)
    assert "task.toml:27: [environment]: network_mode 'public'" in lost and "work offline" in lost
    assert "verifier_data/test.sh:3: pipes a download into a shell" in todo
    assert "verifier_data/test.sh:6: downloads at verification time (`uvx" in todo
    assert "task.toml:26: gpus 1" in lost and "environment/docker-compose.yaml" in lost
    assert "task.toml:19: verifier.env holds host environment variables" in lost
    assert "metadata.expert_time_estimate_min" in lost
    assert frontmatter(package).limits.memory_mb == 4096, "the legacy memory = '4G' is read"


def test_benchflow_sandbox_spelling_with_native_folders(tmp_path: Path) -> None:
    result = import_task(BENCHFLOW / "dose-check", tmp_path)
    package = frontmatter(result.package_path)
    assert (package.domain, package.license, package.limits.cpus, package.limits.oracle_timeout_s) == (
        "healthcare", "CC-BY-4.0", 2, 120)
    assert package.canary == "0f6b2a4e-9d3c-4e1b-8a7f-5c2d1e0b9a87"
    assert package.body.startswith("You are checking prescriptions") and "canary" not in package.body
    verifier = (result.package_path / "verifier.py").read_text()
    assert 'MOUNT = "/verifier"' in verifier and 'LINKS = ("/tests",)' in verifier
    assert '"BENCHFLOW_VERIFIER_DIR": "/verifier"' in verifier
    assert result.report.lost == [], "every key of this fixture maps"


def test_benchflow_environment_spelling_prompt_heading_and_unknown_keys(tmp_path: Path) -> None:
    result = import_task(BENCHFLOW / "rota-plan", tmp_path, github="nick-example", license="MIT")
    package = frontmatter(result.package_path)
    assert package.domain == "math-planning", "an unmapped category falls back to the subcategory"
    assert package.body.startswith("Plan next week's on-call rota.") and "## prompt" not in package.body
    assert (package.limits.cpus, package.limits.memory_mb, package.limits.storage_mb) == (1, 2048, 10240)
    lost = "\n".join(result.report.lost)
    assert "task.md:19: unknown key 'x_internal_notes'" in lost
    assert "task.md:10: unknown key 'metadata.expert_time_estimate_min'" in lost
    assert "storage_mb not in the source: BenchFlow's default 10240 used" in "\n".join(result.report.mapped)
    assert not any("network" in u for u in result.report.lost), "allow_internet: false is no network"


def test_benchflow_roles_and_scenes_become_native_scenes(tmp_path: Path) -> None:
    result = import_task(BENCHFLOW / "refund-triage", tmp_path)
    package = frontmatter(result.package_path)
    assert [(r.name, r.kind) for r in package.roles] == [("agent", "agent"), ("user", "scripted")]
    assert [s.name for s in package.scenes] == ["plan", "carry-out", "carry-out-2"]
    prompts = package.scene_prompts({"open_braces": "{{"})
    assert prompts[0].text.startswith("Read the requests and write `/workspace/plan.md`"), "role prompt for planner"
    assert prompts[1].text.startswith("Carry out the plan"), "the scene's section wins over the role's"
    assert "### Notes for graders" in prompts[1].text
    assert '"Please also refund order O-17 ({{ order O-17 }} in the tracker)."' in prompts[2].text
    report = "\n".join(result.report.lost)
    assert "roles clerk, planner are all played by models" in report
    assert "task.md:21: unknown key 'sandbox.shiny_new_option'" in report
    assert "task.md:43: unknown key 'unknown_top_level'" in report
    assert "simulated user" in report


def test_harbor_steps_become_scenes_and_a_chained_oracle(tmp_path: Path) -> None:
    result = import_task(HARBOR / "claim-review", tmp_path)
    package = frontmatter(result.package_path)
    assert [s.name for s in package.scenes] == ["triage", "update"]
    assert package.scene_prompts({})[1].text.startswith("The customer behind claim C3")
    oracle = (result.package_path / "oracle" / "solve.sh").read_text()
    assert oracle.index("steps/triage/solve.sh") < oracle.index("steps/update/solve.sh")
    assert any("steps[1].min_reward" in u for u in result.report.lost)


def test_an_unmappable_category_asks_for_domain(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(HARBOR / "bare", task)
    config = task / "task.toml"
    config.write_text(config.read_text().replace('category = "data-science"', 'category = "software-engineering"'))
    with pytest.raises(InteropError) as raised:
        import_task(task, tmp_path / "out")
    message = str(raised.value)
    assert message.startswith("task.toml:4: none of metadata.category 'software-engineering' maps")
    assert "coding is deliberately not an arena domain" in message
    assert "--domain" in message and "finance, healthcare, law-government" in message and "math-planning" in message
    assert not (tmp_path / "out" / "src").exists()
    result = import_task(task, tmp_path / "out", domain="office-documents")
    assert frontmatter(result.package_path).domain == "office-documents"


def test_both_runtime_spellings_at_once_is_an_error(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(BENCHFLOW / "rota-plan", task)
    document = task / "task.md"
    document.write_text(document.read_text().replace("x_internal_notes:", "sandbox:\n  cpus: 2\nx_internal_notes:"))
    with pytest.raises(InteropError, match=r"^task\.md:\d+: declares both 'environment' and 'sandbox'.*Fix: Keep only"):
        import_task(task, tmp_path / "out")


@pytest.mark.parametrize(("change", "expected"), [
    (lambda t: (t / "tests" / "test.sh").unlink(), r"^tests/test\.sh: is missing"),
    (lambda t: (t / "instruction.md").unlink(), r"^instruction\.md: is missing"),
    (lambda t: (t / "task.toml").write_text("[agent\ntimeout_sec = 1\n"), r"^task\.toml:1: is not valid TOML"),
    (lambda t: (t / "task.toml").write_text('[agent]\ntimeout_sec = "soon"\n'),
     r"^task\.toml:2: 'agent\.timeout_sec' is 'soon', not a positive number"),
    (lambda t: (t / "environment" / "Dockerfile").unlink(), r"^environment/Dockerfile: is missing"),
])
def test_broken_sources_fail_with_the_file_line_and_a_fix(tmp_path: Path, change, expected: str) -> None:
    task = tmp_path / "src"
    shutil.copytree(HARBOR / "invoice-total", task)
    change(task)
    with pytest.raises(InteropError, match=expected) as raised:
        import_task(task, tmp_path / "out")
    assert "Fix: " in str(raised.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir()), "nothing half-written"


def test_options_and_targets_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InteropError, match="--name: 'Bad_Name' is not a valid package name"):
        import_task(HARBOR / "invoice-total", tmp_path, name="Bad_Name")
    with pytest.raises(InteropError, match="--domain: 'coding' is not one of the arena's domains"):
        import_task(HARBOR / "invoice-total", tmp_path, domain="coding")
    first = import_task(HARBOR / "invoice-total", tmp_path, name="ledger-total")
    assert first.package_path.name == "ledger-total" and frontmatter(first.package_path).name == "ledger-total"
    with pytest.raises(InteropError, match="already exists"):
        import_task(HARBOR / "invoice-total", tmp_path, name="ledger-total")
    with pytest.raises(InteropError, match="is already an arena package"):
        import_task(first.package_path, tmp_path / "again")
    with pytest.raises(InteropError, match=r"holds none of task\.md \(BenchFlow\), task\.toml"):
        import_task(tmp_path / "ledger-total" / "oracle", tmp_path / "again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger-total"], "no staging folder is left behind"


def test_detect_format(tmp_path: Path) -> None:
    assert detect_format(HARBOR / "invoice-total") == "harbor"
    assert detect_format(BENCHFLOW / "rota-plan") == "benchflow"
    assert detect_format(Path(__file__).resolve().parent.parent / "taskpkg" / "scaffold_template") == "native"


def test_links_out_of_the_task_are_not_followed(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(HARBOR / "invoice-total", task)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    (task / "environment" / "leak.txt").symlink_to(secret)
    result = import_task(task, tmp_path / "out")
    assert not (result.package_path / "environment" / "leak.txt").exists()
    assert any("environment/leak.txt: a symbolic link" in u for u in result.report.lost)


def test_a_config_or_prompt_linked_out_of_the_task_is_refused(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(HARBOR / "invoice-total", task)
    secret = tmp_path / "id_rsa"
    secret.write_text("not for the prompt")
    (task / "instruction.md").unlink()
    (task / "instruction.md").symlink_to(secret)
    with pytest.raises(InteropError, match=r"^instruction\.md: is a symbolic link to a file outside the task"):
        import_task(task, tmp_path / "out")


def test_a_benchflow_task_that_also_has_task_toml(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(BENCHFLOW / "dose-check", task)
    (task / "task.toml").write_text('version = "1.0"\n')
    result = import_task(task, tmp_path / "out")
    assert result.source_format == "benchflow"
    assert any(u.startswith("task.toml: ignored: task.md") for u in result.report.lost)


def test_a_prebuilt_image_instead_of_a_dockerfile(tmp_path: Path) -> None:
    task = tmp_path / "src"
    shutil.copytree(HARBOR / "invoice-total", task)
    shutil.rmtree(task / "environment")
    config = task / "task.toml"
    config.write_text(config.read_text().replace("[environment]\n", '[environment]\ndocker_image = "ubuntu:24.04"\n'))
    result = import_task(task, tmp_path / "out")
    dockerfile = (result.package_path / "environment" / "Dockerfile").read_text()
    assert dockerfile.endswith("FROM ubuntu:24.04\n")
    assert any("environment/Dockerfile written as FROM ubuntu:24.04" in n for n in result.report.mapped)
    assert any("the image may lack python3" in u for u in result.report.todo)
    assert ("info", "ARENA402") in findings(result.package_path)
