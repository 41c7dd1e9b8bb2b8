"""The one exception interop raises: it names the file (and line where known), what is wrong and how to fix it."""

from __future__ import annotations


class InteropError(ValueError):
    """An import or export cannot proceed; `str()` reads `FILE:LINE: problem. Fix: ...`."""

    def __init__(self, file: str, problem: str, fix: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {problem}. Fix: {fix}")


class PackageHasErrors(InteropError):
    """The native package to export does not pass the loader; `arena check` shows every error."""
