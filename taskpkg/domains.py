"""The arena's eight held-out domains. The schema's `domain` enum is the one place they are defined."""

from __future__ import annotations

from taskpkg.schema import task_schema

DOMAINS: tuple[str, ...] = tuple(task_schema()["properties"]["domain"]["enum"])
