"""Verification: a frozen state is scored in a fresh container, where the verifier and its data arrive only now.

The container's one process is the arena's loader (sandbox/verifier_loader.py): it receives the files on stdin, runs
the verifier, and reports its exit code and reward file on stdout, which the host reads from the attach stream.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import time
from collections.abc import Callable

import docker
from docker.errors import DockerException
from docker.models.containers import Container

from sandbox.channel import DEFAULT_PATH, script_source
from sandbox.containers import Tracker, create_container, folder_files
from sandbox.layout import OUTPUT, VERIFIER, VERIFIER_DIR, WORKSPACE
from sandbox.outcomes import EpisodeOutcome, EpisodeResult
from sandbox.reward import MAX_REWARD_BYTES, Reward, VerifierError, parse_reward
from sandbox.streams import STDERR, MultiplexedSocket
from sandbox.workspace_files import WorkspaceFile, workspace_archive
from taskpkg.package import TaskPackage

LOADER_MARKER = "ARENA-VERIFIER"
MAX_LOADER_STDOUT = 4 * MAX_REWARD_BYTES  # the loader's report: the reward file in base64, and a few numbers
STDERR_TAIL_BYTES = 8192
LOADER_COMMAND = ["python3", "-I", "-S", "-c", script_source("verifier_loader.py")]


def verify_snapshot(tracker: Tracker, sandbox_id: str, snapshot: str, package: TaskPackage, instance: int,
                    made: list[str], command: list[str] | None = None,
                    files: dict[str, WorkspaceFile] | None = None) -> Reward:
    """Score the snapshot image for `instance`, with `files` written into its /workspace first where given; the
    container's id joins `made` for removal. `command` replaces `python3 -I verifier.py` (validation's traced run of
    the verifier; never used for scores).

    Raises VerifierError when the verifier did not produce a valid reward (never scored as 0 or 1).
    """
    container = create_container(tracker, snapshot, package.limits, "verifier", sandbox_id, package.name,
                                 entrypoint=LOADER_COMMAND, environment=verifier_environment(instance), stdin=True)
    made.append(container.id)
    if files:
        container.put_archive("/", workspace_archive(files))
    stdout, stderr, timed_out = _run_to_end(tracker.client, container, verifier_request(package, command),
                                            package.limits.verifier_timeout_s)
    if timed_out:
        with contextlib.suppress(DockerException):
            container.kill()
    return reward_of(stdout, stderr, timed_out)


def verifier_environment(instance: int) -> dict[str, str]:
    """The environment every verification runs in."""
    return {"ARENA_INSTANCE": str(instance), "ARENA_WORKSPACE": WORKSPACE, "ARENA_OUTPUT": OUTPUT,
            "HOME": "/root", "PATH": DEFAULT_PATH}


def reward_of(stdout: bytes, stderr: str, timed_out: bool) -> Reward:
    """The reward in the loader's report (raises VerifierError saying what was wrong)."""
    answer = _loader_answer(stdout)
    if answer is None and not timed_out:
        raise VerifierError(f"the verifier could not be started (the image must provide python3): {stderr[-400:]}")
    exit_code, size, raw = answer if answer is not None else (None, 0, None)
    if raw is None and size >= MAX_REWARD_BYTES + 1:
        raw = b"\0" * (MAX_REWARD_BYTES + 1)  # too large to read: the reward contract reports the size
    return parse_reward(raw, exit_code, timed_out, stderr)


def verify_into(result: EpisodeResult, tracker: Tracker, sandbox_id: str, snapshot: str, package: TaskPackage,
                made: list[str], command: list[str] | None = None,
                files: dict[str, WorkspaceFile] | None = None) -> None:
    """Verify the snapshot (with `files` written over it) and record the reward, or the verifier's error, on
    `result`. `command` is validation's traced verifier run."""
    try:
        record(result, verify_snapshot(tracker, sandbox_id, snapshot, package, result.instance, made, command, files))
    except VerifierError as exc:
        record(result, exc)


def record(result: EpisodeResult, verdict: Reward | VerifierError) -> None:
    """Put a verification's reward, or the verifier's error, on `result`."""
    if isinstance(verdict, VerifierError):
        result.outcome, result.error = EpisodeOutcome.VERIFIER_ERROR, str(verdict)
    else:
        result.reward, result.details = verdict.value, verdict.details


def verifier_request(package: TaskPackage, command: list[str] | None = None) -> bytes:
    """The loader's request: where the reward goes, how to run the verifier, then verifier.py and its data."""
    files = [(VERIFIER, package.verifier_file.read_bytes())]
    for data in package.verifier_data:
        files += folder_files(package.root / data, f"{VERIFIER_DIR}/{data.rstrip('/')}")
    arguments = command or ["python3", "-I", VERIFIER]
    fields: list[str | bytes] = [OUTPUT, str(MAX_REWARD_BYTES + 1), VERIFIER_DIR, str(len(arguments)), *arguments]
    for path, content in files:
        fields += [path, content]
    return b"".join(b"%d:%s" % (len(field), field) for field in
                    (f.encode() if isinstance(f, str) else f for f in fields))


def _run_to_end(client: docker.DockerClient, container: Container, data: bytes,
                timeout_s: float) -> tuple[bytes, str, bool]:
    """Start a container created with stdin, send it `data`, and collect its output until it ends.

    Returns (stdout up to MAX_LOADER_STDOUT bytes, the tail of stderr, whether the deadline passed first).
    """
    connection = MultiplexedSocket(client.api.attach_socket(
        container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}))
    return exchange(connection, data, timeout_s, container.start)


def exchange(connection: MultiplexedSocket, data: bytes, timeout_s: float,
             start: Callable[[], object] | None = None) -> tuple[bytes, str, bool]:
    """Send `data` to a process's stdin (after `start`, where given: the container's), then collect its output until it
    ends. Returns (stdout up to MAX_LOADER_STDOUT bytes, the tail of stderr, whether the deadline passed first)."""
    deadline = time.monotonic() + timeout_s
    stdout, stderr = b"", b""
    timed_out = False
    try:
        if start is not None:
            start()
        with contextlib.suppress(OSError):  # a process that exits at once reads nothing; its stderr says why
            connection.send(data, deadline)
        connection.end_input()
        while True:
            stream, payload = connection.frame(deadline)
            if stream == STDERR:
                stderr = (stderr + payload)[-STDERR_TAIL_BYTES:]
            elif len(stdout) < MAX_LOADER_STDOUT:
                stdout += payload
    except TimeoutError:
        timed_out = True
    except OSError:  # StreamEnded, or the engine dropped the connection as the container stopped
        pass
    finally:
        connection.close()
    return stdout, stderr.decode("utf-8", "replace"), timed_out


def _loader_answer(stdout: bytes) -> tuple[int, int, bytes | None] | None:
    """(exit code, output size, output bytes or None) from the loader's report, or None when it printed none."""
    for line in reversed(stdout.decode("ascii", "replace").splitlines()):
        parts = line.split(" ")
        if len(parts) == 4 and parts[0] == LOADER_MARKER and parts[1].isdigit() and parts[2].isdigit():
            try:
                content = None if parts[3] == "-" else base64.b64decode(parts[3], validate=True)
            except binascii.Error:
                continue
            return int(parts[1]), int(parts[2]), content
    return None
