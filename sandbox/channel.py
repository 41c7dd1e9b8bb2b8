"""The host half of the command channel: one long-lived exec running shell_server.py inside a container.

The server's source travels as `python3 -I -S -c <source>`, so nothing is copied into the container for it.

This is the only module that touches Docker's hijacked exec socket. Requests and answers are length-prefixed JSON
inside Docker's multiplexed stream (8-byte frame headers), see shell_server.py for the operations.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import socket
import struct
import time
from dataclasses import dataclass
from importlib import resources

import docker
from docker.models.containers import Container

_HEADER = struct.Struct(">I")
_FRAME = struct.Struct(">BxxxL")
_STDOUT, _STDERR = 1, 2
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ChannelClosed(RuntimeError):
    """The in-container server is gone (the container stopped, or the agent killed it)."""


@dataclass(frozen=True)
class CommandResult:
    """What one shell command did."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration_s: float

    def to_dict(self) -> dict:
        """JSON form for transcripts."""
        return dict(self.__dict__)


class Channel:
    """A request/answer channel to a shell server running in `container` as `user`."""

    def __init__(self, client: docker.DockerClient, container: Container, user: str) -> None:
        self._container = container
        command = ["python3", "-I", "-S", "-c", script_source("shell_server.py")]
        exec_id = client.api.exec_create(container.id, command, stdin=True, stdout=True, stderr=True, user=user,
                                         workdir="/")["Id"]
        raw = client.api.exec_start(exec_id, socket=True)
        self._socket: socket.socket = getattr(raw, "_sock", raw)
        self._raw = raw
        self._pending = b""
        self._stderr = bytearray()

    def run(self, command: str, timeout_s: float, *, cwd: str = "/workspace", env: dict[str, str] | None = None,
            max_output: int = 65536) -> CommandResult:
        """Run `sh -c command` with a deadline; output beyond max_output bytes per stream is dropped."""
        environment = {"PATH": DEFAULT_PATH, **(env or {})}
        answer = self._ask({"op": "run", "command": command, "timeout": timeout_s, "cwd": cwd, "env": environment,
                            "max_output": max_output}, timeout_s + 30)
        return CommandResult(answer["exit_code"], answer["stdout"], answer["stderr"], answer["timed_out"],
                             answer["truncated"], answer["duration_s"])

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace a file, as the channel's user."""
        self._ask({"op": "write", "path": path, "data": base64.b64encode(data).decode(), "mode": mode}, 60)

    def read_file(self, path: str, max_bytes: int) -> bytes | None:
        """Read up to max_bytes of a file (None when it does not exist)."""
        answer = self._ask({"op": "read", "path": path, "max_bytes": max_bytes}, 60)
        return base64.b64decode(answer["data"]) if answer.get("exists") else None

    def close(self) -> None:
        """End the server (closing its stdin) and the connection."""
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            self._raw.close()

    def _ask(self, request: dict, timeout_s: float) -> dict:
        body = json.dumps(request).encode()
        deadline = time.monotonic() + timeout_s
        try:
            self._socket.sendall(_HEADER.pack(len(body)) + body)
            (size,) = _HEADER.unpack(self._read_stdout(_HEADER.size, deadline))
            answer = json.loads(self._read_stdout(size, deadline))
        except (OSError, ValueError) as exc:
            raise ChannelClosed(f"the sandbox's command channel broke: {exc}; {self.stderr_tail()}") from None
        if "error" in answer and len(answer) == 1:
            raise ChannelClosed(f"the sandbox's command server refused a request: {answer['error']}")
        return answer

    def _read_stdout(self, size: int, deadline: float) -> bytes:
        while len(self._pending) < size:
            stream, payload = self._next_frame(deadline)
            if stream == _STDERR:
                self._stderr.extend(payload[-4096:])
            else:
                self._pending += payload
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def _next_frame(self, deadline: float) -> tuple[int, bytes]:
        stream, size = _FRAME.unpack(self._recv_exactly(_FRAME.size, deadline))
        return stream, self._recv_exactly(size, deadline)

    def _recv_exactly(self, size: int, deadline: float) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise OSError("no answer before the deadline")
            self._socket.settimeout(remaining)
            chunk = self._socket.recv(size - len(chunks))
            if not chunk:
                raise OSError("the server closed the channel")
            chunks.extend(chunk)
        return bytes(chunks)

    def stderr_tail(self) -> str:
        """The last of what the server printed on stderr, for error messages."""
        return bytes(self._stderr[-2000:]).decode("utf-8", "replace")


@functools.cache
def script_source(name: str) -> str:
    """The source of one of the sandbox's in-container scripts (shell_server.py, verifier_loader.py)."""
    return resources.files("sandbox").joinpath(name).read_text()
