"""`arena explain`: a check's doc, examples and fix; `--list` every check; `--markdown` CONTRIBUTING.md's table.

Wiring only: the text comes from the rule registry (taskpkg.rules) and its renderer (taskpkg.rules.render).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from arena.exit_codes import EPILOG
from taskpkg.rules import RULES
from taskpkg.rules.render import explain_markdown, list_rows, normalise, replace_table, suggestions, table_markdown


@click.command(name="explain", epilog=EPILOG)
@click.argument("rule_id", required=False, metavar="ARENAxxx")
@click.option("--list", "list_all", is_flag=True, help="List every check: id, category, severity, title.")
@click.option("--markdown", is_flag=True, help="Print the Markdown table of every check (CONTRIBUTING.md's).")
@click.option("--write", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="With --markdown: update the table in this file (CONTRIBUTING.md) instead of printing it.")
def explain_command(rule_id: str | None, list_all: bool, markdown: bool, write: Path | None) -> None:
    """Explain a check: what ARENAxxx looks for and why, a failing and a passing example, and how to fix it."""
    if write is not None and not markdown:
        raise click.UsageError("--write goes with --markdown: `arena explain --markdown --write CONTRIBUTING.md`")
    if sum((rule_id is not None, list_all, markdown)) != 1:
        raise click.UsageError("name one check id (`arena explain ARENA702`), or use --list or --markdown")
    console = Console()
    if markdown:
        _markdown(write)
    elif list_all:
        _list(console)
    else:
        assert rule_id is not None
        _explain(rule_id, console)


def _explain(rule_id: str, console: Console) -> None:
    found = RULES.get(normalise(rule_id))
    if found is None:
        nearest = suggestions(rule_id)
        hint = f"did you mean {nearest[0]}? " if nearest else ""
        raise click.UsageError(f"no check has the id {rule_id!r}; {hint}`arena explain --list` lists them all")
    text = explain_markdown(found)
    if console.is_terminal:
        console.print(Markdown(text))
    else:
        click.echo(text)


def _list(console: Console) -> None:
    rows = list_rows()
    if not console.is_terminal:
        for rule_id, category, severity, title in rows:
            click.echo(f"{rule_id}  {category:<14}  {severity:<7}  {title}")
        return
    table = Table("id", "category", "severity", "check")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _markdown(write: Path | None) -> None:
    if write is None:
        click.echo(table_markdown())
        return
    before = write.read_text(encoding="utf-8")
    try:
        after = replace_table(before)
    except ValueError as exc:
        raise click.UsageError(f"{write}: {exc}") from None
    if after == before:
        click.echo(f"{write}: the rules table is up to date")
        return
    write.write_text(after, encoding="utf-8")
    click.echo(f"{write}: rules table updated")
