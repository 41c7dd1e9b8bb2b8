"""One episode, step by step: the runtime contract every driver shares.

An `EpisodeSession` owns one agent container. `start()` makes the instance (or starts from a committed initial
state), `step(action)` applies one action and returns the observation, and `finish()` freezes the final state and
verifies it in a fresh container. Validation's pull loop (`Sandbox.run_episode`), training's push-style environments
and held-out scoring all drive episodes through this class, so limits, transcripts and verification are identical.

Limits are enforced here: each Shell or WriteFile costs one turn of `limits.max_turns` (and of the scene's own
`max_turns`), and no action runs after `limits.agent_timeout_s`. Every container and snapshot the session makes is
handed back on every path (`finish()`, `close()`, an exception, the sandbox's own close).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.agent_interface import Action, EndScene, InvalidAction, Observation, Shell, TranscriptEntry, WriteFile
from sandbox.batch_verification import BatchFailed, ContainerVerifier
from sandbox.channel import Channel, ChannelClosed
from sandbox.containers import start_container
from sandbox.instances import (
    PromptValueMissing,
    SetupError,
    generate,
    own_folders,
    provision_files,
    root_channel,
    scenes_for,
)
from sandbox.layout import AGENT_USER, WORKSPACE
from sandbox.outcomes import EpisodeOutcome, EpisodeResult, InitialState, LimitHit
from sandbox.storage import StorageWatch
from sandbox.verification import record, verify_into
from sandbox.workspace_files import read_workspace
from taskpkg.package import ScenePrompt, TaskPackage

if TYPE_CHECKING:
    import docker

    from sandbox.containers import Tracker
    from sandbox.images import BuiltImage


class Host(Protocol):
    """What an episode needs of the sandbox it runs on (`Sandbox` is the one): its engine, its tracker, the id its
    containers are labelled with, the package's image, and a tracked commit."""

    client: docker.DockerClient
    tracker: Tracker
    sandbox_id: str

    def image(self, package: TaskPackage) -> BuiltImage:
        """The package's image, built only when new."""
        ...

    def commit_snapshot(self, container: Container, package: TaskPackage) -> str:
        """Commit a container as a snapshot image removed with the sandbox; its id."""
        ...


class EpisodeOver(RuntimeError):
    """An action was given after the episode ended (last scene done, a limit hit, or finished)."""


