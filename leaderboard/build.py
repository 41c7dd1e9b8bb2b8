"""Render the static leaderboard: site/templates/*.html.j2 and site/static/ into one folder for GitHub Pages.

The page lists every bundled environment (name, title, domain, instances, authors) and, where results exist, the
environments ranked by how much post-training on them improved the model on the held-out suite. Every value from a
package or a results file is text to Jinja with autoescaping on, so nothing in them becomes markup.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from leaderboard.results import Result, load_results
from taskpkg.discover import find_packages
from taskpkg.loader import load_package
from taskpkg.model import TaskPackage

CHECKOUT_SITE_DIR = Path(__file__).resolve().parent.parent / "site"  # beside the package in a source checkout
INDEX_TEMPLATE = "index.html.j2"


@dataclass(frozen=True)
class Ranked:
    """A results row joined with its environment's package, when the package is bundled."""

    rank: int
    result: Result
    package: TaskPackage | None


def points(value: float, signed: bool = False) -> str:
    """A score in [0, 1] as percentage points with one decimal; signed for improvements."""
    return f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"


def load_environments(environments_dir: Path) -> tuple[list[TaskPackage], list[str]]:
    """The packages that load, by name, and the folder names of those that do not."""
    packages, broken = [], []
    if environments_dir.is_dir():
        for path in find_packages([environments_dir]):
            loaded = load_package(path)
            if loaded.package is None:
                broken.append(path.name)
            else:
                packages.append(loaded.package)
    return sorted(packages, key=lambda p: p.name), sorted(broken)


def template_environment(site_dir: Path) -> Environment:
    """Jinja over site_dir/templates with autoescaping always on and undefined names as errors."""
    env = Environment(loader=FileSystemLoader(site_dir / "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["points"] = points
    return env


def default_site_dir() -> Path:
    """site/ of the source checkout this package runs from, else ./site (an installed package run from the repo)."""
    return CHECKOUT_SITE_DIR if (CHECKOUT_SITE_DIR / "templates").is_dir() else Path("site")


def build_site(environments_dir: Path, results_dir: Path | None, out: Path, site_dir: Path | None = None) -> Path:
    """Write out/index.html and out/static/; returns the index path. Raises leaderboard.results.ResultsError.

    site_dir holds templates/ and static/ (default: default_site_dir()).
    """
    site_dir = site_dir or default_site_dir()
    packages, broken = load_environments(environments_dir)
    by_name = {p.name: p for p in packages}
    ranked = [Ranked(i, r, by_name.get(r.environment)) for i, r in enumerate(load_results(results_dir), start=1)]
    html = template_environment(site_dir).get_template(INDEX_TEMPLATE).render(
        environments=packages, broken=broken, ranked=ranked)
    out.mkdir(parents=True, exist_ok=True)
    if (site_dir / "static").is_dir():
        shutil.copytree(site_dir / "static", out / "static", dirs_exist_ok=True)
    index = out / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
