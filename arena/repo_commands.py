"""Commands the repository's GitHub workflows run: `arena changed` and `arena site build`, and the launcher that
`arena bot` hands an accepted `/arena train` to the commands workflow's launch job with.

Wiring only: the logic lives in taskpkg.changes, leaderboard and bot.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from arena.exit_codes import EPILOG, ExitCode
from taskpkg.changes import GitError, changes_between


@click.command(name="changed", epilog=EPILOG)
@click.option("--base", required=True, help="The commit the change starts from (a PR's base SHA).")
@click.option("--head", default="HEAD", show_default=True, help="The commit the change ends at.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The git repository.")
@click.option("--format", "output_format", type=click.Choice(("lines", "json")), default="lines", show_default=True,
              help="lines: one package folder per line; json: packages, paths outside them, and single_package.")
def changed_command(base: str, head: str, repo: Path, output_format: str) -> None:
    """Print the package folders (environments/NAME) changed since the merge base of BASE and HEAD.

    Packages the change deletes are left out of the lines (JSON lists them under "removed"); REPO must be checked
    out at HEAD.

    File names come from `git diff -z`, so names with spaces, newlines or shell syntax are safe; a path in no legal
    package folder is listed under "outside" in the JSON form, never as a package.
    """
    try:
        changes = changes_between(base, head, repo)
    except GitError as exc:
        click.echo(f"arena: {exc}", err=True)
        sys.exit(ExitCode.ENVIRONMENT)
    present = [path for path in changes.package_paths if (repo / path).is_dir()]
    if output_format == "json":
        removed = [path for path in changes.package_paths if path not in present]
        click.echo(json.dumps({**changes.to_dict(), "packages": present, "removed": removed}, indent=2))
    else:
        for path in present:  # a package the change deletes has nothing left to check
            click.echo(path)


@click.group(name="site")
def site_group() -> None:
    """The static leaderboard site."""


@site_group.command(name="build", epilog=EPILOG)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write (brought up to date: unchanged pages are not rewritten).")
@click.option("--environments", "environments_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("environments"), show_default=True, help="Folder of environment packages.")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"),
              show_default=True, help="Results records: results/<environment>/<run_id>.json (may be absent).")
@click.option("--jobs", "jobs_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Job states: <jobs>/<environment>/<commit>.json, for the pending list.")
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="`arena check --format json` reports (*.json), for the validation summaries.")
@click.option("--repository", envvar="GITHUB_REPOSITORY", default=None,
              help="owner/name on GitHub, for PR, commit and profile links (default: $GITHUB_REPOSITORY).")
@click.option("--base-url", default=None, help="The published site's URL, for canonical and social-preview links.")
def site_build(out: Path, environments_dir: Path, results_dir: Path, jobs_dir: Path | None, reports_dir: Path | None,
               repository: str | None, base_url: str | None) -> None:
    """Render the leaderboard site into OUT: ranks with intervals, a page per environment, data downloads."""
    from leaderboard import SiteOptions, build_site
    from scoring.results import ResultsError

    try:
        built = build_site(environments_dir, results_dir, out, jobs_dir=jobs_dir, reports_dir=reports_dir,
                           options=SiteOptions(repository=repository, base_url=base_url),
                           progress=lambda line: click.echo(f"site: {line}", err=True))
    except ResultsError as exc:
        raise click.ClickException(str(exc)) from None
    for warning in built.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"Wrote {built.index}")
