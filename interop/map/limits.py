"""The native `limits`: every one is required, so a limit the source lacks gets a documented default (reported)."""

from __future__ import annotations

import math

from interop.source_task import FORMAT_NAMES, SourceTask
from taskpkg.schema import task_schema

ORDER = ("build_timeout_s", "agent_timeout_s", "oracle_timeout_s", "verifier_timeout_s", "max_turns", "cpus",
         "memory_mb", "storage_mb", "pids")
# Used only when the source format itself documents no default (see interop/README.md).
ARENA_DEFAULTS: dict[str, float] = {
    "build_timeout_s": 600, "agent_timeout_s": 1800, "verifier_timeout_s": 600, "max_turns": 100, "cpus": 1,
    "memory_mb": 2048, "storage_mb": 10240, "pids": 256,
}
MIN_CPUS = 0.25


def _range(key: str) -> tuple[float, float]:
    """Inclusive bounds from the schema (cpus, exclusive of 0 there, gets a smallest useful share)."""
    spec = task_schema()["properties"]["limits"]["properties"][key]
    return spec.get("minimum", MIN_CPUS), spec["maximum"]


def _number(key: str, value: float) -> float:
    if key == "cpus":
        return int(value) if float(value).is_integer() else round(float(value), 3)
    return math.ceil(value)


def map_limits(source: SourceTask) -> tuple[dict[str, float], dict[str, str]]:
    """The nine native limits and, for each not taken from the source as is, a comment for task.md."""
    limits: dict[str, float] = {}
    comments: dict[str, str] = {}
    fmt = FORMAT_NAMES.get(source.fmt, source.fmt)
    for key in ORDER:
        if key in source.limits:
            value = _number(key, float(source.limits[key].value))
            low, high = _range(key)
            if not low <= value <= high:
                clamped = _number(key, min(max(value, low), high))
                source.lost(source.limits[key].where, f"{key} {value} is outside the arena's range "
                            f"[{low}, {high}]; set to {clamped}")
                comments[key] = f"source had {value}; outside the arena's range"
                value = clamped
            limits[key] = value
        elif key == "oracle_timeout_s":
            limits[key] = limits["agent_timeout_s"]
            source.mapped(source.config_file, f"{key} not in the source: set to agent_timeout_s "
                        f"({limits[key]}), the time {fmt}'s oracle gets")
            comments[key] = "not in the source: the agent's time"
        elif key in source.format_defaults:
            limits[key] = _number(key, source.format_defaults[key])
            source.mapped(source.config_file, f"{key} not in the source: {fmt}'s default {limits[key]} used")
            comments[key] = f"not in the source: {fmt}'s default"
        else:
            limits[key] = ARENA_DEFAULTS[key]
            source.mapped(source.config_file, f"{key} not in the source (the format has none): arena import's "
                        f"default {limits[key]} used")
            comments[key] = "not in the source: arena import's default"
    if limits["oracle_timeout_s"] > limits["agent_timeout_s"]:
        source.lost(source.limits["oracle_timeout_s"].where if "oracle_timeout_s" in source.limits
                    else source.config_file, f"oracle_timeout_s {limits['oracle_timeout_s']} exceeds "
                    f"agent_timeout_s; lowered to {limits['agent_timeout_s']}")
        limits["oracle_timeout_s"] = limits["agent_timeout_s"]
        comments["oracle_timeout_s"] = "lowered to agent_timeout_s"
    return limits, comments
