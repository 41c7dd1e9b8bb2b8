"""taskpkg.installs: what a line of shell installs, as ARENA403, ARENA504's fix and `arena import` read it."""

from __future__ import annotations

import pytest

from taskpkg.installs import debian_packages, is_pinned, pip_arguments, python_packages, requirement_name


@pytest.mark.parametrize(("line", "packages"), [
    ("pip install -q --no-cache-dir pytest==8.4.1 'numpy<2' -r req.txt", ["pytest==8.4.1", "numpy<2"]),
    ("python3 -m pip install --index-url https://x/simple --target /opt/t requests", ["requests"]),
    ("uv pip install --system -p 3.12 httpx==0.27.2 && echo done", ["httpx==0.27.2"]),
    ("uvx --with pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf x.json /tests", [
        "pytest==8.4.1", "pytest-json-ctrf==0.3.5", "pytest"]),
    ("uvx --from ruff==0.6.0 ruff check .", ["ruff==0.6.0"]),
    ("uv tool install black==24.8.0", ["black==24.8.0"]),
    ("uv run --with pandas==2.2.3 python check.py", ["pandas==2.2.3"]),
    ("uvx $TOOL run", []),
    ("apt-get install -y curl", []),
])
def test_python_packages(line: str, packages: list[str]) -> None:
    assert python_packages(line) == packages


def test_debian_packages_and_requirements_files() -> None:
    assert debian_packages("apt-get update && apt-get install -y --no-install-recommends curl jq=1.6 > /dev/null") \
        == ["curl", "jq=1.6"]
    assert pip_arguments("-r requirements.txt --requirement dev.txt x 2>/dev/null y") == (
        ["x"], ["requirements.txt", "dev.txt"])


def test_pins_and_names() -> None:
    assert [is_pinned(r) for r in ("a==1", "a>=1", "./pkg", "a @ https://x/a.whl", "a.whl", "a")] == [
        True, False, True, True, True, False]
    assert [requirement_name(r) for r in ("Foo_Bar[x]>=1", "zope.interface==6", "==1")] == [
        "foo-bar", "zope-interface", ""]
