"""GitHub Actions output: workflow-command annotations on the PR's lines, and a Markdown job summary."""

from __future__ import annotations

import os

from taskpkg.check_report import PackageReport, Report, TrialOutcome
from taskpkg.diagnostics import Diagnostic, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(package: PackageReport, diagnostic: Diagnostic) -> str:
    """One `::error file=…,line=…::message` line for a diagnostic."""
    properties = [f"title={escape_property(f'{diagnostic.check_id}: {diagnostic.message[:120]}')}"]
    if diagnostic.file and diagnostic.file != ".":
        properties.insert(0, f"file={escape_property(_repo_path(package.path, diagnostic.file))}")
        if diagnostic.line:
            properties.insert(1, f"line={diagnostic.line}")
            if diagnostic.column:
                properties.insert(2, f"col={diagnostic.column}")
    message = f"{diagnostic.message}. Fix: {diagnostic.fix}"
    return f"::{_COMMAND[diagnostic.severity]} {','.join(properties)}::{escape_data(message)}"


def _repo_path(package_path: str, file: str) -> str:
    return os.path.normpath(os.path.join(package_path, file)).replace(os.sep, "/")


def markdown_summary(report: Report, reproduce: str) -> str:
    """The job summary: a verdict line, one table row per package, then each failing package's findings."""
    lines = [f"## PostTrain Arena check: {'✅ pass' if report.passed else '❌ fail'}", "",
             "| package | domain | verdict | errors | warnings | time |", "|---|---|---|---|---|---|"]
    for p in report.packages:
        lines.append(f"| `{md_escape(p.name or p.path)}` | {md_escape(p.domain or '-')} | "
                     f"{'pass' if p.passed else 'fail'} | {p.count(Severity.ERROR)} | {p.count(Severity.WARNING)} | "
                     f"{p.duration_ms / 1000:.2f} s |")
    for p in report.packages:
        findings = [d for d in p.diagnostics if d.severity is not Severity.INFO]
        if findings or p.trials:
            lines += ["", f"### `{md_escape(p.name or p.path)}`"]
        if findings:
            lines += ["", "| | check | where | what | fix |", "|---|---|---|---|---|"]
            for d in findings:
                icon = "❌" if d.severity is Severity.ERROR else "⚠️"
                lines.append(f"| {icon} | {d.check_id} | `{md_escape(d.location())}` | {md_escape(d.message)} | "
                             f"{md_escape(d.fix)} |")
        if p.trials:
            lines += ["", _trials_table(p.trials)]
    lines += ["", f"Reproduce locally: `{reproduce}`", ""]
    return "\n".join(lines)


def _trials_table(trials: list[dict]) -> str:
    """Every sandbox trial, folded: check, agent, instance, outcome, reward and time."""
    ok = sum(t["outcome"] == TrialOutcome.OK for t in trials)
    rows = [f"<details><summary>{len(trials)} sandbox trials, {ok} as expected</summary>", "",
            "| check | agent | instance | outcome | reward | time |", "|---|---|---|---|---|---|"]
    for t in trials:
        reward = "-" if t["reward"] is None else f"{t['reward']:g}"
        instance = f"{t['instance']} (from {t['donor']})" if "donor" in t else t["instance"]
        rows.append(f"| {t['check_id']} | `{md_escape(t['agent'])}` | {instance} | {t['outcome']} | {reward} | "
                    f"{t['duration_s']:.1f} s |")
    return "\n".join([*rows, "", "</details>"])


def md_escape(text: str) -> str:
    """Make untrusted text inert inside a Markdown table cell: no HTML, mentions, pipes or line breaks."""
    out = text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    out = out.replace("@", "@\u200b").replace("`", "'").replace("\r", " ").replace("\n", " ")
    return out


def render_github(report: Report, reproduce: str) -> tuple[list[str], str]:
    """The annotation lines and the Markdown summary."""
    annotations = [annotation(p, d) for p in report.packages for d in p.diagnostics]
    return annotations, markdown_summary(report, reproduce)
