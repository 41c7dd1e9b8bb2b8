"""The in-container half of the sandbox's command channel (standard library only; copied into each container).

It reads length-prefixed JSON requests on stdin and answers each on stdout, so one long-lived `docker exec` carries
every command of an episode instead of one exec per command. Requests:

    {"op": "run", "command": str, "timeout": float, "max_output": int, "cwd": str, "env": {..}}
    {"op": "write", "path": str, "data": base64, "mode": int}
    {"op": "read", "path": str, "max_bytes": int}

Every request is answered with one JSON object; an unusable request gets {"error": "..."}.
"""

import base64
import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time

HEADER = struct.Struct(">I")
MAX_REQUEST = 64 * 1024 * 1024
EXIT_GRACE_S = 0.2


def read_exactly(stream, size):
    """Read size bytes, or None at end of input."""
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def send(out, message):
    """Write one length-prefixed JSON answer."""
    body = json.dumps(message).encode()
    out.write(HEADER.pack(len(body)) + body)
    out.flush()


def run(request):
    """Run a shell command with a deadline, capping each output stream and killing its whole process group."""
    started = time.monotonic()
    env = dict(request.get("env") or {})
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env.setdefault("HOME", os.path.expanduser("~"))
    try:
        process = subprocess.Popen(
            ["sh", "-c", request["command"]], cwd=request.get("cwd") or None, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:
        return {"exit_code": 127, "stdout": "", "stderr": str(exc), "timed_out": False, "truncated": False,
                "duration_s": time.monotonic() - started}
    deadline = started + float(request.get("timeout", 30))
    cap = int(request.get("max_output", 65536))
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    open_fds = set(buffers)
    truncated = timed_out = False
    exited_at = None
    while open_fds:
        now = time.monotonic()
        if now >= deadline:
            timed_out = process.poll() is None
            break
        if process.poll() is not None:
            exited_at = exited_at or now
            if now - exited_at > EXIT_GRACE_S:  # a background child still holds the pipes: stop listening
                break
        ready, _, _ = select.select(list(open_fds), [], [], min(0.05, deadline - now))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            room = cap - len(buffers[fd])
            if room > 0:
                buffers[fd].extend(chunk[:room])
            truncated = truncated or len(chunk) > room
    if process.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    code = process.wait()
    process.stdout.close()
    process.stderr.close()
    return {
        "exit_code": code,
        "stdout": bytes(buffers[out_fd]).decode("utf-8", "replace"),
        "stderr": bytes(buffers[err_fd]).decode("utf-8", "replace"),
        "timed_out": timed_out,
        "truncated": truncated,
        "duration_s": time.monotonic() - started,
    }


def write(request):
    """Write a file (creating folders) with the server's own user."""
    path = request["path"]
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(base64.b64decode(request["data"]))
    os.chmod(path, int(request.get("mode", 0o644)))
    return {"ok": True}


def read(request):
    """Read at most max_bytes of a file; missing files are reported, not raised."""
    path, limit = request["path"], int(request.get("max_bytes", 1 << 20))
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return {"exists": False, "error": str(exc)}
    return {"exists": True, "data": base64.b64encode(data[:limit]).decode(), "truncated": len(data) > limit}


HANDLERS = {"run": run, "write": write, "read": read}


def main():
    """Serve requests until stdin closes."""
    source, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = read_exactly(source, HEADER.size)
        if header is None:
            return
        (size,) = HEADER.unpack(header)
        if size > MAX_REQUEST:
            send(out, {"error": "request too large"})
            return
        body = read_exactly(source, size)
        if body is None:
            return
        try:
            request = json.loads(body)
            answer = HANDLERS[request["op"]](request)
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        send(out, answer)


if __name__ == "__main__":
    main()
