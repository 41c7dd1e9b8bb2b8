"""Which verifier-data files the agent's image may hold too: shared inputs, not leaked answers (docs/SPEC.md, "What
is a leak").

verifier.py, the oracle and the generator (with its folder) are hidden, always. A file of the verifier data is hidden
as well, unless an identical copy is part of environment/ (the author gives it to the agent on purpose) and it is
- an input the prompt names by its file name: the file the agent is given and the verifier re-reads, or
- part of a public library vendored in both places with its licence: a folder of the verifier data whose licence
  file (LICENSE, LICENCE, COPYING, NOTICE) is identical to the one in the folder holding the image's copy.
Any other identical copy (an answer key, a solution, generated expectations) is a leak.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

from taskpkg.package import TaskPackage

LICENCE_FILE = re.compile(r"^(?:LICEN[CS]E|COPYING|NOTICE)(?:[.-][\w.-]+)?$", re.IGNORECASE)
ENVIRONMENT = "environment"


def shared_data_files(package: TaskPackage) -> dict[str, str]:
    """Package-relative verifier-data files with an identical copy in environment/ that are shared, and why."""
    environment = _digests(package.root, ENVIRONMENT)
    if not environment:
        return {}
    by_digest: dict[str, str] = {}
    for relative, digest in environment.items():
        by_digest.setdefault(digest, relative)
    shared = {}
    for data in (d.rstrip("/") for d in package.verifier_data):
        for relative, digest in _digests(package.root, data).items():
            copy = by_digest.get(digest)
            why = shared_reason(package, relative, copy) if copy else None
            if why:
                shared[relative] = why
    return shared


def shared_reason(package: TaskPackage, data_file: str, image_copy: str) -> str | None:
    """Why data_file (in verifier data) with its identical copy image_copy (under environment/) is no leak, or None."""
    always_hidden = ("verifier.py", "oracle", package.generator, PurePosixPath(package.generator).parent.as_posix())
    if any(_under(data_file, hidden) for hidden in always_hidden if hidden not in ("", ".")):
        return None
    name = PurePosixPath(data_file).name
    if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", package.body):
        return f"an input the prompt names ({name})"
    roots = [d.rstrip("/") for d in package.verifier_data if _under(data_file, d.rstrip("/"))]
    folder, image_folder = PurePosixPath(data_file).parent, PurePosixPath(image_copy).parent
    while roots and _under(folder.as_posix(), roots[0]) and _under(image_folder.as_posix(), ENVIRONMENT):
        licence = _same_licence(package.root, folder, image_folder)
        if licence:
            return f"part of a library shipped with its licence ({licence})"
        if folder.as_posix() == roots[0] or image_folder.as_posix() == ENVIRONMENT:
            break
        folder, image_folder = folder.parent, image_folder.parent
    return None


def _same_licence(root: Path, folder: PurePosixPath, image_folder: PurePosixPath) -> str | None:
    """The licence file both folders hold with identical content, as a package-relative path, or None."""
    here = root / folder
    for path in sorted(here.iterdir()) if here.is_dir() else []:
        other = root / image_folder / path.name
        if LICENCE_FILE.match(path.name) and path.is_file() and not path.is_symlink() and other.is_file() \
                and not other.is_symlink() and path.read_bytes() == other.read_bytes():
            return (folder / path.name).as_posix()
    return None


def _digests(root: Path, relative: str) -> dict[str, str]:
    """SHA-256 of every regular file under root/relative (links not followed), by package-relative path."""
    top = root / relative
    paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
    found = {}
    for path in paths:
        if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _under(relative: str, folder: str) -> bool:
    return relative == folder or relative.startswith(folder + "/")
