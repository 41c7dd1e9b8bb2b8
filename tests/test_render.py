"""Report renderers: GitHub annotations and the Markdown job summary, including sandbox trials."""

from __future__ import annotations

from taskpkg.check_report import PackageReport, Report
from taskpkg.rules.dynamic import ARENA702
from validators.render_github import annotation, markdown_summary


def _package(trials: list[dict], message: str = "bad") -> PackageReport:
    finding = ARENA702.found("oracle/solve.sh", 3, case="storage", agent="oracle", instance=0, problem=message)
    return PackageReport("environments/x", "x", "A title", "finance", 100, [finding], ["ARENA702"], 12.0, trials)


def test_summary_lists_findings_and_folds_trials() -> None:
    trials = [{"check_id": "ARENA702", "agent": "oracle", "instance": 7, "outcome": "failed", "reward": 0.0,
               "duration_s": 1.25}]
    text = markdown_summary(Report("full", [_package(trials)]), "arena check environments/x")
    assert "❌ fail" in text
    assert "| ❌ | ARENA702 | `oracle/solve.sh:3` | oracle on instance 0: bad | The oracle must" in text
    assert "<details><summary>1 sandbox trials, 0 as expected</summary>" in text
    assert "| ARENA702 | `oracle` | 7 | failed | 0 | 1.2 s |" in text


def test_untrusted_text_cannot_break_the_summary_or_annotations() -> None:
    hostile = "x | <img src=x onerror=alert(1)> @maintainers\n::error::forged"
    text = markdown_summary(Report("static", [_package([], hostile)]), "arena check environments/x")
    assert "<img" not in text and "@maintainers" not in text and "\n::error" not in text
    line = annotation(_package([], hostile), _package([], hostile).diagnostics[0])
    assert line.count("\n") == 0 and "%0A::error::forged" in line
    assert line.startswith("::error file=environments/x/oracle/solve.sh,line=3,title=ARENA702")


def test_verbose_terminal_view_names_every_instance_a_trial_used() -> None:
    from rich.console import Console

    from validators.render_human import render_human

    trials = [{"check_id": "ARENA702", "agent": "oracle", "instance": 3, "outcome": "ok", "reward": 1.0,
               "duration_s": 2.0},
              {"check_id": "ARENA714", "agent": "probe:replay", "instance": 3, "donor": 9, "outcome": "ok",
               "reward": 0.0, "duration_s": 0.5, "note": "the oracle's answer of instance 9"},
              {"check_id": "ARENA716", "agent": "probe:constant-answer", "instance": 3, "outcome": "skipped",
               "reward": None, "duration_s": 0.0, "note": "made from this instance", "summary": "constant: mean 0.00"}]
    console = Console(record=True, width=200)
    render_human(Report("full", [_package(trials)]), console, verbose=True)
    text = console.export_text()
    assert "3 trials in the sandbox: 2 as expected, 1 skipped (nothing to submit)" in text
    assert "instances used: 3, 9" in text
    assert "ARENA714 probe:replay on instance 3 (answer from instance 9): ok, reward 0.0" in text
    assert "constant: mean 0.00" in text
    assert "| ARENA714 | `probe:replay` | 3 (from 9) | ok |" in markdown_summary(Report("full", [_package(trials)]),
                                                                           "arena check x")
