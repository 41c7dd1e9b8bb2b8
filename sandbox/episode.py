"""Episodes: set up one instance, let an agent act scene by scene, freeze the final state and verify it afresh."""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import docker
import requests
from docker.errors import DockerException, NotFound
from docker.models.containers import Container

from sandbox.agent_interface import Agent, EndScene, Observation, Shell, Transcript, TranscriptEntry, WriteFile
from sandbox.channel import DEFAULT_PATH, Channel, ChannelClosed, CommandResult
from sandbox.cleanup import collect_garbage
from sandbox.containers import Tracker, create_container, folder_entries, server_entries, start_container, tar_of
from sandbox.engine import connect, labels, new_session_id
from sandbox.images import BuiltImage, ensure_image, image_tag
from sandbox.reward import MAX_REWARD_BYTES, VerifierError, parse_reward
from taskpkg.body import MissingValue
from taskpkg.model import TaskPackage

WORKSPACE = "/workspace"
AGENT_USER = "1000:1000"
OUTPUT = "/arena/output/reward.json"
VERIFIER = "/arena/verifier/verifier.py"
MAX_PROMPT_VALUES = 64 * 1024
SNAPSHOT_REPOSITORY = "posttrain-arena/snapshot"
RESERVED = frozenset({"shell", "instance", "verifier", "output"})


@dataclass
class EpisodeResult:
    """Everything about one episode. `outcome` is scored, verifier_error, setup_error or agent_error."""

    package: str
    instance: int
    agent: str
    outcome: str
    reward: float | None = None
    details: dict | None = None
    error: str | None = None
    limit_hit: str | None = None
    prompt_values: dict = field(default_factory=dict)
    transcript: Transcript = field(default_factory=Transcript)
    timings: dict[str, float] = field(default_factory=dict)
    peak_memory_mb: float | None = None


class SetupError(RuntimeError):
    """The instance could not be made (generator crash, bad output, missing prompt value)."""


