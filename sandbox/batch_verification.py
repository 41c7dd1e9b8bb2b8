"""Several verifications in one container: an episode's final state verified where it is, and an instance's initial
state verified again with other files written over its /workspace (validation's do-nothing floor and answer probes).

A container is kept for verifications from a frozen state (a fresh one), or from an episode's own container, where
the folders a verifier or agent may write (/workspace, /tmp, /var/tmp, /root, /home) were packed before the agent
acted (sandbox/batch_reset.py). Before each verification on the saved state, every process left is killed, the file
system is checked for anything changed elsewhere since the last step, and those folders, /arena/verifier,
/arena/output, /dev/shm and the agent's own files are put back exactly as packed. The verifier runs as in a fresh
container: the same loader, user, environment and limits, through an exec instead of the container's first process.
What changed elsewhere could reach the next verification, so the rest go to a fresh container from the frozen
state, as they do after a verifier that ran out of time (the container is killed); if a step of the batch itself
fails, every submission left is verified alone, the plain way.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.channel import Channel, ChannelClosed, CommandResult, script_source
from sandbox.containers import Tracker, start_container
from sandbox.engine import overlay_folders
from sandbox.reward import Reward, VerifierError
from sandbox.verification import (
    MAX_LOADER_STDOUT,
    reward_of,
    verifier_environment,
    verifier_request,
    verify_snapshot,
)
from sandbox.workspace_files import WorkspaceFile, workspace_archive
from taskpkg.package import TaskPackage

FOLDER = "/arena/.batch"  # root's only: the packed folders, the reset script and each submission's archive
RESTORED = ("/workspace", "/tmp", "/var/tmp", "/root", "/home", "/arena/verifier", "/arena/output", "/dev", FOLDER)
FOREIGN_WRITES = 3  # batch_reset.py's exit status when something changed outside what it puts back
TIMED_OUT = "ARENA-BATCH timed-out"  # batch_reset.py's line when the verifier ran out of time
SETUP_TIMEOUT_S = 120

Files = dict[str, WorkspaceFile] | None


@dataclass(frozen=True)
class Verified:
    """One submission's verdict (a reward, or why there is none) and the seconds it took."""

    verdict: Reward | VerifierError
    seconds: float
    alone: bool = False  # verified in a fresh container of its own (the plain way)


class BatchFailed(RuntimeError):
    """A step of the batch itself (not the verifier) failed: verify the plain way instead."""


