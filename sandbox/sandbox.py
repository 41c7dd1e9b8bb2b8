"""The Sandbox: one engine, its images, and the episodes run on it (step-wise sessions, and the pull-style driver).

Every container and snapshot a Sandbox makes is removed on every exit path.
"""

from __future__ import annotations

import io
import itertools
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
from docker.models.containers import Container

from sandbox.agent_interface import Agent
from sandbox.batch_verification import ContainerVerifier, verify_batch
from sandbox.cleanup import collect_garbage
from sandbox.containers import Tracker, start_container
from sandbox.engine import connect, labels, new_sandbox_id
from sandbox.episode_session import EpisodeSession
from sandbox.images import BuiltImage, ensure_image, image_tag
from sandbox.instances import PromptValueMissing, SetupError, generate, root_channel, scenes_for
from sandbox.layout import WORKSPACE
from sandbox.outcomes import EpisodeOutcome, EpisodeResult, InitialState
from sandbox.verification import record, verify_into
from sandbox.workspace_files import WorkspaceFile, read_workspace
from taskpkg.package import TaskPackage

__all__ = ["EpisodeResult", "EpisodeSession", "InitialState", "Sandbox"]

SNAPSHOT_REPOSITORY = "posttrain-arena/snapshot"


class Sandbox:
    """Runs episodes on one engine; every container and snapshot it makes is removed on every exit path."""

    def __init__(self, client: docker.DockerClient | None = None, sandbox_id: str | None = None) -> None:
        self.client = client or connect()
        self.sandbox_id = sandbox_id or new_sandbox_id()
        self.tracker = Tracker(self.client)
        self._images: dict[str, BuiltImage] = {}
        self._tags: dict[int, tuple[TaskPackage, str]] = {}  # by identity: equal packages may differ on disk
        self._commits = itertools.count()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove everything this sandbox still holds, then sweep by its label for anything a race left."""
        self.tracker.remove_all()
        collect_garbage(self.client, include_images=False, sandbox_id=self.sandbox_id)

    def image(self, package: TaskPackage) -> BuiltImage:
        """The package's image, found by the content hash of its build context, built only when new."""
        known = self._tags.get(id(package))
        if known is None or known[0] is not package:  # hash the context once per loaded package, not per episode
            known = self._tags[id(package)] = (package, image_tag(package))
        tag = known[1]
        if tag not in self._images:
            self._images[tag] = ensure_image(self.client, package, self.sandbox_id, tag)
        return self._images[tag]

    def open_episode(self, package: TaskPackage, instance: int, agent_name: str, *,
                     provision: dict[str, bytes] | None = None, start_from: InitialState | None = None,
                     share_initial: Callable[[InitialState], None] | None = None,
                     verifier_command: list[str] | None = None, keep_files: bool = False,
                     verify_in_place: bool = False,
                     keep_for: Callable[[ContainerVerifier], None] | None = None,
                     start_in: ContainerVerifier | None = None) -> EpisodeSession:
        """A step-wise episode (not started yet): call start(), then step() per action, then finish().

        `start_from` skips the generator: the agent container starts from that committed instance (the fast path
        for rollouts). `share_initial` is called with this episode's instance committed right after setup (before
        the agent's files arrive), for other episodes to start from; the callee owns it and must release() it.
        `verifier_command` replaces `python3 -I verifier.py` (validation's traced run; never for scores).
        `keep_files` keeps /workspace as made (unless started from a committed instance) and as left, on the result.
        `verify_in_place` verifies the final state in the agent's own container once every process of the agent is
        killed (validation's trusted agents: the oracle and the arena's own probes; never for scores);
        `keep_for` also saves the instance as made before the agent acts and hands that container over afterwards,
        to verify other submissions on the instance in it (sandbox.batch_verification).
        `start_in` acts in such a kept container instead of a fresh one (`start_from` gives the instance's values): one
        prepared for a trusted agent (ContainerVerifier.prepare), handed back through `keep_for` once its final state
        is verified in place, else removed.
        """
        return EpisodeSession(self, package, instance, agent_name, provision=provision, start_from=start_from,
                              share_initial=share_initial, verifier_command=verifier_command, keep_files=keep_files,
                              verify_in_place=verify_in_place, keep_for=keep_for, start_in=start_in)

    def run_episode(self, package: TaskPackage, instance: int, agent: Agent, *,
                    start_from: InitialState | None = None,
                    share_initial: Callable[[InitialState], None] | None = None,
                    verifier_command: list[str] | None = None, keep_files: bool = False,
                    verify_in_place: bool = False,
                    keep_for: Callable[[ContainerVerifier], None] | None = None,
                    start_in: ContainerVerifier | None = None) -> EpisodeResult:
        """One full episode of a pull-style `agent` (agent.act(observation) -> action), driven over a session."""
        with self.open_episode(package, instance, agent.name, provision=agent.provision(package),
                               start_from=start_from, share_initial=share_initial,
                               verifier_command=verifier_command, keep_files=keep_files,
                               verify_in_place=verify_in_place, keep_for=keep_for, start_in=start_in) as session:
            observation = session.start()
            while observation is not None and not session.done:
                try:
                    action = agent.act(observation)
                except Exception as exc:
                    session.fail(f"the agent {agent.name} failed: {exc}")
                    break
                observation = session.step(action)
            return session.finish()

    def score_initial(self, package: TaskPackage, initial: InitialState, agent_name: str = "nop",
                      files: dict[str, WorkspaceFile] | None = None) -> EpisodeResult:
        """Verify an untouched instance: the episode of an agent that does nothing, without running one. With
        `files`, they are written into its /workspace first (over what is there): the episode of an agent that wrote
        exactly them, verified without a container of its own."""
        result = EpisodeResult(package.name, initial.instance, agent_name, outcome=EpisodeOutcome.SCORED,
                               prompt_values=initial.prompt_values)
        started = time.perf_counter()
        made: list[str] = []
        try:
            verify_into(result, self.tracker, self.sandbox_id, initial.image, package, made, files=files)
            result.timings["verify_s"] = time.perf_counter() - started
            return result
        finally:
            self.tracker.discard(made, [])
            result.timings["total_s"] = time.perf_counter() - started

    def score_initial_many(self, package: TaskPackage, initial: InitialState,
                           submissions: list[tuple[str, dict[str, WorkspaceFile] | None]],
                           kept: ContainerVerifier | None = None) -> list[EpisodeResult]:
        """score_initial for each (agent name, files) on one instance, in as few containers as stay honest, first in
        `kept`, a container an episode on this instance kept (sandbox.batch_verification)."""
        made: list[str] = []
        try:
            verified = verify_batch(self.tracker, self.sandbox_id, initial.image, package, initial.instance, made,
                                    [files for _, files in submissions], kept)
        finally:
            self.tracker.discard(made, [])
        results = []
        for (agent_name, _), one in zip(submissions, verified, strict=True):
            result = EpisodeResult(package.name, initial.instance, agent_name, outcome=EpisodeOutcome.SCORED,
                                   prompt_values=initial.prompt_values)
            record(result, one.verdict)
            result.timings["verify_s"] = result.timings["total_s"] = one.seconds
            results.append(result)
        return results

    def instance_only(self, package: TaskPackage, instance: int) -> EpisodeResult:
        """Make one instance and read it back (its /workspace as initial_files, its prompt values), with no agent and
        no verification: validation's comparison of instances. A failed setup is a setup_error, as in an episode."""
        started = time.perf_counter()
        result = EpisodeResult(package.name, instance, "generator", outcome=EpisodeOutcome.SCORED)
        container = start_container(self.tracker, self.image(package).tag, package.limits, "instance", self.sandbox_id,
                                    package.name)
        try:
            with root_channel(self.client, container) as root:
                result.prompt_values = generate(root, package, instance)
                scenes_for(package, result.prompt_values)
                result.initial_files = read_workspace(container)
        except SetupError as exc:
            result.outcome, result.error = EpisodeOutcome.SETUP_ERROR, str(exc)
            if isinstance(exc, PromptValueMissing):
                result.unfilled = [u.key for u in package.unfilled(result.prompt_values)]
        finally:
            self.tracker.discard([container.id], [])
            result.timings["total_s"] = time.perf_counter() - started
        return result

    def initial_state(self, package: TaskPackage, instance: int) -> InitialState:
        """Make one instance and commit it, for episodes to start from (hand it back with release()).

        Raises SetupError when the generator fails.
        """
        container = start_container(self.tracker, self.image(package).tag, package.limits, "instance", self.sandbox_id,
                                    package.name)
        try:
            with root_channel(self.client, container) as root:
                values = generate(root, package, instance)
                scenes_for(package, values)  # a prompt value the generator did not print fails here, not per rollout
            return InitialState(package.name, instance, self.commit_snapshot(container, package), values)
        finally:
            self.tracker.discard([container.id], [])

    def commit_snapshot(self, container: Container, package: TaskPackage) -> str:
        """Commit a container's filesystem as a tracked snapshot image (removed with the sandbox); returns its id."""
        # One tag per commit: a container committed twice (its initial state, then its final one) must not move the
        # first snapshot's tag to the second, which would leave the first untagged for the engine to prune.
        image_id: str = self.client.api.commit(container.id, repository=SNAPSHOT_REPOSITORY,
                                               tag=f"{self.sandbox_id}-{container.id[:12]}-{next(self._commits)}",
                                               conf={"Labels": labels("snapshot", self.sandbox_id, package.name)})["Id"]
        self.tracker.add_image(image_id)
        return image_id

    def release(self, initial: InitialState) -> None:
        """Hand back a shared initial state (removed in the background, after the containers made before it)."""
        self.tracker.discard([], [initial.image])

    def make_instance(self, package: TaskPackage, instance: int, workspace: Path) -> dict[str, Any]:
        """Run the generator for one instance in a sandboxed container; copy its /workspace into `workspace`.

        Returns the prompt values. Raises SetupError when the generator fails.
        """
        container = start_container(self.tracker, self.image(package).tag, package.limits, "instance", self.sandbox_id,
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