class Sandbox:
    """Runs episodes on one engine; every container and snapshot it makes is removed on every exit path."""

    def __init__(self, client: docker.DockerClient | None = None, session: str | None = None) -> None:
        self.client = client or connect()
        self.session = session or new_session_id()
        self.tracker = Tracker(self.client)
        self._images: dict[str, BuiltImage] = {}
        self._tags: dict[int, tuple[TaskPackage, str]] = {}  # by identity: equal packages may differ on disk

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove everything this sandbox still holds, then sweep by its session label for anything a race left."""
        self.tracker.remove_all()
        collect_garbage(self.client, include_images=False, session=self.session)

    def image(self, package: TaskPackage) -> BuiltImage:
        """The package's image, found by the content hash of its build context, built only when new."""
        known = self._tags.get(id(package))
        if known is None or known[0] is not package:  # hash the context once per loaded package, not per episode
            known = self._tags[id(package)] = (package, image_tag(package))
        tag = known[1]
        if tag not in self._images:
            self._images[tag] = ensure_image(self.client, package, self.session, tag)
        return self._images[tag]

    def run_episode(self, package: TaskPackage, instance: int, agent: Agent) -> EpisodeResult:
        """One full episode of `agent` on instance `instance`."""
        result = EpisodeResult(package.name, instance, agent.name, outcome="scored")
        started = time.perf_counter()
        tag = self.image(package).tag
        container = start_container(self.tracker, tag, package.limits, "agent", self.session, package.name)
        snapshot = None
        made = [container.id]
        try:
            try:
                scenes = self._set_up(container, package, instance, agent, result)
            except SetupError as exc:
                result.outcome, result.error = "setup_error", str(exc)
                return result
            result.timings["setup_s"] = time.perf_counter() - started
            agent_started = time.perf_counter()
            self._act(container, package, agent, scenes, result)
            result.timings["agent_s"] = time.perf_counter() - agent_started
            snapshot = self._freeze(container, package)
            verify_started = time.perf_counter()
            self._verify(snapshot, package, instance, result, made)
            result.timings["verify_s"] = time.perf_counter() - verify_started
            return result
        finally:
            self.tracker.discard(made, [snapshot] if snapshot else [])
            result.timings["total_s"] = time.perf_counter() - started

    def make_instance(self, package: TaskPackage, instance: int, workspace: Path) -> dict:
        """Run the generator for one instance in a sandboxed container; copy its /workspace into `workspace`.

        Returns the prompt values. Raises SetupError when the generator fails.
        """
        container = start_container(self.tracker, self.image(package).tag, package.limits, "instance", self.session,
                                    package.name)
        try:
            result = EpisodeResult(package.name, instance, "instance", outcome="scored")
            self._set_up(container, package, instance, _NoAgent(), result)
            stream, _ = container.get_archive(WORKSPACE)
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                archive.extractall(workspace.parent, filter="data")
            return result.prompt_values
        finally:
            self.tracker.discard([container.id], [])

    def _set_up(self, container: Container, package: TaskPackage, instance: int, agent: Agent,
                result: EpisodeResult) -> list:
        generator = PurePosixPath(package.generator)
        entries = server_entries() + _generator_entries(package) + _provision_entries(agent.provision(package))
        container.put_archive("/", tar_of([(WORKSPACE.lstrip("/"), None, 0o755), *entries]))
        root = Channel(self.client, container, "0")
        try:
            made = root.run(f"python3 -I /arena/instance/{generator.name}", package.limits.verifier_timeout_s,
                            env={"ARENA_INSTANCE": str(instance), "ARENA_WORKSPACE": WORKSPACE, "HOME": "/root"},
                            max_output=MAX_PROMPT_VALUES + 1)
            root.run(f"rm -rf /arena/instance /arena/verifier /arena/output && chown -R 1000:1000 {WORKSPACE}", 60)
        finally:
            root.close()
        result.prompt_values = _prompt_values(made)
        try:
            return package.scene_prompts(result.prompt_values)
        except MissingValue as exc:
            raise SetupError(f"the prompt uses {{{{ instance.{exc.args[0]} }}}} but the generator did not print "
                             f"'{exc.args[0]}'") from None

    def _act(self, container: Container, package: TaskPackage, agent: Agent, scenes: list,
             result: EpisodeResult) -> None:
        deadline = time.monotonic() + package.limits.agent_timeout_s
        turns_left = package.limits.max_turns
        channel = Channel(self.client, container, AGENT_USER)
        try:
            for scene in scenes:
                scene_turns = scene.max_turns or turns_left
                observation = Observation(scene, None, None, min(turns_left, scene_turns),
                                          deadline - time.monotonic())
                while True:
                    if turns_left <= 0 or scene_turns <= 0:
                        result.limit_hit = result.limit_hit or ("turns" if turns_left <= 0 else None)
                        break
                    if time.monotonic() >= deadline:
                        result.limit_hit = "time"
                        return
                    try:
                        action = agent.act(observation)
                    except Exception as exc:
                        result.outcome, result.error = "agent_error", f"the agent {agent.name} failed: {exc}"
                        return
                    if isinstance(action, EndScene):
                        break
                    turns_left -= 1
                    scene_turns -= 1
                    channel, observation = self._perform(container, channel, scene.scene, action, deadline,
                                                         turns_left, result)
                if turns_left <= 0:
                    result.limit_hit = result.limit_hit or "turns"
                    return
        finally:
            result.peak_memory_mb = _peak_memory_mb(channel)
            channel.close()

    def _perform(self, container: Container, channel: Channel, scene: str, action: Shell | WriteFile,
                 deadline: float, turns_left: int, result: EpisodeResult) -> tuple[Channel, Observation]:
        entry = TranscriptEntry(scene, {"type": type(action).__name__, **action.__dict__})
        outcome = error = None
        try:
            if isinstance(action, Shell):
                outcome = channel.run(action.command, max(0.1, min(action.timeout_s, deadline - time.monotonic())))
                entry.result = outcome.to_dict()
            else:
                path = action.path if action.path.startswith("/") else f"{WORKSPACE}/{action.path}"
                channel.write_file(path, action.content.encode())
                entry.result = {"written": path}
        except ChannelClosed as exc:
            error = f"the command channel was lost ({exc}); it has been reopened"
            channel.close()
            channel = Channel(self.client, container, AGENT_USER)
        entry.error = error
        result.transcript.entries.append(entry)
        return channel, Observation(None, outcome, error, turns_left, deadline - time.monotonic())

    def _freeze(self, container: Container, package: TaskPackage) -> str:
        """Kill every process of the agent's container and commit its filesystem."""
        container.kill()
        image = container.commit(repository=SNAPSHOT_REPOSITORY, tag=f"{self.session}-{container.id[:12]}",
                                 conf={"Labels": labels("snapshot", self.session, package.name)})
        self.tracker.add_image(image.id)
        return image.id

    def _verify(self, snapshot: str, package: TaskPackage, instance: int, result: EpisodeResult,
                made: list[str]) -> None:
        """Score the snapshot in a fresh container whose only process is the verifier (added before it starts).

        Its id joins `made` for removal with the episode's other containers.
        """
        environment = {"ARENA_INSTANCE": str(instance), "ARENA_WORKSPACE": WORKSPACE, "ARENA_OUTPUT": OUTPUT,
                       "HOME": "/root", "PATH": DEFAULT_PATH}
        container = create_container(self.tracker, snapshot, package.limits, "verifier", self.session, package.name,
                                     entrypoint=["python3", "-I", VERIFIER], environment=environment,
                                     working_dir="/arena/verifier")
        made.append(container.id)
        entries = [("arena", None, 0o755), ("arena/output", None, 0o755), ("arena/verifier", None, 0o755),
                   (VERIFIER.lstrip("/"), package.verifier_file.read_bytes(), 0o644)]
        for data in package.verifier_data:
            entries += folder_entries(package.root / data, f"arena/verifier/{data.rstrip('/')}")
        container.put_archive("/", tar_of(entries))
        container.start()
        exit_code, timed_out = _wait(container, package.limits.verifier_timeout_s)
        stderr = container.logs(stdout=False, stderr=True, tail=40).decode("utf-8", "replace")
        try:
            reward = parse_reward(_read_file(container, OUTPUT, MAX_REWARD_BYTES + 1), exit_code, timed_out, stderr)
            result.reward, result.details = reward.value, reward.details
        except VerifierError as exc:
            result.outcome, result.error = "verifier_error", str(exc)