class EpisodeSession:
    """One episode of one instance. Use as a context manager, or call finish() / close() yourself."""

    def __init__(self, sandbox: Host, package: TaskPackage, instance: int, agent_name: str, *,
                 provision: dict[str, bytes] | None = None, start_from: InitialState | None = None,
                 share_initial: Callable[[InitialState], None] | None = None,
                 verifier_command: list[str] | None = None, keep_files: bool = False,
                 verify_in_place: bool = False, keep_for: Callable[[ContainerVerifier], None] | None = None,
                 start_in: ContainerVerifier | None = None) -> None:
        self.sandbox = sandbox
        self._in_place = verify_in_place or keep_for is not None or start_in is not None
        self._keep_for = keep_for
        self._start_in = start_in if start_in is not None and start_in.container is not None else None
        self._kept: ContainerVerifier | None = self._start_in
        self._verifier_command = verifier_command  # validation's traced verifier run (sandbox.verification)
        self._keep_files = keep_files
        self.package = package
        self.result = EpisodeResult(package.name, instance, agent_name, outcome=EpisodeOutcome.SCORED)
        self._provision = provision or {}
        self._start_from = start_from
        self._share_initial = share_initial
        self._container: Container | None = None
        self._channel: Channel | None = None
        self._root: Channel | None = None  # setup's root server, kept to stop and verify a trusted agent in place
        self._watch: contextlib.AbstractContextManager[object] | None = None
        self._stopped_watch: contextlib.AbstractContextManager[object] | None = None
        self._scenes: list[ScenePrompt] = []
        self._scene_index = 0
        self._turns_left = package.limits.max_turns
        self._scene_turns = 0
        self._deadline = 0.0
        self._started_at = 0.0
        self._agent_started_at = 0.0
        self._made: list[str] = []
        self._snapshots: list[str] = []
        self._ended = False
        self._closed = False

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def __enter__(self) -> EpisodeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, clock: bool = True) -> Observation | None:
        """Make the instance and return the first observation (the first scene's prompt). On a setup failure the
        result's outcome is setup_error, the episode is over, and None is returned. With `clock=False` the agent's
        time (limits.agent_timeout_s) starts at its first action instead (a trainer that starts containers ahead of
        generating does not spend the agent's time on waiting)."""
        self._started_at = time.perf_counter()
        borrowed = self._start_in.container if self._start_in is not None else None
        if borrowed is not None:
            self._container = borrowed
        else:
            tag = self._start_from.image if self._start_from else self.sandbox.image(self.package).tag
            self._container = start_container(self.sandbox.tracker, tag, self.package.limits, "agent",
                                              self.sandbox.sandbox_id, self.package.name)
        self._made.append(self._container.id)  # a borrowed container too: it is handed back only once verified
        try:
            self._scenes = self._set_up()
        except SetupError as exc:
            self.result.outcome, self.result.error = EpisodeOutcome.SETUP_ERROR, str(exc)
            if isinstance(exc, PromptValueMissing):
                self.result.unfilled = [u.key for u in self.package.unfilled(self.result.prompt_values)]
            self._ended = True
            return None
        self.result.timings["setup_s"] = time.perf_counter() - self._started_at
        if clock:
            self.start_clock()
        self._watch = self._storage_watch()
        self._watch.__enter__()
        self._channel = Channel(self.sandbox.client, self._container, AGENT_USER)
        return self._enter_scene(0)

    def start_clock(self) -> None:
        """Start the agent's time (once): from now on it has limits.agent_timeout_s."""
        if not self._deadline:
            self._agent_started_at = time.perf_counter()
            self._deadline = time.monotonic() + self.package.limits.agent_timeout_s

    @property
    def done(self) -> bool:
        """True once no further action will be taken (last scene ended, a limit hit, setup failed)."""
        return self._ended

    @property
    def prompt_values(self) -> dict[str, Any]:
        """The instance's values, as the generator printed them."""
        return self.result.prompt_values

    @property
    def scenes(self) -> list[ScenePrompt]:
        """Every scene's prompt, in order."""
        return list(self._scenes)

    @property
    def turns_left(self) -> int:
        """Turns left in the whole episode."""
        return self._turns_left

    @property
    def seconds_left(self) -> float:
        """Seconds left before limits.agent_timeout_s (all of it while the clock has not started)."""
        if not self._deadline:
            return float(self.package.limits.agent_timeout_s) if self._channel is not None else 0.0
        return max(0.0, self._deadline - time.monotonic())

    def end(self, limit_hit: LimitHit | None = None) -> None:
        """The agent is done (a model that answered without calling a tool), or the driver stopped it at a limit of
        its own (`limit_hit`, such as "time" or "tokens"). finish() verifies the state as it is."""
        if limit_hit:
            self.result.limit_hit = self.result.limit_hit or limit_hit
        self._ended = True

    def fail(self, reason: str) -> None:
        """The agent itself broke (a crash, not a bad action): record agent_error and end the episode."""
        self.result.outcome, self.result.error = EpisodeOutcome.AGENT_ERROR, reason
        self._ended = True

    def step(self, action: Action) -> Observation:
        """Apply one action and return what the agent sees next. EndScene moves to the next scene (its prompt is
        the observation) or ends the episode after the last one. Raises EpisodeOver once the episode has ended."""
        if self._ended or self._channel is None:
            raise EpisodeOver("the episode has ended; no further action is taken")
        self.start_clock()  # the agent's first action starts its time if start() left it stopped
        if isinstance(action, EndScene):
            return self._enter_scene(self._scene_index + 1)
        if time.monotonic() >= self._deadline:
            return self._end_by_limit("time")
        self._turns_left -= 1
        self._scene_turns -= 1
        observation = self._perform(action)
        if self._watch_stopped():
            self._ended = True
        elif self._turns_left <= 0:
            self._end_by_limit("turns")
        elif self._scene_turns <= 0:
            return self._enter_scene(self._scene_index + 1, after=observation)
        return observation

    def finish(self) -> EpisodeResult:
        """End the episode, freeze its final state and verify it in a fresh container; release everything."""
        if self._closed:
            return self.result
        try:
            self._ended = True
            if self.result.outcome == EpisodeOutcome.SCORED and self._container is not None:
                self._stop_acting()
                if self._storage_exceeded():
                    return self.result
                if self._in_place and self._verified_in_place():
                    return self.result
                self._container.kill()  # every process the agent left dies before its state is frozen
                if self._keep_files:
                    self.result.final_files = read_workspace(self._container)
                snapshot = self._commit(self._container)
                verify_started = time.perf_counter()
                self._verify(snapshot)
                self.result.timings["verify_s"] = time.perf_counter() - verify_started
            return self.result
        finally:
            self.close()

    def close(self) -> None:
        """Release the containers and snapshots without verifying (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._ended = True
        self._stop_acting()
        if self._root is not None:
            self._root.close()
            self._root = None
        self.sandbox.tracker.discard(self._made, self._snapshots)
        if self._started_at:
            self.result.timings["total_s"] = time.perf_counter() - self._started_at

    # -- scenes and limits ---------------------------------------------------------------------------------------

    def _enter_scene(self, index: int, after: Observation | None = None) -> Observation:
        """Show scene `index` (or end the episode after the last): its prompt, its own turn budget."""
        if index >= len(self._scenes):
            self._ended = True
            return after or Observation(None, None, None, self._turns_left, self.seconds_left)
        self._scene_index = index
        scene = self._scenes[index]
        self._scene_turns = min(self._turns_left, scene.max_turns or self._turns_left)
        return Observation(scene, after.result if after else None, after.error if after else None,
                           self._scene_turns, self.seconds_left)

    def _end_by_limit(self, which: LimitHit) -> Observation:
        self.result.limit_hit = self.result.limit_hit or which
        self._ended = True
        return Observation(None, None, f"the episode's {which} limit was reached", max(0, self._turns_left),
                           self.seconds_left)

    def _perform(self, action: Shell | WriteFile | InvalidAction) -> Observation:
        assert self._channel is not None and self._container is not None
        scene = self._scenes[self._scene_index].scene
        entry = TranscriptEntry(scene, {"type": type(action).__name__, **action.__dict__})
        outcome = error = None
        try:
            if isinstance(action, InvalidAction):
                error = action.problem
            elif isinstance(action, Shell):
                timeout = max(0.1, min(action.timeout_s, self._deadline - time.monotonic()))
                outcome = self._channel.run(action.command, timeout)
                entry.result = outcome.to_dict()
            else:
                path = action.path if action.path.startswith("/") else f"{WORKSPACE}/{action.path}"
                self._channel.write_file(path, action.content.encode())
                entry.result = {"written": path}
        except ChannelClosed as exc:
            error = self._reopen_channel(exc)
        entry.error = error
        self.result.transcript.entries.append(entry)
        return Observation(None, outcome, error, min(self._turns_left, self._scene_turns), self.seconds_left)

    def _reopen_channel(self, exc: ChannelClosed) -> str:
        assert self._channel is not None and self._container is not None
        self._channel.close()
        try:
            self._channel = Channel(self.sandbox.client, self._container, AGENT_USER)
            return f"the command channel was lost ({exc}); it has been reopened"
        except DockerException:  # the container itself is gone (the storage watch stopped it)
            return f"the command channel was lost ({exc}) and the container has stopped"

    # -- set-up, storage, freezing and verification --------------------------------------------------------------

    def _set_up(self) -> list[ScenePrompt]:
        """Make the instance (or take it from start_from), share it if asked, then place the agent's files. A trusted
        agent's session keeps the root server setup used, to stop and verify it in place without starting another."""
        assert self._container is not None
        provisions = provision_files(self._provision)
        client = self.sandbox.client
        if self._start_from is not None:
            self.result.prompt_values = self._start_from.prompt_values
            scenes = scenes_for(self.package, self.result.prompt_values)
            if provisions and self._start_in is not None:
                _place(self._start_in, provisions)
            elif provisions:
                with root_channel(client, self._container, keep=self._in_place) as root:
                    for path, data in provisions:
                        root.write_file(path, data)
                self._root = root if self._in_place else None
            return scenes
        with root_channel(client, self._container, keep=self._in_place) as root:
            self.result.prompt_values = generate(root, self.package, self.result.instance)
            scenes = scenes_for(self.package, self.result.prompt_values)
            if self._keep_files:
                self.result.initial_files = read_workspace(self._container)
            if self._share_initial is not None:
                image = self._commit(self._container, keep=True)
                self._share_initial(InitialState(self.package.name, self.result.instance, image,
                                                 self.result.prompt_values))
            if self._keep_for is not None:
                self._kept = ContainerVerifier.keep(self.sandbox.tracker, self.package, self.result.instance,
                                                    self._container, root, own_folders(provisions))
            for path, data in provisions:
                root.write_file(path, data)
        if self._in_place and self._kept is None:
            self._root = root
        return scenes

    def _storage_watch(self) -> contextlib.AbstractContextManager[object]:
        """A StorageWatch on the agent's container where the engine does not cap its storage (else nothing)."""
        assert self._container is not None
        if self.sandbox.tracker.storage_opt_supported:
            return contextlib.nullcontext()
        return StorageWatch(self.sandbox.client, self._container.id, self.package.limits.storage_mb * 2**20)

    def _watch_stopped(self) -> bool:
        return isinstance(self._watch, StorageWatch) and self._watch.exceeded_bytes is not None

    def _stop_acting(self) -> None:
        """Close the agent's channel and the storage watch; record the agent's time and peak memory once."""
        if self._channel is not None:
            self.result.peak_memory_mb = _peak_memory_mb(self._channel)
            self._channel.close()
            self._channel = None
            acted = self._agent_started_at
            self.result.timings["agent_s"] = time.perf_counter() - acted if acted else 0.0
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.__exit__(None, None, None)
            self._stopped_watch = watch

    def _storage_exceeded(self) -> bool:
        watch = self._stopped_watch
        if isinstance(watch, StorageWatch) and watch.check():
            self.result.limit_hit, self.result.outcome = "storage", EpisodeOutcome.LIMIT_EXCEEDED
            self.result.error = (f"the agent's files grew past limits.storage_mb ({self.package.limits.storage_mb} "
                                 f"MiB) to {(watch.exceeded_bytes or 0) // 2**20} MiB; the episode was stopped and not "
                                 "verified")
            return True
        return False

    def _commit(self, container: Container, keep: bool = False) -> str:
        """Snapshot the container; a kept snapshot (a shared initial state) belongs to whoever it is handed to, the
        others are released with the session."""
        image_id = self.sandbox.commit_snapshot(container, self.package)
        if not keep:
            self._snapshots.append(image_id)
        return image_id

    def _verified_in_place(self) -> bool:
        """Kill the agent's processes and verify the final state in this container, as sandbox.batch_verification
        does; a container kept for later verifications is handed over. False when that could not be done (then the
        state is frozen and verified in a fresh container)."""
        assert self._container is not None
        verifier = self._kept or ContainerVerifier.here(self.sandbox.tracker, self.package, self.result.instance,
                                                        self._container, self._root)
        self._root = None  # the verifier's now: it closes it
        started = time.perf_counter()
        try:
            verifier.stop_agent()
            if self._keep_files:
                self.result.final_files = read_workspace(self._container)
            verdict = verifier.verify_as_is(self._verifier_command)
        except (BatchFailed, DockerException):
            verifier.release_channel()
            self._kept = None
            return False
        record(self.result, verdict)
        self.result.timings["verify_s"] = time.perf_counter() - started
        if self._keep_for is not None and self._kept is not None:
            self._made.remove(self._container.id)  # the kept verifier owns it now
            self._keep_for(self._kept)
        else:
            verifier.release_channel()
        self._kept = None
        return True

    def _verify(self, snapshot: str) -> None:
        """Score the snapshot in a fresh container (sandbox.verification)."""
        verify_into(self.result, self.sandbox.tracker, self.sandbox.sandbox_id, snapshot, self.package, self._made,
                    self._verifier_command)


def _place(kept: ContainerVerifier, files: list[tuple[str, bytes]]) -> None:
    """Write an agent's files through a kept container's root channel; a broken channel is a SetupError."""
    try:
        root = kept.root_channel()
        for path, data in files:
            root.write_file(path, data)
    except (ChannelClosed, BatchFailed, DockerException) as exc:
        raise SetupError(f"the arena's command server stopped while placing the agent's files ({exc})") from None


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