class ContainerVerifier:
    """One container verifying in turn. Made from a frozen state (`snapshot`: started at the first verification) or
    kept from an episode (`keep`, before its agent acts)."""

    def __init__(self, tracker: Tracker, package: TaskPackage, instance: int, sandbox_id: str = "",
                 snapshot: str | None = None, made: list[str] | None = None) -> None:
        self.tracker, self.package, self.instance = tracker, package, instance
        self.container: Container | None = None
        self._root: Channel | None = None
        self._scripted = False  # batch_reset.py and the loader written into the container
        self._sandbox_id, self._snapshot, self._made = sandbox_id, snapshot, made if made is not None else []
        self._saved = False
        self._extra: tuple[str, ...] = ()
        self._request = b""
        self._environment: dict[str, str] | None = None
        self._upper: Path | None = None  # the container's own overlay2 layer, once looked up
        self._upper_looked_up = False

    @classmethod
    def keep(cls, tracker: Tracker, package: TaskPackage, instance: int, container: Container, root: Channel,
             extra: tuple[str, ...]) -> ContainerVerifier:
        """Save a running episode's folders now, through its set-up's root channel (before the agent's files, the
        `extra` paths, arrive and before it acts), to verify later submissions on this state in this container."""
        kept = cls.here(tracker, package, instance, container, root)
        kept._extra = extra
        _run(kept._channel(), "save", 0, extra, {})
        kept._saved = True
        return kept

    @classmethod
    def here(cls, tracker: Tracker, package: TaskPackage, instance: int, container: Container,
             root: Channel | None = None) -> ContainerVerifier:
        """An episode's own container, to verify its final state where it is (through `root`, a root channel already
        open to it, when there is one: the verifier closes it)."""
        made = cls(tracker, package, instance)
        made.container = container
        made._root = root
        return made

    def stop_agent(self) -> None:
        """Kill every process but the container's own: the agent's, before its final state is read and verified."""
        _run(self._channel(), "stop", 0, (), {})

    def verify_as_is(self, command: list[str] | None = None) -> Reward | VerifierError:
        """Verify the state as it is (`command`: sandbox.verification's traced run)."""
        verdict = self._verify("kill", None, command)
        assert verdict is not None  # only reset finds changes elsewhere
        return verdict

    def verify(self, files: Files) -> Verified | None:
        """Verify the saved state with `files` written over its /workspace; None (nothing done) when something changed
        outside what is put back since the last step."""
        started = time.perf_counter()
        step = "first"
        if self._saved:
            changed = self._changed_elsewhere()
            if changed:
                return None
            step = "reset" if changed is None else "restore"
        verdict = self._verify(step, files, None)
        if verdict is None:
            return None
        self._saved = True
        return Verified(verdict, time.perf_counter() - started)

    def prepare(self, extra: tuple[str, ...]) -> bool:
        """Put the saved state back for another trusted agent to act on here (its own files at the `extra` paths,
        removed at every later step); False (nothing done) when something changed outside what is put back."""
        if not self._saved or self.container is None:
            return False
        changed = self._changed_elsewhere()
        if changed:
            return False
        self._extra = tuple(sorted({*self._extra, *extra}))
        step = "reset-only" if changed is None else "restore-only"
        return _run(self._channel(), step, 0, self._extra, {}) is not None

    def root_channel(self) -> Channel:
        """The root channel to the container (opened on first use), for an agent's files."""
        return self._channel()

    def release_channel(self) -> None:
        """Close the root channel (the container stays)."""
        if self._root is not None:
            self._root.close()
            self._root = None
            self._scripted = False

    def close(self) -> None:
        """Release the channel and the container."""
        self.release_channel()
        if self.container is not None:
            self.tracker.discard([self.container.id], [])
            self.container = None

    def _changed_elsewhere(self) -> bool | None:
        """Whether anything outside what reset puts back changed since its last step, read from the container's own
        layer where the engine keeps it here (overlay2, readable); None when it cannot be read (reset looks then)."""
        assert self.container is not None
        if not self._upper_looked_up:
            layers = overlay_folders(self.tracker.client.api.inspect_container(self.container.id))
            upper = layers[0] if layers else None
            self._upper = upper if upper and os.access(upper, os.R_OK | os.X_OK) else None
            self._upper_looked_up = True
        if self._upper is None:
            return None
        try:
            since = os.lstat(self._upper / FOLDER.lstrip("/") / "marker").st_ctime_ns
        except OSError:
            return None
        put_back = {*RESTORED, *self._extra}
        holders = {str(PurePosixPath(p).parent) for p in put_back}
        holders |= {str(parent) for p in holders for parent in PurePosixPath(p).parents}
        for parent, folders, names in os.walk(self._upper):
            inside = "/" + os.path.relpath(parent, self._upper).removeprefix(".").lstrip("/")
            folders[:] = [f for f in folders if _join(inside, f) not in put_back]
            for name in folders + names:
                path = _join(inside, name)
                if path in holders and name in folders:
                    continue  # a folder holding what is put back changes with it; its other entries are looked at
                with contextlib.suppress(OSError):
                    if os.lstat(os.path.join(parent, name)).st_ctime_ns >= since:
                        return True
        return False

    def _channel(self) -> Channel:
        if self.container is None:
            assert self._snapshot is not None
            self.container = start_container(self.tracker, self._snapshot, self.package.limits, "verifier",
                                             self._sandbox_id, self.package.name)
            self._made.append(self.container.id)
        if self._root is None:
            self._root, self._scripted = Channel(self.tracker.client, self.container, "0"), False
        if not self._scripted:
            _write_scripts(self._root)
            self._scripted = True
        return self._root

    def _verify(self, step: str, files: Files, command: list[str] | None) -> Reward | VerifierError | None:
        """One verifying step of batch_reset.py: the loader with the container's environment and the verifier's, as
        a verification container's first process has them."""
        root = self._channel()
        if files:
            root.write_file(f"{FOLDER}/submission.tar", workspace_archive(files), 0o600)
        request = verifier_request(self.package, command)
        if request != self._request:
            root.write_file(f"{FOLDER}/request", request, 0o600)
            self._request = request
        if self._environment is None:
            assert self.container is not None
            pairs = self.tracker.client.api.inspect_container(self.container.id)["Config"].get("Env") or []
            self._environment = {**dict(p.split("=", 1) for p in pairs if "=" in p),
                                 **verifier_environment(self.instance)}
        done = _run(root, step, self.package.limits.verifier_timeout_s, self._extra, self._environment)
        if done is None:
            return None
        timed_out = TIMED_OUT in done.stdout
        try:
            return reward_of(done.stdout.encode(), done.stderr, timed_out)
        except VerifierError as exc:
            return exc


