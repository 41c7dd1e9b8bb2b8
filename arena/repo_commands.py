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
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Folder to write.")
@click.option("--environments", "environments_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("environments"), show_default=True, help="Folder of environment packages.")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"),
              show_default=True, help="Folder of results/<environment>.json files (may be absent).")
@click.option("--site-dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Templates and static files (default: the checkout's site/, else ./site).")
def site_build(out: Path, environments_dir: Path, results_dir: Path, site_dir: Path | None) -> None:
    """Render the leaderboard (environments and their held-out results) into OUT/index.html."""
    from leaderboard import ResultsError, build_site

    try:
        index = build_site(environments_dir, results_dir, out, site_dir)
    except ResultsError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Wrote {index}")
