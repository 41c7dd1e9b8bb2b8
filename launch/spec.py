"""The job description both backends run: which environment, at which commit, trained and scored how.

A job is named by its (environment, commit, attempt): the name is how a backend is asked whether the job already
exists, so that a repeated request never starts a second one.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields, replace

from taskpkg.scaffold import NAME_PATTERN

SPEC_VERSION = 1
COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
RECIPE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,63}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
PROFILES = ("smoke", "quick", "full")
MAX_CEILING_HOURS = 720.0  # no job may be allowed more than 30 days or 720 GPU-hours
SCORE_BACKENDS = ("local", "vllm")


class SpecError(ValueError):
    """A job description with a missing or malformed field; the message names it."""


@dataclass(frozen=True)
class JobSpec:
    """One training-and-scoring job. `arena_commit` is the arena's own (trusted, default-branch) commit the job
    runs; None means the checkout that launches it (the local backend)."""

    environment: str
    commit: str
    recipe: str
    profile: str = "quick"
    score_backend: str = "local"
    repository: str | None = None
    arena_commit: str | None = None
    pr: int | None = None
    requested_by: str = "local"
    steps: int | None = None
    skip_calibration: bool = False
    attempt: int = 1
    package_digest: str | None = None  # "sha256:<tree digest>" of the package that passed its checks
    author: str | None = None  # the pull request's author: the results credit them
    max_hours: float = 24.0  # the job's wall-clock ceiling, every segment counted
    max_gpu_hours: float = 24.0  # its GPU-hour ceiling
    suite_name: str | None = None  # the held-out suite the job must score on (name, version, content digest)
    suite_version: str | None = None
    suite_digest: str | None = None

    def __post_init__(self) -> None:
        problems = [
            ("environment", NAME_PATTERN.match(self.environment) and len(self.environment) <= 48),
            ("commit", COMMIT.match(self.commit)),
            ("recipe", RECIPE.match(self.recipe)),
            ("profile", self.profile in PROFILES),
            ("score_backend", self.score_backend in SCORE_BACKENDS),
            ("repository", self.repository is None or REPOSITORY.match(self.repository)),
            ("arena_commit", self.arena_commit is None or COMMIT.match(self.arena_commit)),
            ("pr", self.pr is None or (type(self.pr) is int and self.pr >= 1)),
            ("requested_by", isinstance(self.requested_by, str) and LOGIN.match(self.requested_by)),
            ("steps", self.steps is None or (type(self.steps) is int and self.steps >= 1)),
            ("skip_calibration", type(self.skip_calibration) is bool),
            ("attempt", type(self.attempt) is int and 1 <= self.attempt <= 99),
            ("package_digest", self.package_digest is None or (isinstance(self.package_digest, str)
                                                               and DIGEST.match(self.package_digest))),
            ("author", self.author is None or (isinstance(self.author, str) and LOGIN.match(self.author))),
            ("max_hours", _hours(self.max_hours)),
            ("max_gpu_hours", _hours(self.max_gpu_hours)),
            ("suite_name", self.suite_name is None or (isinstance(self.suite_name, str)
                                                       and SUITE_NAME.match(self.suite_name))),
            ("suite_version", self.suite_version is None or (isinstance(self.suite_version, str)
                                                             and SUITE_NAME.match(self.suite_version))),
            ("suite_digest", self.suite_digest is None or (isinstance(self.suite_digest, str)
                                                           and DIGEST.match(self.suite_digest))),
        ]
        wrong = [name for name, ok in problems if not ok]
        if wrong:
            raise SpecError(f"job description: {wrong[0]} is missing or malformed ({getattr(self, wrong[0])!r})")

    @property
    def credited(self) -> str:
        """Whom the results credit: the pull request's author, else whoever asked for the job."""
        return self.author or self.requested_by

    @property
    def name(self) -> str:
        """The backend's job name: stable for the (environment, commit, attempt), at most 63 characters."""
        suffix = f"-{self.commit[:12]}" + (f"-a{self.attempt}" if self.attempt > 1 else "")
        return f"arena-{self.environment[: 63 - len('arena-') - len(suffix)]}{suffix}"

    @property
    def artifact_path(self) -> str:
        """Where the job's artifacts live under the artifact root: one folder per (environment, commit, attempt),
        the same after a preemption, so a recovered job resumes from its checkpoints."""
        return f"{self.environment}/{self.commit}/attempt-{self.attempt}"

    def next_attempt(self) -> JobSpec:
        """The same job, asked for again after it failed or was cancelled."""
        return replace(self, attempt=self.attempt + 1)

    def to_json(self) -> str:
        return json.dumps({"spec_version": SPEC_VERSION, **asdict(self)}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> JobSpec:
        """A spec from its JSON; SpecError when anything is missing, extra or malformed."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SpecError(f"job description: not JSON ({exc})") from None
        if not isinstance(data, dict) or data.pop("spec_version", None) != SPEC_VERSION:
            raise SpecError(f"job description: not a version {SPEC_VERSION} job description")
        known = {f.name for f in fields(cls)}
        extra = sorted(set(data) - known)
        if extra:
            raise SpecError(f"job description: unknown field {extra[0]!r}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise SpecError(f"job description: {exc}") from None


def _hours(value: object) -> bool:
    return isinstance(value, int | float) and type(value) in (int, float) and 0 < value <= MAX_CEILING_HOURS
