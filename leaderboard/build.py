"""Render the static leaderboard site into one folder for GitHub Pages.

Pages (all links relative, so the site works under any path): `index.html` (the primary comparison group, paginated
past PAGE_SIZE rows at `page/<n>/`), `g/<group>/` (other groups), `e/<name>/` (one per environment), `status/`
(pending jobs, environments not yet scored), `methodology/`, `downloads/`; data files as leaderboard.downloads says.
Templates and assets are package data of `leaderboard` (templates/, static/), so an installed arena builds the site
from any folder. Every value from a package, record or job is text to Jinja with autoescaping on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from leaderboard import downloads, output, views
from leaderboard.catalog import Catalog, Group, load_catalog
from leaderboard.methodology import methodology_view
from leaderboard.task_html import task_html

PAGE_SIZE = 500
STATIC_FILES = ("style.css", "app.js", "favicon.svg", "social.png")
SITE_NAME = "PostTrain Arena"
NOT_FOUND = "404.html"


@dataclass(frozen=True)
class SiteOptions:
    """What the build is told besides its input folders."""

    repository: str | None = None  # owner/name on GitHub, for PR, commit and profile links
    base_url: str | None = None  # the published site's URL, for canonical and social-preview links


@dataclass
class BuildResult:
    """What a build did."""

    index: Path
    unchanged: bool
    stats: output.WriteStats
    warnings: list[str] = field(default_factory=list)
    environments: int = 0
    records: int = 0


@cache
def template_environment() -> Environment:
    """Jinja over the package's templates with autoescaping always on and undefined names as errors."""
    env = Environment(loader=PackageLoader("leaderboard", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["task_html"] = lambda body: Markup(task_html(body))  # markdown-it escapes raw HTML
    env.filters["tojson_attr"] = lambda value: json.dumps(value, separators=(",", ":"))
    return env


@cache
def generator_digest() -> str:
    """A digest of everything that shapes the output besides the inputs: this package's code, templates, assets and
    the versions of the libraries that render."""
    hasher = hashlib.sha256()
    package = resources.files("leaderboard")
    for folder in ("", "templates", "static", "schema"):
        base = package.joinpath(folder) if folder else package
        for entry in sorted(base.iterdir(), key=lambda e: e.name):
            if entry.is_file() and not entry.name.endswith(".pyc"):
                hasher.update(f"{folder}/{entry.name}\0".encode() + entry.read_bytes())
    for library in ("Jinja2", "markdown-it-py", "posttrain-arena"):
        hasher.update(f"{library}={metadata.version(library)}\0".encode())
    return hasher.hexdigest()


def inputs_digest(dirs: tuple[Path | None, ...], options: SiteOptions) -> str:
    """Every input's digest: results, jobs and reports by content, packages by task.md and their file listing."""
    salt = f"{generator_digest()}\0{options.repository}\0{options.base_url}"
    return output.tree_digest(dirs, salt, contents=lambda p: p.suffix == ".json" or p.name == "task.md")


def _page_path(base: str, number: int) -> str:
    return f"{base}index.html" if number == 1 else f"{base}page/{number}/index.html"


def _root(path: str) -> str:
    return "../" * path.count("/")


class SiteRenderer:
    """Turns a catalog into the site's files through a SiteWriter."""

    def __init__(self, catalog: Catalog, options: SiteOptions, writer: output.Writer) -> None:
        self.catalog, self.options, self.writer = catalog, options, writer
        self.links = views.Links(options.repository)
        self.salt = generator_digest()

    def render(self, path: str, template: str, view: dict) -> None:
        """One page from a template and its view; skipped when the view is unchanged since the last build."""
        root = _root(path)
        if path == NOT_FOUND and self.options.base_url:
            root = self.options.base_url.rstrip("/") + "/"  # Pages serves it at any missing path, at any depth
        canonical = f"{self.options.base_url.rstrip('/')}/{path.removesuffix('index.html')}" if (
            self.options.base_url) else None
        social = f"{self.options.base_url.rstrip('/')}/static/social.png" if self.options.base_url else (
            f"{root}static/social.png")
        context = {**view, "root": root, "canonical": canonical, "social_image": social, "site_name": SITE_NAME}

        def produce() -> bytes:
            return template_environment().get_template(template).render(context).encode("utf-8")

        self.writer.page(path, [template, context], produce, self.salt)

    def group_pages(self, group: Group, base: str, others: list[dict]) -> None:
        """A group's table, PAGE_SIZE rows a page."""
        rows = views.group_rows(group, self.catalog, self.links)
        unranked = views.unranked_rows(group, self.catalog, self.links)
        count = max(1, -(-len(rows) // PAGE_SIZE))
        urls = [_page_path(base, n).removesuffix("index.html") for n in range(1, count + 1)]
        verdicts = sorted({r["verdict"] for r in rows})
        domains = sorted({r["domain"] for r in rows if r["domain"]})
        for number in range(1, count + 1):
            self.render(_page_path(base, number), "index.html.j2", {
                "group": {"label": group.label, "slug": group.slug, "entries": len(rows) + len(unranked),
                          "ranked": len(rows)},
                "unranked": unranked if number == 1 else [],
                "rows": rows[(number - 1) * PAGE_SIZE: number * PAGE_SIZE], "page": number, "pages": count,
                "page_urls": urls, "columns": views.domain_columns(), "verdicts": [
                    {"value": v, "label": views.verdict_label(v)} for v in verdicts], "domains": domains,
                "others": others, "primary": base == "", "unscored": len(self.catalog.unscored()),
                "pending": sum(1 for j in self.catalog.jobs if j.active)})

    def pages(self) -> None:
        """Every page and data file of the site."""
        catalog = self.catalog
        others = [{"label": g.label, "href": f"g/{g.slug}/", "entries": len(g.everyone)} for g in catalog.groups[1:]]
        if catalog.primary is None:
            self.render("index.html", "index.html.j2", {
                "group": None, "rows": [], "unranked": [], "page": 1, "pages": 1, "page_urls": [""], "columns": [],
                "verdicts": [], "domains": [], "others": [], "primary": True,
                "unscored": len(catalog.unscored()), "pending": sum(1 for j in catalog.jobs if j.active)})
        else:
            self.group_pages(catalog.primary, "", others)
        for group in catalog.groups[1:]:
            self.group_pages(group, f"g/{group.slug}/", [])
        for name in catalog.environment_names():
            view = views.environment_view(name, catalog, self.links)
            self.render(f"e/{name}/index.html", "environment.html.j2", view)
            data = downloads.environment_json(name, catalog)
            self.writer.page(f"e/{name}/results.json", data, lambda data=data: downloads.to_json(data), self.salt)
        self.render("status/index.html", "status.html.j2", {
            "jobs": [views.job_view(j, self.links) for j in catalog.jobs if j.active],
            "finished_jobs": [views.job_view(j, self.links) for j in catalog.jobs if not j.active][:200],
            "unscored": [views.package_view(p) | {"body": ""} for p in catalog.unscored()],
            "broken": catalog.broken})
        self.render("methodology/index.html", "methodology.html.j2", methodology_view(catalog))
        history = downloads.history_snapshots(catalog)
        self.render("downloads/index.html", "downloads.html.j2", {
            "history": sorted(history), "environments": len(catalog.environment_names())})
        self.render(NOT_FOUND, "not_found.html.j2", {})
        self.writer.put("leaderboard.json", downloads.leaderboard_json(catalog))
        self.writer.put("leaderboard.csv", downloads.leaderboard_csv(catalog))
        for version, data in history.items():
            self.writer.put(f"history/{version}.json", data)
        self.writer.put(downloads.SCHEMA_PATH, downloads.leaderboard_schema_text().encode("utf-8"))
        for name in STATIC_FILES:
            self.writer.put(f"static/{name}", resources.files("leaderboard").joinpath("static", name).read_bytes())


def _say(progress: Callable[[str], None] | None, message: str) -> None:
    if progress is not None:
        progress(message)


def build_site(environments_dir: Path | None, results_dir: Path | None, out: Path, *, jobs_dir: Path | None = None,
               reports_dir: Path | None = None, options: SiteOptions | None = None,
               progress: Callable[[str], None] | None = None) -> BuildResult:
    """Build (or bring up to date) the site in out. Raises scoring.results.ResultsError for a bad results record."""
    options = options or SiteOptions()
    inputs = inputs_digest((results_dir, environments_dir, jobs_dir, reports_dir), options)
    previous = output.read_manifest(out)
    if output.unchanged_build(out, previous, inputs):
        stats = output.WriteStats(skipped=len(previous["files"]), files=previous["files"])
        _say(progress, f"unchanged since the last build: {stats.total} files kept")
        return BuildResult(out / "index.html", True, stats)
    _say(progress, "reading environments, results, jobs and reports")
    catalog = load_catalog(environments_dir, results_dir, jobs_dir, reports_dir,
                           progress=lambda line: _say(progress, line))
    records = sum(len(e) for e in catalog.entries.values())
    stats = render_site(catalog, out, inputs, options, previous)
    _say(progress, f"{stats.written} files written, {stats.skipped + stats.unchanged} unchanged, "
                   f"{stats.removed} removed")
    return BuildResult(out / "index.html", False, stats, catalog.warnings, len(catalog.environment_names()), records)


def render_site(catalog: Catalog, out: Path, inputs: str, options: SiteOptions, previous: dict) -> output.WriteStats:
    """Write the catalog's site into out, skipping what the previous manifest shows unchanged."""
    out.mkdir(parents=True, exist_ok=True)
    writer = output.SiteWriter(out, previous)
    SiteRenderer(catalog, options, writer).pages()
    return writer.finish(inputs)