def _join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def _write_scripts(root: Channel) -> None:
    root.write_file(f"{FOLDER}/batch_reset.py", script_source("batch_reset.py").encode(), 0o600)
    root.write_file(f"{FOLDER}/verifier_loader.py", script_source("verifier_loader.py").encode(), 0o600)


def _run(root: Channel, step: str, timeout_s: float, extra: tuple[str, ...],
         environment: dict[str, str]) -> CommandResult | None:
    """Run a step of batch_reset.py; None when reset found changes elsewhere. Raises BatchFailed."""
    command = " ".join(["exec python3 -I -S", f"{FOLDER}/batch_reset.py", step, FOLDER, str(timeout_s), *extra])
    try:
        done = root.run(command, timeout_s + SETUP_TIMEOUT_S, cwd="/", env=environment,
                        max_output=MAX_LOADER_STDOUT + 1024)
    except ChannelClosed as exc:
        raise BatchFailed(str(exc)) from None
    if done.exit_code == FOREIGN_WRITES and step in ("reset", "restore", "reset-only", "restore-only"):
        return None
    if done.exit_code != 0 or done.timed_out:
        raise BatchFailed(f"{step}: exit {done.exit_code}: {done.stderr[-400:]}")
    return done


def verify_batch(tracker: Tracker, sandbox_id: str, snapshot: str, package: TaskPackage, instance: int,
                 made: list[str], submissions: list[Files], kept: ContainerVerifier | None = None) -> list[Verified]:
    """Verify the snapshot with each submission's files written over its /workspace (None: nothing written), first
    in `kept` (a container kept from an episode on this state, closed here), then in as few fresh containers as
    stay honest; their ids join `made` for removal."""
    done: list[Verified] = []
    while len(done) < len(submissions):
        batch = kept or ContainerVerifier(tracker, package, instance, sandbox_id, snapshot, made)
        kept = None
        try:
            for files in submissions[len(done):]:
                verified = batch.verify(files)
                if verified is None:  # something changed elsewhere: the rest in a fresh container
                    break
                done.append(verified)
        except (DockerException, BatchFailed):
            for files in submissions[len(done):]:  # the batch's own steps failed: each alone, the plain way
                started = time.perf_counter()
                done.append(Verified(_plain(tracker, sandbox_id, snapshot, package, instance, made, files),
                                     time.perf_counter() - started, alone=True))
        finally:
            batch.close()
    return done


def _plain(tracker: Tracker, sandbox_id: str, snapshot: str, package: TaskPackage, instance: int, made: list[str],
           files: Files) -> Reward | VerifierError:
    try:
        return verify_snapshot(tracker, sandbox_id, snapshot, package, instance, made, files=files)
    except VerifierError as exc:
        return exc
