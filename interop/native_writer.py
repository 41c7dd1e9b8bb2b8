"""Write a native package atomically: build it in a hidden folder beside the target, then rename it into place."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from interop.errors import InteropError
from interop.frontmatter import render

TASK_FILE = "task.md"


@contextmanager
def staging(out_dir: Path, name: str) -> Iterator[Path]:
    """A fresh folder that becomes out_dir/name when the block succeeds; nothing is left behind when it fails."""
    target = out_dir / name
    if target.exists():
        raise InteropError(str(target), "already exists", "Choose another --name or --out, or remove it first.")
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out_dir))
    try:
        yield folder
        folder.chmod(0o755)
        folder.rename(target)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def write_text(path: Path, text: str, executable: bool = False) -> None:
    """Write a UTF-8 file (creating folders)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def write_task(folder: Path, frontmatter: dict, comments: dict, body: str) -> None:
    """task.md: the frontmatter between `---` fences, then the body."""
    write_text(folder / TASK_FILE, f"---\n{render(frontmatter, comments)}---\n{body}")
