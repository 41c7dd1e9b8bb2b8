"""`arena new`: write a working example package whose every placeholder the static check points at."""

from __future__ import annotations

import re
import uuid
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from taskpkg.domains import DOMAINS

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
TEMPLATE = "scaffold_template"


class ScaffoldError(ValueError):
    """The package cannot be created as asked; the message says why and what to do."""


def scaffold(name: str, domain: str, into: Path) -> Path:
    """Create into/name from the template and return its path. Never overwrites anything."""
    if not (3 <= len(name) <= 48 and NAME_PATTERN.match(name)):
        raise ScaffoldError(f"'{name}' is not a valid package name: use 3-48 lowercase letters, digits and single "
                            "hyphens, starting with a letter (e.g. invoice-matching)")
    if domain not in DOMAINS:
        raise ScaffoldError(f"'{domain}' is not a domain; choose one of: {', '.join(DOMAINS)}")
    target = into / name
    if target.exists():
        raise ScaffoldError(f"{target} already exists; choose another name or remove it first")
    values = {"__ARENA_NAME__": name, "__ARENA_DOMAIN__": domain, "__ARENA_CANARY__": str(uuid.uuid4())}
    _copy(resources.files("taskpkg").joinpath(TEMPLATE), target, values)
    return target


def _copy(source: Traversable, target: Path, values: dict[str, str]) -> None:
    target.mkdir(parents=True)
    for entry in sorted(source.iterdir(), key=lambda e: e.name):
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            _copy(entry, target / entry.name, values)
            continue
        text = entry.read_text(encoding="utf-8")
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
        destination = target / entry.name
        destination.write_text(text, encoding="utf-8")
        if entry.name.endswith(".sh"):
            destination.chmod(0o755)
