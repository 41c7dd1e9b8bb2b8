"""The arena's own state and faults: findings about a run, never about the package.

A finding here is never a contributor's failing check. An error among them still keeps a package from passing (its
checks did not complete), but `arena check` then exits with code 3, not 1, and says it is the arena's or the engine's
fault. Their examples are situations, each produced by the test named.
"""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import situation
from taskpkg.rules.rule import Category, Message, Rule, one

INFRASTRUCTURE, E, W = Category.INFRASTRUCTURE, Severity.ERROR, Severity.WARNING

ARENA700 = Rule(
    "ARENA700", INFRASTRUCTURE, W, "dynamic checks skipped",
    doc="The dynamic checks need a Docker engine and a package that passes the static checks. Without either they "
        "are skipped, and the run says so; CI always runs them.",
    advice="Install and start Docker, then run `arena check` again (CI always runs them).",
    messages={
        "no_engine": Message("no Docker engine answers, so build, oracle, isolation and tamper checks did not run",
                             "Start one (`scripts/ensure-engine` on Debian) and check again; CI runs them in any "
                             "case."),
        "static_errors": Message("dynamic checks skipped until the static errors above are fixed",
                                 "Fix the errors and check again."),
    },
    failing=situation("no Docker engine answers (`ARENA_NO_DOCKER=1 arena check`)",
                      "tests/test_cli.py::test_without_an_engine_dynamic_checks_are_skipped_or_required"),
    passing=situation("a Docker engine answers and the package passes the static checks",
                      "tests/test_check_run.py::test_full_check_runs_the_dynamic_checks"),
)

ARENA901 = Rule(
    "ARENA901", INFRASTRUCTURE, E, "the arena failed during a trial",
    doc="One of the arena's own scripted agents (the oracle runner, doing nothing, a tamper probe) failed: a bug of "
        "the arena, not of the package. The trial proves nothing either way, so the package cannot pass this run.",
    advice="Check again; if it persists, report it (see \"Appealing a verdict\" in CONTRIBUTING.md).",
    messages=one("the arena failed during the trial of {agent} on instance {instance}: {error}",
                 "This is the arena's fault, not your package's: check again, and report it if it persists."),
    failing=situation("a scripted agent of the arena raises an exception",
                      "tests/test_dynamic_checks.py::test_arena_fault_is_not_the_package_fault"),
    passing=situation("every trial runs as the arena meant it to",
                      "tests/test_dynamic_checks.py::test_valid_package_passes_every_dynamic_check"),
)
