"""Docker's hijacked attach and exec sockets: bytes in to the process's stdin, framed stdout/stderr out.

Without a TTY the engine multiplexes both output streams on one socket, each chunk behind an 8-byte header (stream
number, size). This is the one place that reads that framing.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from typing import Protocol, cast

_FRAME = struct.Struct(">BxxxL")
STDOUT, STDERR = 1, 2


class StreamEnded(OSError):
    """The process's output ended (it exited, or closed its stdout and stderr)."""


class _Closable(Protocol):
    """The engine's hijacked connection (docker's socket wrapper, or a socket): all this module closes."""

    def close(self) -> None: ...


class MultiplexedSocket:
    """One hijacked connection to a container process."""

    def __init__(self, raw: _Closable) -> None:
        self._raw = raw
        self._socket = cast(socket.socket, getattr(raw, "_sock", raw))  # docker's SocketIO wraps the socket

    def send(self, data: bytes, deadline: float | None = None) -> None:
        """Write to the process's stdin (TimeoutError if it will not take it all before the deadline)."""
        self._socket.settimeout(None if deadline is None else max(0.001, deadline - time.monotonic()))
        self._socket.sendall(data)

    def end_input(self) -> None:
        """Close the process's stdin (it reads end of file); output keeps coming."""
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)

    def frame(self, deadline: float) -> tuple[int, bytes]:
        """The next (stream, payload) chunk. Raises StreamEnded at the end, TimeoutError past the deadline."""
        stream, size = _FRAME.unpack(self._receive(_FRAME.size, deadline))
        return stream, self._receive(size, deadline)

    def close(self) -> None:
        """Drop the connection."""
        with contextlib.suppress(OSError):
            self._raw.close()

    def _receive(self, size: int, deadline: float) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no output before the deadline")
            self._socket.settimeout(remaining)
            chunk = self._socket.recv(size - len(chunks))  # TimeoutError past the deadline
            if not chunk:
                raise StreamEnded("the process's output ended")
            chunks.extend(chunk)
        return bytes(chunks)
