"""Build packages for tests: a valid one made the way a contributor would (scaffold, then fill in), and edits."""

from __future__ import annotations

import re
from pathlib import Path

from taskpkg.scaffold import scaffold

FILLED_IN = {
    "# TODO(arena): a one-line title for the leaderboard": "",
    "Your Name  # TODO(arena): your name": "Grace Hopper",
    "your-github-handle  # TODO(arena): your GitHub handle, without the @": "ghopper",
    "  # TODO(arena): easy, medium or hard for a strong 8B model before training": "",
}


def fill_in(package: Path) -> None:
    """Resolve every TODO(arena) of a scaffolded package as a contributor would."""
    task = package / "task.md"
    text = task.read_text()
    for placeholder, value in FILLED_IN.items():
        text = text.replace(placeholder, value)
    text = re.sub(r"TODO\(arena\): replace this example prompt.*?\n\n", "", text, flags=re.DOTALL)
    task.write_text(text)
    for relative in ("environment/Dockerfile", "instance/generate.py", "verifier.py", "oracle/solve.sh"):
        path = package / relative
        lines = path.read_text().split("\n")
        kept = [line for line in lines if "TODO(arena)" not in line]
        path.write_text("\n".join(kept))


def make_valid_package(parent: Path, name: str = "sample-task", domain: str = "finance") -> Path:
    """A scaffolded, filled-in package that passes every static check."""
    package = scaffold(name, domain, parent)
    fill_in(package)
    return package


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a file, failing loudly if the text is not there (so a test cannot silently pass)."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def make_two_scene_package(parent: Path, name: str = "sample-task") -> Path:
    """A valid package whose prompt is spoken in two scenes by a scripted client (`ask`, then `more`)."""
    root = make_valid_package(parent, name)
    edit(root / "task.md", "verifier:\n",
         "roles:\n  - {name: agent, kind: agent}\n  - {name: client, kind: scripted}\n"
         "scenes:\n  - {name: ask, role: client, section: Request}\n"
         "  - {name: more, role: client, section: Follow-up}\nverifier:\n")
    (root / "task.md").write_text((root / "task.md").read_text() + "\n## Request\nFirst, please.\n\n## Follow-up\n"
                                  "And then this.\n")
    return root
