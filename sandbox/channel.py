"""The host half of the command channel: one long-lived exec running shell_server.py inside a container.

The server's source travels as `python3 -I -S -c <source>`, so nothing is copied into the container for it.

Requests and answers are length-prefixed JSON on the exec's stdin and stdout (sandbox.streams reads the engine's
framing); see shell_server.py for the operations.
"""

from __future__ import annotations

import base64
import functools
import json
import struct
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import docker
from docker.models.containers import Container

from sandbox.streams import STDERR, MultiplexedSocket

_HEADER = struct.Struct(">I")
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

    def to_dict(self) -> dict[str, Any]:
        """JSON form for transcripts."""
        return dict(self.__dict__)


class Channel:
    """A request/answer channel to a shell server running in `container` as `user`."""

    def __init__(self, client: docker.DockerClient, container: Container, user: str) -> None:
        command = ["python3", "-I", "-S", "-c", script_source("shell_server.py")]
        exec_id = client.api.exec_create(container.id, command, stdin=True, stdout=True, stderr=True, user=user,
                                         workdir="/")["Id"]
        self._connection = MultiplexedSocket(client.api.exec_start(exec_id, socket=True))
        self._pending = b""
        self._stderr = b""

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
        self._connection.end_input()
        self._connection.close()

    def _ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        body = json.dumps(request).encode()
        deadline = time.monotonic() + timeout_s
        try:
            self._connection.send(_HEADER.pack(len(body)) + body)
            (size,) = _HEADER.unpack(self._read_stdout(_HEADER.size, deadline))
            answer: dict[str, Any] = json.loads(self._read_stdout(size, deadline))
        except (OSError, ValueError) as exc:
            said = (self.stderr_tail() + self._pending[-2000:].decode("utf-8", "replace")).strip()
            raise ChannelClosed(f"the sandbox's command channel broke: {exc}" + (f": {said}" if said else "")) from None
        if "error" in answer and len(answer) == 1:
            raise ChannelClosed(f"the sandbox's command server refused a request: {answer['error']}")
        return answer

    def _read_stdout(self, size: int, deadline: float) -> bytes:
        while len(self._pending) < size:
            stream, payload = self._connection.frame(deadline)
            if stream == STDERR:
                self._stderr = (self._stderr + payload)[-4096:]
            else:
                self._pending += payload
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def stderr_tail(self) -> str:
        """The last of what the server printed on stderr, for error messages."""
        return self._stderr[-2000:].decode("utf-8", "replace")


@functools.cache
def script_source(name: str) -> str:
    """The source of one of the sandbox's in-container scripts (shell_server.py, verifier_loader.py)."""
    return resources.files("sandbox").joinpath(name).read_text()