def _wait(container: Container, timeout_s: float) -> tuple[int | None, bool]:
    """The container's exit status, or (None, True) after killing it at the deadline."""
    try:
        return int(container.wait(timeout=timeout_s)["StatusCode"]), False
    except (requests.exceptions.ConnectionError, requests.exceptions.ReadTimeout):
        with contextlib.suppress(DockerException):
            container.kill()
        return None, True


def _read_file(container: Container, path: str, max_bytes: int) -> bytes | None:
    """Up to max_bytes of a regular file in a stopped container, or None when there is none (a link counts as none)."""
    try:
        stream, stat = container.get_archive(path)
    except NotFound:
        return None
    if stat.get("size", 0) >= max_bytes:
        return b"\0" * max_bytes  # too large to read: the reward contract reports the size
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
        member = next((m for m in archive.getmembers() if m.isfile()), None)
        handle = archive.extractfile(member) if member else None
        return handle.read(max_bytes) if handle else None


class _NoAgent:
    """No agent: only the instance is made."""

    name = "instance"

    def provision(self, package: TaskPackage) -> dict[str, bytes]:
        return {}

    def act(self, observation: object) -> EndScene:
        return EndScene()


def _provision_entries(files: dict[str, bytes]) -> list[tuple[str, bytes | None, int]]:
    """Tar entries for an agent's files under /arena/, refusing paths that would touch the arena's own folders."""
    entries: dict[str, tuple[str, bytes | None, int]] = {}
    for path, content in sorted(files.items()):
        parts = PurePosixPath(path).parts
        if not parts or parts[0] in RESERVED or ".." in parts or path.startswith("/"):
            raise SetupError(f"an agent may not place files at /arena/{path}")
        for depth in range(1, len(parts)):
            folder = "arena/" + "/".join(parts[:depth])
            entries.setdefault(folder, (folder, None, 0o755))
        entries[path] = (f"arena/{path}", content, 0o644)
    return list(entries.values())


def _generator_entries(package: TaskPackage) -> list[tuple[str, bytes | None, int]]:
    """The generator's folder (or the generator alone, when it sits at the package root) as /arena/instance."""
    generator = PurePosixPath(package.generator)
    if generator.parent.name:
        return folder_entries(package.root / generator.parent, "arena/instance")
    return [("arena/instance", None, 0o755),
            (f"arena/instance/{generator.name}", (package.root / generator).read_bytes(), 0o644)]


def _prompt_values(made: CommandResult) -> dict:
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


def _peak_memory_mb(channel: Channel) -> float | None:
    """The container's peak memory so far, read from its own cgroup (v1, else v2's memory.peak); None if unknown."""
    for path in ("/sys/fs/cgroup/memory/memory.max_usage_in_bytes", "/sys/fs/cgroup/memory.peak"):
        try:
            raw = channel.read_file(path, 64)
        except ChannelClosed:
            return None
        if raw and raw.strip().isdigit():
            return round(int(raw) / 2**20, 1)
    return None
