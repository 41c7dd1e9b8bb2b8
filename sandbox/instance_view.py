"""What an agent starts with on one instance: the rendered prompt, scene by scene, and the files in /workspace, made
in the sandbox exactly as an episode makes them (`arena show`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.instances import scenes_for
from sandbox.sandbox import Sandbox
from taskpkg.package import ScenePrompt, TaskPackage


@dataclass(frozen=True)
class WorkspaceFile:
    """A file the agent finds: its path under /workspace, its size, and its permission bits."""

    path: str
    size: int
    mode: int


@dataclass(frozen=True)
class InstanceView:
    """One instance as the agent first sees it; `folder` holds a copy of its /workspace."""

    package: str
    instance: int
    values: dict[str, Any]
    prompts: list[ScenePrompt]
    files: list[WorkspaceFile]
    folder: Path

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"package": self.package, "instance": self.instance, "prompt_values": self.values,
                "scenes": [{"scene": p.scene, "speaker": p.speaker, "text": p.text} for p in self.prompts],
                "files": [{"path": f.path, "size": f.size, "mode": f"{f.mode:o}"} for f in self.files],
                "folder": str(self.folder)}


def view_instance(sandbox: Sandbox, package: TaskPackage, instance: int, into: Path) -> InstanceView:
    """Make the instance in the sandbox and copy its /workspace to `into` (a new or empty folder). Raises
    SetupError (the generator failed, or the prompt names a value it did not print) and FileExistsError."""
    if into.exists() and any(into.iterdir()):
        raise FileExistsError(f"{into} is not empty; name a new folder")
    with tempfile.TemporaryDirectory(prefix="arena-show-") as staging:
        values = sandbox.make_instance(package, instance, Path(staging) / "workspace")
        prompts = scenes_for(package, values)
        into.mkdir(parents=True, exist_ok=True)
        for entry in (Path(staging) / "workspace").iterdir():
            shutil.move(str(entry), into / entry.name)
    files = []
    for folder, _, names in os.walk(into):
        for name in names:
            path = Path(folder) / name
            info = path.lstat()
            files.append(WorkspaceFile(path.relative_to(into).as_posix(), info.st_size, info.st_mode & 0o7777))
    return InstanceView(package.name, instance, values, prompts, sorted(files, key=lambda f: f.path), into)
