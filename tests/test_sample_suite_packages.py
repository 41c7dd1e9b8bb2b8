"""The public sample suite (suites/sample/packages/): eight real packages, one per domain, each passing every check.

Per package and a few seeds, on the host: the oracle's answer scores 1.0; the same answer with one record changed or
dropped scores less (and, where the package gives partial credit, more than 0); another instance's workspace, inputs
and correct answer together, scores 0.0. Static checks are clean and the dynamic checks pass on the real engine. The
properties every package shares (doing nothing, hostile output files, a deterministic and distinct generator, filled
placeholders) run from test_environment_properties.py, which covers these packages too.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sandbox.sandbox import Sandbox
from taskpkg.diagnostics import Severity
from taskpkg.domains import DOMAINS
from taskpkg.loader import load_package
from tests.support.host_episode import frontmatter, generate, solved, variant, verify
from validators.dynamic import run_dynamic_checks
from validators.static import run_static_checks

pytestmark = pytest.mark.slow  # every sample package run on the host over several instances

SAMPLE = Path(__file__).resolve().parent.parent / "suites" / "sample" / "packages"
PACKAGES = sorted(p for p in SAMPLE.iterdir() if (p / "task.md").is_file())
SEEDS = (4, 531, 998)

Edit = Callable[[Path], None]


@dataclass(frozen=True)
class Sample:
    """What the tests know of a sample package: its domain, whether it gives partial credit, and two near misses of
    the oracle's answer, one record dropped and one record changed."""

    domain: str
    partial_credit: bool
    dropped: Edit
    changed: Edit


def reward(package: Path, seed: int, workspace: Path) -> float:
    """The verifier's reward in [0, 1]; a verifier error or a malformed reward file fails the test."""
    episode = verify(package, seed, workspace)
    assert episode.reward is not None, f"verifier error: {episode.verifier_stderr[-2000:]}"
    assert set(episode.reward) <= {"reward", "details"}, episode.reward
    value = episode.reward["reward"]
    assert isinstance(value, float) and 0.0 <= value <= 1.0, episode.reward
    assert len(json.dumps(episode.reward.get("details", {}))) < 64 * 1024
    return value


