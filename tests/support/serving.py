"""Local HTTP servers for tests, served on a background thread that stops promptly."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

POLL_S = 0.02  # how often serve_forever looks for shutdown(): the default 0.5 s ends every test half a second late


def start_serving(server: ThreadingHTTPServer, name: str = "test-server") -> None:
    """Serve on a daemon thread until stop_serving."""
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(POLL_S,), name=name, daemon=True).start()


def stop_serving(server: ThreadingHTTPServer) -> None:
    """Stop the thread and close the socket."""
    server.shutdown()
    server.server_close()


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Serve while the block runs; yields the base URL http://127.0.0.1:PORT."""
    start_serving(server)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop_serving(server)
