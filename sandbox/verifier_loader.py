"""The in-container start of verification (standard library only; run as `python3 -I -S -c <this source>`).

The verification container starts with this loader and nothing else. It reads one JSON request on stdin:

    {"files": [[path, base64, mode], ...], "output": str, "max_bytes": int, "command": [str, ...], "cwd": str}

writes the files (the verifier and its data, which exist in the container only from now on), creates the output's
folder empty, runs `command` with the container's environment (its stdout joined to stderr, so the loader's stdout
stays its own), then prints one line on stdout:

    ARENA-VERIFIER {"exit_code": int, "reward": base64 or null, "size": int}

`reward` is null when the output is missing or not a regular file, and when it is max_bytes or larger (then `size`
says how large). Everything here is the arena's; the engine sends the request and reads the line, so no file is
copied in or out of the container through the engine's archive calls.
"""

import base64
import json
import os
import stat
import subprocess
import sys

MARKER = "ARENA-VERIFIER "


def write_files(files):
    """Create each file (and its folders, 0755) with its mode."""
    for path, data, mode in files:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, mode=0o755, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))
        os.chmod(path, mode)


def read_output(path, max_bytes):
    """The output file's bytes (None when missing, not a regular file, or max_bytes or larger) and its size."""
    try:
        info = os.lstat(path)
    except OSError:
        return None, 0
    if not stat.S_ISREG(info.st_mode) or info.st_size >= max_bytes:
        return None, info.st_size
    with open(path, "rb") as handle:
        return handle.read(max_bytes), info.st_size


def main():
    """Unpack, run the verifier, report."""
    request = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    write_files(request.pop("files"))
    os.makedirs(os.path.dirname(request["output"]), mode=0o755, exist_ok=True)
    sys.stderr.flush()
    code = subprocess.call(request["command"], cwd=request["cwd"], stdin=subprocess.DEVNULL,
                           stdout=sys.stderr.fileno())
    data, size = read_output(request["output"], request["max_bytes"])
    answer = {"exit_code": code, "reward": base64.b64encode(data).decode() if data is not None else None,
              "size": size}
    sys.stdout.write(MARKER + json.dumps(answer) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
