"""The dependency arrows point one way, and the code base stays lint-clean."""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each project package and the project packages it may import. Lower layers never import higher ones.
ALLOWED: dict[str, set[str]] = {
    "taskpkg": set(),
    "estimates": set(),
    "sandbox": {"taskpkg"},
    "agents": {"taskpkg", "sandbox"},
    "validators": {"taskpkg", "sandbox", "agents"},
    "scoring": {"taskpkg", "sandbox", "agents", "estimates"},
    "training": {"taskpkg", "sandbox", "agents", "estimates"},
    "launch": {"taskpkg"},
    "bot": {"taskpkg", "validators", "launch", "scoring"},
    "leaderboard": {"taskpkg", "scoring", "launch"},
    "interop": {"taskpkg"},
    "arena": {"taskpkg", "estimates", "sandbox", "agents", "validators", "scoring", "training", "launch", "bot",
              "leaderboard", "interop"},
}


def project_packages() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name != "tests")


def imports_of(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_package_has_a_place_in_the_layers() -> None:
    assert set(project_packages()) <= set(ALLOWED), "add new packages to ALLOWED and docs/ARCHITECTURE.md"


def test_dependency_arrows_point_one_way() -> None:
    packages = set(project_packages())
    for package in packages:
        for imported, files in imports_of(package).items():
            if imported in ALLOWED and imported != package:
                assert imported in ALLOWED[package], f"{package} must not import {imported} ({sorted(files)})"


def test_no_python_package_shadows_the_standard_library_site_module() -> None:
    assert not (ROOT / "site" / "__init__.py").exists() and not (ROOT / "site.py").exists()


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    done = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def flow_names() -> set[str]:
    """The dotted names docs/ARCHITECTURE.md's four flows give: `package.module[.attribute...]`."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## The four main flows", 1)[1].split("\n## ", 1)[0]
    pattern = rf"(?<![\w/.-])(?:{'|'.join(ALLOWED)})(?:\.[A-Za-z_]\w*)+"
    return set(re.findall(pattern, section))


def test_architecture_draws_four_flows() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## The four main flows", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^### \d\. ", section, re.MULTILINE)) == 4


def test_every_module_the_flows_name_exists() -> None:
    names = flow_names()
    assert len(names) > 60, sorted(names)
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attribute in parts[cut:]:
                found = getattr(found, attribute, None)
            if found is None:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert not missing, f"docs/ARCHITECTURE.md's flows name what does not exist: {missing}"


def module_imports() -> dict[str, set[str]]:
    """Each project module and the project modules it imports, inside functions too (an import that runs later is
    still an arrow), but not under `if TYPE_CHECKING:`; `from package import module` is an arrow to the module."""
    paths = {}
    for package in project_packages():
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            paths[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        typing_only = {id(inner) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                       for inner in ast.walk(node)}
        arrows: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                arrows.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [f"{node.module}.{alias.name}" for alias in node.names]
                arrows.update(modules if all(m in paths for m in modules) else [node.module, *modules])
        graph[name] = {arrow for arrow in arrows if arrow in paths and arrow != name}
    return graph


def test_no_module_imports_itself_through_others() -> None:
    """No import circle, however long (scoring.items <-> scoring.results and sandbox's episode <-> session were two)."""
    graph = module_imports()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import circle: " + " -> ".join([*path[path.index(module):], module]))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
