"""The training run manifest (`manifest.json`, taskpkg.layouts.MANIFEST_FILE) as one typed class that owns reading and
writing. It lives at the bottom layer because three layers meet at this file: training writes it, scoring reads what
it scores from it, and launch reads how the run ended (neither may import training). Its JSON Schema is
taskpkg/schema/training-manifest-v1.schema.json (tests/test_formats.py holds the class to it).

The run fills it in as it goes (the fields after `started_at`), so the class is not frozen; it is written once, last.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from taskpkg.atomic_files import write_json_atomic

MANIFEST_VERSION = 1


class RunStatus(StrEnum):
    """How a training run ended: its manifest's `status`."""

    COMPLETED = "completed"  # an adapter was written
    STOPPED = "stopped"  # early: the pre-flight refused, or a guard stopped the rollouts
    NO_EFFECTIVE_UPDATE = "no_effective_update"  # it trained, but nothing shows the policy moved: no adapter, unscored


_WRITTEN_WHEN_NULL = frozenset({"commit", "reason"})  # keys the run always writes, null included


@dataclass
class TrainingManifest:
    """Everything needed to reproduce a training run and to judge what it cost (docs/TRAINING.md)."""

    environment: str | None = None
    package_digest: str | None = None
    commit: str | None = None
    recipe: dict[str, Any] | None = None  # name, source, digest, overrides, data
    base_model: dict[str, Any] | None = None
    seeds: dict[str, Any] | None = None
    libraries: dict[str, str] | None = None
    hardware: dict[str, Any] | None = None
    started_at: str | None = None
    manifest_version: int = MANIFEST_VERSION
    image: str | None = None
    preflight: dict[str, Any] | None = None
    resumed_from_step: int | None = None
    steps: int | None = None
    trainer_summary: dict[str, Any] | None = None
    reward_curve: list[Any] | None = None
    update_evidence: dict[str, Any] | None = None
    adapter: dict[str, Any] | None = None
    in_domain: dict[str, Any] | None = None  # written (null included) whenever an adapter is
    finished_at: str | None = None
    wall_s: float | None = None
    gpus: int | None = None
    total_wall_s: float | None = None
    gpu_hours: float | None = None
    segments: int | None = None
    status: RunStatus | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The manifest as the file holds it: fields not reached are left out (commit and reason are written even
        when null, in_domain whenever an adapter is)."""
        written: dict[str, Any] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if value is not None or field.name in _WRITTEN_WHEN_NULL or (
                    field.name == "in_domain" and self.adapter is not None):
                written[field.name] = value
        return written

    def write(self, path: Path) -> None:
        """Write the manifest whole (sorted keys, atomically)."""
        write_json_atomic(path, self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: object) -> TrainingManifest:
        """The manifest in a parsed file; keys it does not know are ignored, missing ones are None. Raises
        ValueError when the file holds no JSON object."""
        if not isinstance(data, dict):
            raise ValueError("the manifest is not a JSON object")
        known = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        status = known.get("status")
        known["status"] = RunStatus(status) if status in set(RunStatus) else None
        return cls(**known)

    @classmethod
    def read(cls, path: Path) -> TrainingManifest | None:
        """The manifest at `path`, or None when it is missing or unreadable."""
        try:
            return cls.from_json(json.loads(path.read_text()))
        except (OSError, ValueError):
            return None

    def line(self, part: str) -> str | None:
        """The one-line summary of the pre-flight or the in-domain lift (`part`), when the run measured it."""
        block = self.preflight if part == "preflight" else self.in_domain
        line = (block or {}).get("line") if isinstance(block, dict) else None
        return line if isinstance(line, str) else None
