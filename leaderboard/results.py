"""Held-out results as the leaderboard reads them: `results/<environment>.json`, schema `results-v1`.

One file per post-trained environment, written by scoring:

    {"results_version": 1, "environment": "ledger-reconciliation", "commit": "<40 hex>", "model": "Qwen/Qwen3-8B",
     "evaluated_at": "2026-11-30", "domains": {"finance": {"base": 0.41, "trained": 0.47}, ...}}

`domains` maps each held-out domain evaluated to the base model's and the trained model's mean score in [0, 1]. An
environment's improvement is the mean over those domains of trained minus base, so every domain weighs the same.
The JSON Schema is `leaderboard/schema/results-v1.schema.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from taskpkg.domains import DOMAINS

RESULTS_VERSION = 1
MAX_BYTES = 1024 * 1024


class ResultsError(Exception):
    """A results file cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class DomainScore:
    """One held-out domain's mean scores."""

    domain: str
    base: float
    trained: float

    @property
    def improvement(self) -> float:
        """Trained minus base."""
        return self.trained - self.base


@dataclass(frozen=True)
class Result:
    """One environment's held-out evaluation."""

    environment: str
    model: str
    evaluated_at: str
    commit: str | None
    domains: tuple[DomainScore, ...]

    @property
    def base(self) -> float:
        """The base model's mean over the domains."""
        return sum(d.base for d in self.domains) / len(self.domains)

    @property
    def trained(self) -> float:
        """The trained model's mean over the domains."""
        return sum(d.trained for d in self.domains) / len(self.domains)

    @property
    def improvement(self) -> float:
        """The environment's score: mean improvement over the domains."""
        return self.trained - self.base


@cache
def results_schema() -> dict:
    """The JSON Schema of a results file."""
    text = resources.files("leaderboard").joinpath("schema/results-v1.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def parse_result(data: object, source: str) -> Result:
    """A Result from a results file's JSON; raises ResultsError naming source."""
    error = best_match(Draft202012Validator(results_schema()).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ResultsError(f"{source}: {where}: {error.message}")
    assert isinstance(data, dict)
    unknown = sorted(set(data["domains"]) - set(DOMAINS))
    if unknown:
        raise ResultsError(f"{source}: domains: not arena domains: {', '.join(unknown)} (one of {', '.join(DOMAINS)})")
    scores = tuple(DomainScore(name, float(s["base"]), float(s["trained"]))
                   for name, s in sorted(data["domains"].items()))
    return Result(environment=data["environment"], model=data["model"], evaluated_at=data["evaluated_at"],
                  commit=data.get("commit"), domains=scores)


def load_results(results_dir: Path | None) -> list[Result]:
    """Every results/<environment>.json, best improvement first; [] when the folder is absent. Raises ResultsError."""
    if results_dir is None or not results_dir.is_dir():
        return []
    results = []
    for path in sorted(results_dir.glob("*.json")):
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_BYTES:
            raise ResultsError(f"{path}: not a regular file of at most {MAX_BYTES} bytes")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultsError(f"{path}: not UTF-8 JSON: {exc}") from None
        result = parse_result(data, str(path))
        if result.environment != path.stem:
            raise ResultsError(f"{path}: environment is {result.environment!r} but the file is named {path.name}")
        results.append(result)
    return sorted(results, key=lambda r: (-r.improvement, r.environment))
