"""BenchFlow's task.md frontmatter is read by taskpkg's task-file reader and strict YAML loader: a hostile file is
refused at once, and no frontmatter makes the import fail with anything but an InteropError naming the file."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interop import InteropError, detect_format, import_task

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "interop" / "benchflow" / "dose-check"
KEYS = st.sampled_from([
    "task", "metadata", "agent", "verifier", "sandbox", "environment", "oracle", "solution", "benchflow", "scenes",
    "agents", "roles", "name", "description", "version", "authors", "keywords", "timeout_sec", "category", "domain",
    "field", "tags", "difficulty", "license", "cpus", "memory", "memory_mb", "storage", "network_mode",
    "allow_internet", "allowed_hosts", "user", "entrypoint", "path", "prompt", "composition", "order", "turns",
    "environment_mode", "docker_image", "workdir", "os", "gpus", "image", "artifacts", "steps", "x-extra",
])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**7), st.floats(allow_nan=True),
                    st.text(max_size=24))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
                      max_leaves=30)


def task_with(tmp: Path, frontmatter: str, body: str = "Do the task.\n") -> Path:
    task = tmp / "task"
    if not task.exists():
        shutil.copytree(FIXTURE, task)
    (task / "task.md").write_text(f"---\n{frontmatter}\n---\n{body}", encoding="utf-8")
    return task


def billion_laughs(levels: int = 12) -> str:
    lines = ["lol0: &lol0 [ha, ha, ha, ha, ha, ha, ha, ha, ha]"]
    lines += [f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines)


@pytest.mark.timeout(30)
def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    task = task_with(tmp_path, billion_laughs())
    assert detect_format(task) == "benchflow", "not mistaken for a native package, and not expanded to find out"
    with pytest.raises(InteropError, match=r"^task\.md:3: frontmatter uses an alias \(\*name\), which the arena does "
                                           r"not allow\. Fix: Write the value out in full\."):
        import_task(task, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("frontmatter", "message"), [
    ("task: {name: a}\ntask: {name: b}", r"^task\.md:3: duplicate key 'task'"),
    ("task: !!python/object:os.system {}", r"^task\.md:2: frontmatter uses an explicit tag"),
    ("<<: {task: {name: a}}", r"^task\.md:2: frontmatter uses a merge key"),
    ("- just\n- a list", r"^task\.md:2: the frontmatter is list, not a mapping"),
    ("task: [unclosed", r"^task\.md:\d+: YAML syntax error"),
])
def test_what_the_strict_reader_refuses_names_its_line(tmp_path: Path, frontmatter: str, message: str) -> None:
    with pytest.raises(InteropError, match=message):
        import_task(task_with(tmp_path, frontmatter), tmp_path / "out")


def test_a_task_md_without_frontmatter_is_refused(tmp_path: Path) -> None:
    task = task_with(tmp_path, "")
    (task / "task.md").write_text("# Just a prompt\n")
    with pytest.raises(InteropError, match=r"^task\.md:1: task\.md does not start with a '---' line"):
        import_task(task, tmp_path / "out")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, VALUES, max_size=8))
@pytest.mark.slow
def test_any_frontmatter_imports_or_fails_with_an_interop_error(data: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        task = task_with(tmp, yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
        try:
            result = import_task(task, tmp / "out", domain="healthcare")
        except InteropError as exc:
            assert exc.file and exc.fix, exc
        else:
            assert (result.package_path / "task.md").is_file()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_as_frontmatter_reads_or_fails_with_an_interop_error(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        try:
            import_task(task_with(tmp, text.replace("\r", "")), tmp / "out", domain="healthcare")
        except InteropError as exc:
            assert exc.file == "task.md" or exc.file, exc


TOML_SCALARS = st.one_of(st.booleans(), st.integers(-5, 10**7), st.floats(allow_nan=False), st.text(max_size=24))
TOML_VALUES = st.recursive(TOML_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    KEYS, inner, max_size=4), max_leaves=25)
OTHER_FORMATS = {"harbor": ("harbor/sensor-drift", "task.toml"), "terminal-bench": ("terminal-bench/quota-report",
                                                                                      "task.yaml")}


@pytest.mark.parametrize("fmt", sorted(OTHER_FORMATS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.dictionaries(KEYS, TOML_VALUES, max_size=8))
def test_any_harbor_or_older_terminal_bench_config_imports_or_fails_with_an_interop_error(fmt: str,
                                                                                         data: dict) -> None:
    import tomli_w

    fixture, config = OTHER_FORMATS[fmt]
    with tempfile.TemporaryDirectory() as folder:
        task = Path(folder) / "task"
        shutil.copytree(FIXTURE.parent.parent / fixture, task)
        text = tomli_w.dumps(data) if config.endswith(".toml") else yaml.safe_dump(data, sort_keys=False)
        (task / config).write_text(text, encoding="utf-8")
        try:
            import_task(task, Path(folder) / "out", domain="finance", github="someone", license="MIT")
        except InteropError as exc:
            assert exc.file and exc.fix, exc
