"""Several verifications of one frozen state in one container: what validation's do-nothing floor and answer probes
do on an instance's initial state, each with other files written over its /workspace.

The container starts from the frozen state as a verification's does. Before the first verification, the folders a
verifier may write (/workspace, /tmp, /var/tmp, /root) are packed as they are (sandbox/batch_reset.py); before each
later one, every process left is killed, the file system is checked for anything the last verification changed
elsewhere, and those folders, /arena/verifier, /arena/output and /dev/shm are put back exactly as packed. The verifier
then runs as in a fresh container: the same loader, user, environment and limits, through an exec instead of the
container's first process. What a verification changed elsewhere could reach the next one, so the rest go to a fresh
container, as they do after a verifier that ran out of time (the container is killed); if a step of the batch itself
fails, every submission left is verified alone, the plain way.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.channel import Channel, ChannelClosed, script_source
from sandbox.containers import Tracker, start_container
from sandbox.reward import Reward, VerifierError
from sandbox.streams import MultiplexedSocket
from sandbox.verification import (
    LOADER_COMMAND,
    exchange,
    reward_of,
    verifier_environment,
    verifier_request,
    verify_snapshot,
)
from sandbox.workspace_files import WorkspaceFile, workspace_archive
from taskpkg.model import TaskPackage

FOLDER = "/arena/.batch"  # the packed folders, the reset script and each submission's archive
FOREIGN_WRITES = 3  # batch_reset.py's exit status when the last verification wrote outside what it puts back
SETUP_TIMEOUT_S = 120

Files = dict[str, WorkspaceFile] | None


@dataclass(frozen=True)
class Verified:
    """One submission's verdict (a reward, or why there is none) and the seconds it took."""

    verdict: Reward | VerifierError
    seconds: float
    alone: bool = False  # verified in a fresh container of its own (the plain way)


def verify_batch(tracker: Tracker, session: str, snapshot: str, package: TaskPackage, instance: int,
                 made: list[str], submissions: list[Files]) -> list[Verified]:
    """Verify the snapshot with each submission's files written over its /workspace (None: nothing written), in as few
    containers as stay honest; their ids join `made` for removal."""
    done: list[Verified] = []
    while len(done) < len(submissions):
        batch = _Batch(tracker, session, snapshot, package, instance, made)
        try:
            for files in submissions[len(done):]:
                verified = batch.verify(files)
                if verified is None:  # the last verification wrote elsewhere: the rest in a fresh container
                    break
                done.append(verified)
                if batch.timed_out:
                    break
        except (ChannelClosed, DockerException, _SetupFailed):
            for files in submissions[len(done):]:  # the batch's own steps failed: each alone, the plain way
                started = time.perf_counter()
                done.append(Verified(_plain(tracker, session, snapshot, package, instance, made, files),
                                     time.perf_counter() - started, alone=True))
        finally:
            batch.close()
    return done


class _SetupFailed(RuntimeError):
    """A reset or save step in the container did not succeed."""


class _Batch:
    """One container verifying submissions in turn."""

    def __init__(self, tracker: Tracker, session: str, snapshot: str, package: TaskPackage, instance: int,
                 made: list[str]) -> None:
        self.tracker, self.package, self.instance = tracker, package, instance
        self.container: Container | None = None
        self.root: Channel | None = None
        self.timed_out = False
        self._args = (session, snapshot, made)
        self._count = 0

    def verify(self, files: Files) -> Verified | None:
        """Verify one submission here; None (nothing done) when the last verification wrote outside what is put
        back."""
        started = time.perf_counter()
        if self.container is None:
            self._start()
        assert self.root is not None and self.container is not None
        if files:
            self.root.write_file(f"{FOLDER}/submission.tar", workspace_archive(files), 0o600)
        if not self._step("save" if self._count == 0 else "reset"):
            return None
        self._count += 1
        stdout, stderr, self.timed_out = self._run_loader()
        try:
            verdict: Reward | VerifierError = reward_of(stdout, stderr, self.timed_out)
        except VerifierError as exc:
            verdict = exc
        if self.timed_out:
            with contextlib.suppress(DockerException):
                self.container.kill()
        return Verified(verdict, time.perf_counter() - started)

    def close(self) -> None:
        if self.root is not None:
            self.root.close()
        if self.container is not None:
            self.tracker.discard([self.container.id], [])

    def _start(self) -> None:
        session, snapshot, made = self._args
        self.container = start_container(self.tracker, snapshot, self.package.limits, "verifier", session,
                                         self.package.name)
        made.append(self.container.id)
        self.root = Channel(self.tracker.client, self.container, "0")
        self.root.write_file(f"{FOLDER}/batch_reset.py", script_source("batch_reset.py").encode(), 0o600)

    def _step(self, step: str) -> bool:
        """Run save or reset; False when reset found the last verification's writes elsewhere."""
        assert self.root is not None
        done = self.root.run(f"exec python3 -I -S {FOLDER}/batch_reset.py {step} {FOLDER}", SETUP_TIMEOUT_S,
                             cwd="/")
        if done.exit_code == FOREIGN_WRITES:
            return False
        if done.exit_code != 0:
            raise _SetupFailed(f"{step}: exit {done.exit_code}: {done.stderr[-400:]}")
        return True

    def _run_loader(self) -> tuple[bytes, str, bool]:
        assert self.container is not None
        api = self.tracker.client.api
        exec_id = api.exec_create(self.container.id, LOADER_COMMAND, stdin=True, stdout=True, stderr=True, user="0",
                                  workdir="/", environment=verifier_environment(self.instance))["Id"]
        connection = MultiplexedSocket(api.exec_start(exec_id, socket=True))
        return exchange(connection, verifier_request(self.package), self.package.limits.verifier_timeout_s)

def _plain(tracker: Tracker, session: str, snapshot: str, package: TaskPackage, instance: int, made: list[str],
           files: Files) -> Reward | VerifierError:
    try:
        return verify_snapshot(tracker, session, snapshot, package, instance, made, files=files)
    except VerifierError as exc:
        return exc
