"""`arena import`: read a foreign task → map it onto the native package → write the package, and report."""

from __future__ import annotations

from pathlib import Path

from interop.export import bundle
from interop.map import map_task
from interop.read import detect_format, read_source, task_root
from interop.source_task import HARBOR, NATIVE, ImportResult, InteropError
from interop.write.package import write_package


def import_task(src: Path, out_dir: Path, name: str | None = None, domain: str | None = None, *,
                github: str | None = None, license: str | None = None) -> ImportResult:
    """Detect SRC's format, write out_dir/NAME as a native package and report; raises InteropError."""
    root = task_root(Path(src))
    fmt = detect_format(root)
    if fmt == NATIVE:
        raise InteropError(str(root / "task.md"), "is already an arena package",
                           "Check it with `arena check`; it needs no import.")
    if fmt == HARBOR and bundle.is_arena_export(root):
        return bundle.restore(root, Path(out_dir), name)
    source = read_source(root, fmt)
    if fmt != HARBOR and (root / "task.toml").is_file():
        source.lost("task.toml", f"ignored: {source.config_file} was read instead")
    plan = map_task(source, name, domain, github, license)
    package = write_package(source, plan, Path(out_dir))
    return ImportResult(package, fmt, source.report)
