"""Results travel back from the job in its own log: the record and its items file, compressed, as numbered lines.

The GPU machine holds no GitHub credential, so the job cannot publish anything itself; the bot reads the block out
of the log through the backend (`tail logs`), then validates what it found as untrusted data.

    arena-job-result 1/3 <base64 of part of gzip(JSON)>
    ...
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
import zlib

PREFIX = "arena-job-result"
CHUNK_CHARS = 3000
MAX_DECODED_BYTES = 8 * 1024 * 1024
LINE = re.compile(rf"^{PREFIX} (\d+)/(\d+) ([A-Za-z0-9+/=]+)\s*$")


class ResultBlockError(ValueError):
    """The log holds no complete, well-formed result block; the message says what is wrong."""


def encode(payload: dict) -> list[str]:
    """The lines that carry the payload."""
    packed = base64.b64encode(gzip.compress(json.dumps(payload, sort_keys=True).encode(), mtime=0)).decode()
    chunks = [packed[i:i + CHUNK_CHARS] for i in range(0, len(packed), CHUNK_CHARS)] or [""]
    return [f"{PREFIX} {i + 1}/{len(chunks)} {chunk}" for i, chunk in enumerate(chunks)]


def decode(log: str) -> dict:
    """The payload of the last complete block in a log (a recovered job may print more than one)."""
    parts: dict[int, str] = {}
    total = None
    found: dict | None = None
    for line in log.splitlines():
        match = LINE.match(line.strip())
        if not match:
            continue
        index, count, chunk = int(match[1]), int(match[2]), match[3]
        if index == 1:
            parts, total = {}, count
        if total != count or not 1 <= index <= count:
            continue
        parts[index] = chunk
        if len(parts) == total:
            found = _unpack("".join(parts[i] for i in range(1, total + 1)))
            parts, total = {}, None
    if found is None:
        raise ResultBlockError("the job's log holds no complete result block (the job did not reach its end, or "
                               "its log was cut)")
    return found


def _unpack(packed: str) -> dict:
    try:
        compressed = base64.b64decode(packed, validate=True)
        inflater = zlib.decompressobj(wbits=31)
        raw = inflater.decompress(compressed, MAX_DECODED_BYTES + 1)
    except (binascii.Error, zlib.error) as exc:
        raise ResultBlockError(f"the result block is corrupt ({exc})") from None
    if len(raw) > MAX_DECODED_BYTES or inflater.unconsumed_tail:
        raise ResultBlockError(f"the result block is larger than {MAX_DECODED_BYTES} bytes")
    if not inflater.eof:
        raise ResultBlockError("the result block is corrupt (its compressed stream ends early)")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise ResultBlockError(f"the result block is corrupt (not JSON: {exc})") from None
    if not isinstance(payload, dict):
        raise ResultBlockError("the result block is not a JSON object")
    return payload
