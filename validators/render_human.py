"""The terminal view of a report: grouped by package, errors first, each with its fix."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from taskpkg.check_report import PackageReport, Report, TrialOutcome
from taskpkg.diagnostics import Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def render_human(report: Report, console: Console, verbose: bool = False) -> None:
    """Print the report for a person at a terminal."""
    for package in report.packages:
        _render_package(package, console, verbose)
    summary = report.to_dict()["summary"]
    verdict = Text("PASS", style="bold green") if report.passed else Text("FAIL", style="bold red")
    console.print(Text.assemble(
        verdict, f"  {summary['passed']}/{summary['packages']} package(s) passed; {summary['errors']} error(s), "
        f"{summary['warnings']} warning(s) in {report.duration_s:.2f} s"))


def _render_package(package: PackageReport, console: Console, verbose: bool) -> None:
    mark = Text("✔ ", style="green") if package.passed else Text("✘ ", style="red")
    facts = ", ".join(x for x in (package.domain, f"{package.instances} instances" if package.instances else "") if x)
    console.print(Text.assemble(mark, (package.name or package.path, "bold"), f"  {facts}" if facts else "",
                                f"  ({package.path}, {package.duration_ms:.1f} ms)", style=None))
    shown = [d for d in package.diagnostics if verbose or d.severity is not Severity.INFO]
    if shown:
        table = Table(show_header=False, box=None, padding=(0, 1), expand=False)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column()
        for d in shown:
            table.add_row(Text(d.severity.value, style=_STYLE[d.severity]), d.check_id,
                          Text.assemble((d.location(), "bold"), "  ", d.message, "\n", ("fix: " + d.fix, "dim")))
        console.print(table)
    hidden = len(package.diagnostics) - len(shown)
    if hidden:
        console.print(Text(f"  {hidden} note(s) hidden; --verbose shows them", style="dim"))
    if package.trials:
        ok = sum(t["outcome"] == TrialOutcome.OK for t in package.trials)
        skipped = sum(t["outcome"] == TrialOutcome.SKIPPED for t in package.trials)
        reused = (f" (results of {package.dynamic_cached_at}: nothing changed since; --no-cache runs them again)"
                  if package.dynamic_cached_at else "")
        console.print(Text(f"  {len(package.trials)} trials in the sandbox: {ok} as expected"
                           f"{f', {skipped} skipped (nothing to submit)' if skipped else ''}{reused}", style="dim"))
        if verbose:
            used = sorted({t["instance"] for t in package.trials} | {t["donor"] for t in package.trials
                                                                      if "donor" in t})
            console.print(Text(f"  instances used: {', '.join(map(str, used))}", style="dim"))
    for trial in package.trials:
        expected = trial["outcome"] in (TrialOutcome.OK, TrialOutcome.SKIPPED)
        if verbose or not expected:
            console.print(Text(f"  {trial_line(trial)}", style="dim" if expected else "red"))
    summaries = {t["summary"] for t in package.trials if t.get("summary")}
    for summary in sorted(summaries) if verbose else ():
        console.print(Text(f"  {summary}", style="dim"))


def trial_line(trial: dict) -> str:
    """One trial in words: check, agent, the instance it ran on (and the one its answer came from), what it gave."""
    donor = f" (answer from instance {trial['donor']})" if "donor" in trial else ""
    note = f"; {trial['note']}" if trial.get("note") else ""
    return (f"{trial['check_id']} {trial['agent']} on instance {trial['instance']}{donor}: {trial['outcome']}, "
            f"reward {trial['reward']}, {trial['duration_s']:.1f} s{note}")
