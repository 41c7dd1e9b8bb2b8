"""A package taken out of git byte for byte: every blob of `environments/<name>/` at a commit, written as git stores
it. No `git archive` (it obeys `export-subst` and `export-ignore` from the tree's own `.gitattributes`) and no
checkout (it applies `eol`, `text` and `filter`): nothing of the package decides what its files become.

    arena jobs extract --repository DIR --commit SHA --environment NAME --out DIR
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

MODES = {"100644": 0o644, "100755": 0o755}
LINK_MODE = "120000"


class ExtractError(RuntimeError):
    """The package could not be taken out of git; the message says what."""


def _git(repository: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repository), *args], input=data, capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ExtractError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise ExtractError(f"git {' '.join(args[:2])} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
    return done.stdout


def extract(repository: Path, commit: str, environment: str, out: Path) -> Path:
    """Write `environments/<environment>/` at `commit` under out (as out/environments/<environment>); returns the
    package folder. Refuses submodules and paths that would leave the folder."""
    prefix = f"environments/{environment}"
    listing = _git(repository, "ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix).split(b"\0")
    entries = []
    for line in filter(None, listing):
        meta, _, raw_path = line.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = raw_path.decode("utf-8", errors="surrogateescape")
        if kind != "blob" or (mode not in MODES and mode != LINK_MODE):
            raise ExtractError(f"{path}: a {kind} (mode {mode}) is not a package file")
        if ".." in PurePosixPath(path).parts or not path.startswith(prefix + "/"):
            raise ExtractError(f"{path}: outside {prefix}")
        entries.append((mode, sha, path))
    if not entries:
        raise ExtractError(f"{prefix} has no files at {commit[:12]}")
    blobs = _blobs(repository, [sha for _, sha, _ in entries])
    for mode, sha, path in entries:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == LINK_MODE:
            os.symlink(blobs[sha].decode("utf-8", errors="surrogateescape"), target)
        else:
            target.write_bytes(blobs[sha])
            target.chmod(MODES[mode])
    return out / prefix


def _blobs(repository: Path, shas: list[str]) -> dict[str, bytes]:
    """Each blob's bytes, read in one `git cat-file --batch`."""
    unique = list(dict.fromkeys(shas))
    raw = _git(repository, "cat-file", "--batch", data="".join(f"{sha}\n" for sha in unique).encode())
    found, at = {}, 0
    for sha in unique:
        header_end = raw.index(b"\n", at)
        name, kind, size = raw[at:header_end].decode().split()
        if kind != "blob" or name != sha:
            raise ExtractError(f"git cat-file returned {kind} {name} for {sha}")
        start = header_end + 1
        found[sha] = raw[start:start + int(size)]
        at = start + int(size) + 1
    return found
