"""A local package registry for tests of `arena import`'s pins: a PEP 503 simple index of minimal wheels on disk,
which pip itself reads (`PIP_INDEX_URL=file://...`, no configuration files), so pip's real resolver answers without a
network, `Requires-Python` included as PyPI states it (`data-requires-python`)."""

from __future__ import annotations

import html
import os
import re
import zipfile
from pathlib import Path

import pytest


class Wheelhouse:
    """A folder holding `files/` (the wheels) and `simple/` (the index pages pip reads)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.links: dict[str, list[str]] = {}
        (root / "files").mkdir(parents=True, exist_ok=True)
        (root / "simple").mkdir(parents=True, exist_ok=True)

    @property
    def index_url(self) -> str:
        """The index's URL for pip."""
        return (self.root / "simple").as_uri()

    def add(self, name: str, version: str, requires_python: str | None = None) -> Path:
        """A pure-Python wheel with nothing in it but its metadata, listed in the index."""
        dist = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
        wheel = self.root / "files" / f"{dist}-py3-none-any.whl"
        metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        metadata += f"Requires-Python: {requires_python}\n" if requires_python else ""
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"{dist}.dist-info/METADATA", metadata)
            archive.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: arena-tests\n"
                                                        "Root-Is-Purelib: true\nTag: py3-none-any\n")
            archive.writestr(f"{dist}.dist-info/RECORD", "")
        project = re.sub(r"[-_.]+", "-", name).lower()
        attribute = f' data-requires-python="{html.escape(requires_python)}"' if requires_python else ""
        self.links.setdefault(project, []).append(f'<a href="../../files/{wheel.name}"{attribute}>{wheel.name}</a>')
        page = self.root / "simple" / project / "index.html"
        page.parent.mkdir(exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "<br>\n".join(self.links[project]) + "\n</body></html>\n")
        return wheel


def use_wheelhouse(monkeypatch: pytest.MonkeyPatch, root: Path) -> Wheelhouse:
    """Point pip (in this process and its children) at a new local index under root as its only registry."""
    house = Wheelhouse(root)
    for variable in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_REQUIREMENT", "PIP_NO_INDEX"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", house.index_url)
    return house
