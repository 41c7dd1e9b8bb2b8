"""Episodes: set up one instance, let an agent act scene by scene, freeze the final state and verify it afresh."""

from __future__ import annotations

import contextlib
import io
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.agent_interface import Agent, EndScene, Observation, Shell, Transcript, TranscriptEntry, WriteFile
from sandbox.channel import Channel, ChannelClosed
from sandbox.cleanup import collect_garbage
from sandbox.containers import Tracker, start_container
from sandbox.engine import connect, labels, new_session_id
from sandbox.images import BuiltImage, ensure_image, image_tag
from sandbox.instances import SetupError, generate, provision_files, root_channel, scenes_for, write_as_root
from sandbox.layout import AGENT_USER, WORKSPACE
from sandbox.reward import VerifierError
from sandbox.storage import StorageWatch
from sandbox.verification import verify_snapshot
from taskpkg.model import TaskPackage

SNAPSHOT_REPOSITORY = "posttrain-arena/snapshot"


@dataclass
class EpisodeResult:
    """Everything about one episode. `outcome` is scored, verifier_error, setup_error, agent_error or limit_exceeded
    (the agent's files outgrew limits.storage_mb: stopped, not verified)."""

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


@dataclass(frozen=True)
class InitialState:
    """One instance as the agent first finds it, committed as an image. Episodes may start from it instead of running
    the generator again, and scoring it untouched is the do-nothing floor. Its owner hands it back with release()."""

    package: str
    instance: int
    image: str
    prompt_values: dict


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

    def run_episode(self, package: TaskPackage, instance: int, agent: Agent, *,
                    start_from: InitialState | None = None,
                    share_initial: Callable[[InitialState], None] | None = None) -> EpisodeResult:
        """One full episode of `agent` on instance `instance`.

        `start_from` skips the generator: the agent container starts from that committed instance. `share_initial`
        is called with this episode's instance committed right after setup (before the agent's files arrive), for
        other episodes to start from; the callee owns it and must release() it.
        """
        result = EpisodeResult(package.name, instance, agent.name, outcome="scored")
        started = time.perf_counter()
        tag = start_from.image if start_from else self.image(package).tag
        container = start_container(self.tracker, tag, package.limits, "agent", self.session, package.name)
        snapshot = None
        made = [container.id]
        try:
            try:
                scenes = self._set_up(container, package, instance, agent, result, start_from, share_initial)
            except SetupError as exc:
                result.outcome, result.error = "setup_error", str(exc)
                return result
            result.timings["setup_s"] = time.perf_counter() - started
            agent_started = time.perf_counter()
            with self._storage_watch(container, package) as watch:
                self._act(container, package, agent, scenes, result, watch)
            result.timings["agent_s"] = time.perf_counter() - agent_started
            if watch is not None and watch.check():
                result.limit_hit, result.outcome = "storage", "limit_exceeded"
                result.error = (f"the agent's files grew past limits.storage_mb ({package.limits.storage_mb} MiB) to "
                                f"{watch.exceeded_bytes // 2**20} MiB; the episode was stopped and not verified")
                return result
            container.kill()  # every process the agent left dies before its state is frozen
            snapshot = self._commit(container, package)
            verify_started = time.perf_counter()
            self._verify(snapshot, package, instance, result, made)
            result.timings["verify_s"] = time.perf_counter() - verify_started
            return result
        finally:
            self.tracker.discard(made, [snapshot] if snapshot else [])
            result.timings["total_s"] = time.perf_counter() - started

    def score_initial(self, package: TaskPackage, initial: InitialState, agent_name: str = "nop") -> EpisodeResult:
        """Verify an untouched instance: the episode of an agent that does nothing, without running one."""
        result = EpisodeResult(package.name, initial.instance, agent_name, outcome="scored",
                               prompt_values=initial.prompt_values)
        started = time.perf_counter()
        made: list[str] = []
        try:
            self._verify(initial.image, package, initial.instance, result, made)
            result.timings["verify_s"] = time.perf_counter() - started
            return result
        finally:
            self.tracker.discard(made, [])
            result.timings["total_s"] = time.perf_counter() - started

    def release(self, initial: InitialState) -> None:
        """Hand back a shared initial state (removed in the background, after the containers made before it)."""
        self.tracker.discard([], [initial.image])

    def make_instance(self, package: TaskPackage, instance: int, workspace: Path) -> dict:
        """Run the generator for one instance in a sandboxed container; copy its /workspace into `workspace`.

        Returns the prompt values. Raises SetupError when the generator fails.
        """
        container = start_container(self.tracker, self.image(package).tag, package.limits, "instance", self.session,
                                    package.name)
        try:
            with root_channel(self.client, container) as root:
                values = generate(root, package, instance)
            stream, _ = container.get_archive(WORKSPACE)
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                archive.extractall(workspace.parent, filter="data")
            return values
        finally:
            self.tracker.discard([container.id], [])

    def _set_up(self, container: Container, package: TaskPackage, instance: int, agent: Agent,
                result: EpisodeResult, start_from: InitialState | None,
                share_initial: Callable[[InitialState], None] | None) -> list:
        """Make the instance (or take it from `start_from`), share it if asked, then place the agent's files."""
        provisions = provision_files(agent.provision(package))
        if start_from is not None:
            result.prompt_values = start_from.prompt_values
            scenes = scenes_for(package, result.prompt_values)
            if provisions:
                write_as_root(self.client, container, provisions)
            return scenes
        with root_channel(self.client, container) as root:
            result.prompt_values = generate(root, package, instance)
            scenes = scenes_for(package, result.prompt_values)
            if share_initial is not None:
                share_initial(InitialState(package.name, instance, self._commit(container, package),
                                           result.prompt_values))
            for path, data in provisions:
                root.write_file(path, data)
        return scenes

    def _storage_watch(self, container: Container, package: TaskPackage) -> contextlib.AbstractContextManager:
        """A StorageWatch on the agent's container where the engine does not cap its storage (else nothing)."""
        if self.tracker.storage_opt_supported:
            return contextlib.nullcontext()
        return StorageWatch(self.client, container.id, package.limits.storage_mb * 2**20)

    def _act(self, container: Container, package: TaskPackage, agent: Agent, scenes: list,
             result: EpisodeResult, watch: StorageWatch | None) -> None:
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
                    if watch is not None and watch.exceeded_bytes is not None:
                        return  # the watch stopped the container
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
            channel.close()
            try:
                channel = Channel(self.client, container, AGENT_USER)
                error = f"the command channel was lost ({exc}); it has been reopened"
            except DockerException:  # the container itself is gone (the storage watch stopped it)
                error = f"the command channel was lost ({exc}) and the container has stopped"
        entry.error = error
        result.transcript.entries.append(entry)
        return channel, Observation(None, outcome, error, turns_left, deadline - time.monotonic())

    def _commit(self, container: Container, package: TaskPackage) -> str:
        """Commit the container's filesystem as a tracked snapshot image; returns its id."""
        image_id = self.client.api.commit(container.id, repository=SNAPSHOT_REPOSITORY,
                                          tag=f"{self.session}-{container.id[:12]}",
                                          conf={"Labels": labels("snapshot", self.session, package.name)})["Id"]
        self.tracker.add_image(image_id)
        return image_id

    def _verify(self, snapshot: str, package: TaskPackage, instance: int, result: EpisodeResult,
                made: list[str]) -> None:
        """Score the snapshot in a fresh container (sandbox.verification); its id joins `made`."""
        try:
            reward = verify_snapshot(self.tracker, self.session, snapshot, package, instance, made)
            result.reward, result.details = reward.value, reward.details
        except VerifierError as exc:
            result.outcome, result.error = "verifier_error", str(exc)


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
