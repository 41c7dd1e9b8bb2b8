"""Making an instance in a container: the generator runs as root, its output becomes the prompt's values, and an
agent's own files are placed under /arena/ before it starts."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import docker
from docker.models.containers import Container

from sandbox.channel import Channel, ChannelClosed, CommandResult
from sandbox.containers import folder_files
from sandbox.layout import INSTANCE_DIR, WORKSPACE
from taskpkg.body import MissingValue
from taskpkg.package import ScenePrompt, TaskPackage

MAX_PROMPT_VALUES = 64 * 1024
RESERVED = frozenset({"instance", "verifier", "output"})  # /arena/ folders an agent's files may not use


class SetupError(RuntimeError):
    """The instance could not be made (generator crash, bad output, missing prompt value)."""


class PromptValueMissing(SetupError):
    """The generator ran and printed its values, but not every value the prompt names."""


def generate(root: Channel, package: TaskPackage, instance: int) -> dict[str, Any]:
    """Run the generator as root for one instance, then delete it and give /workspace to the agent user.

    Returns the prompt values; raises SetupError when the generator fails.
    """
    generator = PurePosixPath(package.generator)
    source = package.root / generator
    if generator.parent.name:  # the generator's whole folder, so it can import its neighbours
        files = folder_files(source.parent, INSTANCE_DIR)
    else:
        files = folder_files(source, f"{INSTANCE_DIR}/{generator.name}")
    for path, data in files:
        root.write_file(path, data)
    made = root.run(f"mkdir -p {WORKSPACE} && cd {WORKSPACE} && exec python3 -I {INSTANCE_DIR}/{generator.name}",
                    package.limits.verifier_timeout_s, cwd="/",
                    env={"ARENA_INSTANCE": str(instance), "ARENA_WORKSPACE": WORKSPACE, "HOME": "/root"},
                    max_output=MAX_PROMPT_VALUES + 1)
    root.run(f"rm -rf {INSTANCE_DIR} && chown -R 1000:1000 {WORKSPACE}", 60, cwd="/")
    return _prompt_values(made)


def scenes_for(package: TaskPackage, values: dict[str, Any]) -> list[ScenePrompt]:
    """The scenes' prompts with the instance's values filled in."""
    try:
        return package.scene_prompts(values)
    except MissingValue:
        first = package.unfilled(values)[0]
        guess = f"; did you mean '{first.guess}'?" if first.guess else ""
        printed = ", ".join(map(str, values)) or "nothing"
        raise PromptValueMissing(f"task.md:{first.line} uses {{{{ instance.{first.key} }}}} but the generator did "
                                 f"not print '{first.key}' (it printed: {printed}){guess}") from None


def provision_files(files: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """An agent's files under /arena/, refusing paths that would touch the arena's own folders."""
    placed = []
    for path, content in sorted(files.items()):
        parts = PurePosixPath(path).parts
        if not parts or parts[0] in RESERVED or ".." in parts or path.startswith("/"):
            raise SetupError(f"an agent may not place files at /arena/{path}")
        placed.append((f"/arena/{path}", content))
    return placed


def own_folders(placed: list[tuple[str, bytes]]) -> tuple[str, ...]:
    """The folders under /arena that an agent's placed files make (/arena/oracle, say): removed when a container is
    put back for another agent."""
    return tuple(sorted({"/".join(path.split("/")[:3]) for path, _ in placed}))


@contextlib.contextmanager
def root_channel(client: docker.DockerClient, container: Container, keep: bool = False) -> Iterator[Channel]:
    """A channel to a root server for setup, closed afterwards (`keep`: left open for the caller when setup went
    well). A broken channel is a SetupError: the image could not run the arena's server (no python3 or sh), or setup
    killed it."""
    root = Channel(client, container, "0")
    try:
        yield root
    except ChannelClosed as exc:
        root.close()
        raise SetupError(f"the arena's command server stopped during setup ({exc}); the image must provide python3 "
                         "and sh (docs/SPEC.md, Runtime contract)") from None
    except BaseException:
        root.close()
        raise
    if not keep:
        root.close()


def _prompt_values(made: CommandResult) -> dict[str, Any]:
    """The generator's printed JSON object, or SetupError saying what was wrong with its run or output."""
    if made.timed_out:
        raise SetupError("the instance generator did not finish within limits.verifier_timeout_s")
    if made.exit_code != 0:
        raise SetupError(f"the instance generator exited with status {made.exit_code}: {made.stderr[-600:].strip()}")
    if made.truncated:
        raise SetupError(f"the instance generator printed more than {MAX_PROMPT_VALUES} bytes")
    try:
        values = json.loads(made.stdout or "null")
    except json.JSONDecodeError as exc:
        raise SetupError(f"the instance generator's output is not JSON ({exc}): {made.stdout[:120]!r}") from None
    if not isinstance(values, dict):
        raise SetupError("the instance generator must print one JSON object of prompt values")
    return values
