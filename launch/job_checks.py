"""What a job checks before it spends anything: the package is the one that passed its checks, and the suite is the
one it was told to score on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from launch.spec import JobSpec
from taskpkg.digest import package_digest


class CheckFailed(Exception):
    """The job must not start; `exit_code` says whose fault (2 the job description, 3 the machine)."""

    def __init__(self, reason: str, exit_code: int) -> None:
        super().__init__(reason)
        self.reason, self.exit_code = reason, exit_code


def check_package(spec: JobSpec, environment: Path) -> None:
    """Refuse a package whose files differ from the ones that passed (the verdict's digest)."""
    if spec.package_digest is None:
        return
    found = package_digest(environment)
    if found != spec.package_digest:
        raise CheckFailed(f"the package at {environment} is not the one that passed its checks: its digest is "
                          f"{found}, the verdict's {spec.package_digest}; nothing was trained", 2)


def check_suite(spec: JobSpec, suite: str) -> None:
    """Refuse a suite whose content digest (`arena suite digest`) is not the one the job was given."""
    if spec.suite_digest is None:
        return
    try:
        done = subprocess.run([sys.executable, "-m", "arena", "suite", "digest", "--suite", suite],
                              capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckFailed(f"could not compute the suite's digest: {exc}", 3) from None
    found = done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else ""
    if not found.startswith("sha256:"):
        raise CheckFailed(f"`arena suite digest --suite {suite}` failed (exit {done.returncode}); this arena cannot "
                          "check the suite it would score on", 3)
    if found != spec.suite_digest:
        raise CheckFailed(f"the suite at {suite} is not the one this job was given: its digest is {found}, the "
                          f"job's {spec.suite_digest}", 2)
