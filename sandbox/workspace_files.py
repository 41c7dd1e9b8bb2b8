"""A container's /workspace as files in memory, and back: what the answer probes of the dynamic checks read from the
oracle's episodes and place into a frozen state before verifying it."""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass

from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.layout import WORKSPACE

MAX_WORKSPACE_BYTES = 16 * 2**20  # a larger workspace is not kept: the probes that need it are skipped
AGENT_UID = 1000


@dataclass(frozen=True)
class WorkspaceFile:
    """One regular file of the workspace: its bytes and permission bits."""

    data: bytes
    mode: int = 0o644


def read_workspace(container: Container) -> dict[str, WorkspaceFile] | None:
    """Every regular file under /workspace (path relative to it), or None when the archive is too large or cannot be
    read. Works on a stopped container as on a running one."""
    try:
        stream, stat = container.get_archive(WORKSPACE)
        if stat.get("size", 0) > MAX_WORKSPACE_BYTES:
            return None
        raw = bytearray()
        for chunk in stream:
            raw += chunk
            if len(raw) > 2 * MAX_WORKSPACE_BYTES:  # headers and padding aside, the files are too large
                return None
    except DockerException:
        return None
    files: dict[str, WorkspaceFile] = {}
    with tarfile.open(fileobj=io.BytesIO(raw)) as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                relative = member.name.split("/", 1)[1] if "/" in member.name else ""
                if relative:
                    files[relative] = WorkspaceFile(handle.read(), member.mode & 0o777)
    return files


def workspace_archive(files: dict[str, WorkspaceFile]) -> bytes:
    """A tar archive that, extracted at /, writes `files` into /workspace owned by the agent user."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        folders = sorted({"/".join(path.split("/")[:depth]) for path in files
                          for depth in range(1, path.count("/") + 1)})
        for folder in folders:
            info = tarfile.TarInfo(f"{WORKSPACE.lstrip('/')}/{folder}")
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, AGENT_UID, AGENT_UID
            archive.addfile(info)
        for path, file in sorted(files.items()):
            info = tarfile.TarInfo(f"{WORKSPACE.lstrip('/')}/{path}")
            info.size, info.mode, info.uid, info.gid = len(file.data), file.mode, AGENT_UID, AGENT_UID
            archive.addfile(info, io.BytesIO(file.data))
    return buffer.getvalue()
