"""The in-container start of verification (run as `python3 -I -S -c <this source>`; builtin modules only).

The verification container starts with this loader and nothing else. It reads one request on stdin, a sequence of
length-prefixed fields (`<decimal length>:<bytes>`):

    output, max_bytes, cwd, argument count, the verifier's arguments..., then (path, content) per file

writes the files (the verifier and its data, which exist in the container only from now on), creates the output's
folder empty, runs the verifier with the container's environment (its stdout joined to stderr, so the loader's stdout
stays its own), then prints one line on stdout:

    ARENA-VERIFIER <exit code> <size of the output file> <its content in base64, or - >

The content is `-` when the output is missing, not a regular file, or max_bytes or larger. No file crosses through
the engine's archive calls. It imports nothing that is not built into the interpreter, so it starts in a few ms.
"""

import binascii
import os
import sys

MARKER = "ARENA-VERIFIER"


def read_field(stream):
    """One `<length>:<bytes>` field, or None at the end of the input."""
    digits = b""
    while True:
        char = stream.read(1)
        if not char:
            return None
        if char == b":":
            break
        digits += char
    size = int(digits)
    data = stream.read(size)
    if len(data) != size:
        raise ValueError("the request ended inside a field")
    return data


def write_file(path, content):
    """Create a file, 0644 (and its folders, 0755)."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, mode=0o755, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)
    os.chmod(path, 0o644)


def run(arguments, cwd):
    """Run the verifier with stdin empty and stdout joined to stderr; its exit code (128 + n when killed by n)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            empty = os.open(os.devnull, os.O_RDONLY)
            os.dup2(empty, 0)
            os.dup2(2, 1)
            os.execvp(arguments[0], arguments)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def read_output(path, max_bytes):
    """The output file's size, and its bytes unless it is missing, not a regular file, or max_bytes or larger."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return 0, None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if (info.st_mode & 0o170000) != 0o100000 or info.st_size >= max_bytes:
            return info.st_size, None
        return info.st_size, handle.read(max_bytes)


def main():
    """Unpack, run the verifier, report."""
    source = sys.stdin.buffer
    output = read_field(source).decode()
    max_bytes = int(read_field(source))
    cwd = read_field(source).decode()
    arguments = [read_field(source).decode() for _ in range(int(read_field(source)))]
    while True:
        path = read_field(source)
        if path is None:
            break
        write_file(path.decode(), read_field(source))
    os.makedirs(os.path.dirname(output), mode=0o755, exist_ok=True)
    sys.stderr.flush()
    code = run(arguments, cwd)
    size, content = read_output(output, max_bytes)
    encoded = binascii.b2a_base64(content, newline=False).decode() if content is not None else "-"
    sys.stdout.write(f"{MARKER} {code} {size} {encoded}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
