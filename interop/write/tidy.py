"""The import's Python through the repository's lint fixes: what `arena import` copies or writes gets ruff's safe
fixes and formatter with the repository's settings (as `arena fix` gives them); what is left becomes a to-do at its
line, which the static check reports at the same place (ARENA008 an error, ARENA010 a warning)."""

from __future__ import annotations

from pathlib import Path

from interop.files import relative_to, walk_files
from interop.source_task import SourceTask
from taskpkg.python_lint import LintUnavailable, fix, is_linted


def tidy_python(source: SourceTask, folder: Path) -> None:
    """Fix and format the package's linted Python files in place; report what changed and what is left. A file with
    an identical copy in environment/ is left byte for byte: the copy is a shared input or library, or a leak, and
    either way the check must still see that the two are one file."""
    image = {path.read_bytes() for path in walk_files(folder / "environment", folder)} \
        if (folder / "environment").is_dir() else set()
    files = {str(path.resolve()): relative_to(path, folder) for path in walk_files(folder, folder)
             if is_linted(relative_to(path, folder)) and path.read_bytes() not in image}
    before = {path: Path(path).read_bytes() for path in files}
    try:
        left = fix(list(files))
    except LintUnavailable as exc:
        source.todo("(Python files)", f"not fixed or formatted: {exc}; run `arena fix` on the package later")
        return
    changed = sorted(files[path] for path in files if Path(path).read_bytes() != before[path])
    if changed:
        source.mapped(", ".join(changed), "ruff's safe fixes and formatter applied with the repository's settings "
                      "(what `arena fix` does)")
    for item in left:
        relative = files.get(item.filename) or files.get(str(Path(item.filename).resolve()))
        if relative is None:
            continue
        kind = ("not valid Python" if item.syntax else "an error (ARENA008)" if item.correctness else
                "house style, a warning (ARENA010)")
        source.todo(f"{relative}:{item.line}", f"ruff {item.code or 'syntax'}: {item.message}: {kind} that no "
                    "automatic fix removes; change it by hand" + ("" if item.correctness else " if you agree"))