def read_csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def write_csv(path: Path, rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def drop_csv_row(name: str) -> Edit:
    """Drop the last data row of a CSV answer."""

    def edit(workspace: Path) -> None:
        rows = read_csv(workspace / name)
        assert len(rows) >= 2, f"the oracle's {name} has no data row"
        write_csv(workspace / name, rows[:-1])

    return edit


def change_csv_cell(name: str, column: str, change: Callable[[str], str]) -> Edit:
    """Change one cell (in the first data row) of a CSV answer."""

    def edit(workspace: Path) -> None:
        rows = read_csv(workspace / name)
        col = rows[0].index(column)
        before = rows[1][col]
        rows[1][col] = change(before)
        assert rows[1][col] != before
        write_csv(workspace / name, rows)

    return edit


def change_json(name: str, change: Callable[[Any], None]) -> Edit:
    """Change a JSON answer in place with `change` (which must change something)."""

    def edit(workspace: Path) -> None:
        data = json.loads((workspace / name).read_text(encoding="utf-8"))
        before = json.dumps(data)
        change(data)
        assert json.dumps(data) != before
        (workspace / name).write_text(json.dumps(data), encoding="utf-8")

    return edit


def pallet_on_an_extra_truck(workspace: Path) -> None:
    """Move one pallet of the busiest truck onto a truck of its own."""
    rows = read_csv(workspace / "loading_plan.csv")
    trucks = [row[1] for row in rows[1:]]
    busiest = max(set(trucks), key=trucks.count)
    rows[1 + trucks.index(busiest)][1] = "EXTRA"
    write_csv(workspace / "loading_plan.csv", rows)


def plus_cent(amount: str) -> str:
    return f"{float(amount) + 0.01:.2f}"


def other_flag(flag: str) -> str:
    return {"L": "LL", "LL": "L", "H": "HH", "HH": "H"}[flag]


def other_decision(decision: str) -> str:
    return {"APPROVE": "DENY", "DENY": "APPROVE"}[decision]


def other_queue(queue: str) -> str:
    return "billing" if queue == "general" else "general"


def two_percent_more(value: str) -> str:
    return f"{float(value) * 1.02 + 0.05:.4f}"


SAMPLES: dict[str, Sample] = {
    "receivables-aging": Sample("finance", True, drop_csv_row("aging_report.csv"),
                                change_csv_cell("aging_report.csv", "total", plus_cent)),
    "lab-result-flags": Sample("healthcare", True, drop_csv_row("flags.csv"),
                               change_csv_cell("flags.csv", "flag", other_flag)),
    "permit-eligibility": Sample("law-government", True, drop_csv_row("decisions.csv"),
                                 change_csv_cell("decisions.csv", "decision", other_decision)),
    "expense-consolidation": Sample("office-documents", True, drop_csv_row("reimbursement.csv"),
                                    change_csv_cell("reimbursement.csv", "amount_usd", plus_cent)),
    "ticket-routing": Sample("customer-operations", True, drop_csv_row("routing.csv"),
                             change_csv_cell("routing.csv", "queue", other_queue)),
    "beam-reactions": Sample("science-engineering", True, drop_csv_row("results.csv"),
                             change_csv_cell("results.csv", "max_abs_moment_knm", two_percent_more)),
    "firewall-audit": Sample("cybersecurity-it", True, change_json("audit.json", lambda d: d["verdicts"].pop()),
                             change_json("audit.json", lambda d: d["shadowed_rules"].pop())),
    "cargo-loading": Sample("math-planning", False, drop_csv_row("loading_plan.csv"), pallet_on_an_extra_truck),
}


def test_one_package_per_domain() -> None:
    assert {p.name for p in PACKAGES} == set(SAMPLES)
    for package in PACKAGES:
        meta = frontmatter(package)
        assert meta["domain"] == SAMPLES[package.name].domain and meta["name"] == package.name
        assert meta["instances"]["count"] >= 500
    domains = [s.domain for s in SAMPLES.values()]
    assert len(domains) == len(DOMAINS) == 8 and set(domains) == set(DOMAINS)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_static_check_passes_without_warnings(package: Path) -> None:
    report = run_static_checks(package)
    assert report.passed and report.count(Severity.WARNING) == 0, [d.to_dict() for d in report.diagnostics]
    assert report.instances and report.instances >= 500


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_oracle_scores_one_and_a_near_miss_less(package: Path, seed: int, tmp_path: Path) -> None:
    sample = SAMPLES[package.name]
    workspace = solved(package, seed, tmp_path)
    assert reward(package, seed, workspace) == 1.0
    dropped = variant(workspace, tmp_path, "dropped")
    sample.dropped(dropped)
    score = reward(package, seed, dropped)
    assert (0.0 < score < 1.0) if sample.partial_credit else score < 1.0, score
    changed = variant(workspace, tmp_path, "changed")
    sample.changed(changed)
    assert reward(package, seed, changed) < 1.0


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_another_instances_workspace_and_answer_score_zero(package: Path, tmp_path: Path) -> None:
    """The verifier rebuilds the truth from ARENA_INSTANCE: inputs rewritten to match an answer do not fool it."""
    seed, other = SEEDS[0], SEEDS[0] + 1
    there = solved(package, other, tmp_path / "there")
    assert reward(package, other, there) == 1.0
    here = variant(there, tmp_path, "here")
    assert generate(package, seed, tmp_path / "fresh") != generate(package, other, tmp_path / "fresh-other")
    assert reward(package, seed, here) == 0.0


# Measured with eight instances: flagging every flow DROP by the policy rule earns firewall-audit about 0.3 of the
# reward (ARENA716, a warning the package passes with); every other package's constant answer earns under 0.05.
CONSTANT_ANSWER_WARNED = {"firewall-audit": {"ARENA716"}}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_dynamic_checks_pass_on_the_real_engine(engine: object, package: Path) -> None:
    loaded = load_package(package).package
    assert loaded is not None
    with Sandbox(engine) as sandbox:
        result = run_dynamic_checks(loaded, sandbox, instances=2)
    assert [d.to_dict() for d in result.diagnostics if d.severity.value == "error"] == []
    warned = {d.check_id for d in result.diagnostics if d.severity.value == "warning"}
    assert warned <= CONSTANT_ANSWER_WARNED.get(package.name, set()), [d.message for d in result.diagnostics]
    assert all(t["outcome"] in ("ok", "skipped") for t in result.trials)
