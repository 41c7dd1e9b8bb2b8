"""Results travel back from the job in its own log: the record and its items file, compressed, as numbered lines.

The GPU machine holds no GitHub credential, so the job cannot publish anything itself; the bot reads the block out
of the log through the backend (`tail logs`), then validates what it found as untrusted data. The channel is
strict: the block is the last thing the job prints, its lines are consecutive, and a log with two different blocks
is refused (package output never reaches the job's log: launch.job_run keeps it in per-phase files).

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
    """The payload of the block that ends the log. Refused: no complete block; a block whose lines are not
    consecutive and in order; anything but blank lines after the last block; two complete blocks that differ (a
    recovered job prints the same block again, never another)."""
    blocks: list[str] = []
    parts: list[str] = []
    last_line = ""
    for line in log.splitlines():
        text = line.strip()
        if not text:
            continue
        last_line = text
        match = LINE.match(text)
        if match is None:
            if parts:
                raise ResultBlockError("the result block is interrupted by other output (its lines must be "
                                       "consecutive)")
            continue
        index, count, chunk = int(match[1]), int(match[2]), match[3]
        if index != len(parts) + 1 or count < index:
            raise ResultBlockError(f"the result block's line {index}/{count} is out of order")
        parts.append(chunk)
        if index == count:
            blocks.append("".join(parts))
            parts = []
    if parts:
        raise ResultBlockError("the job's log ends inside a result block (the job did not finish printing it, or "
                               "its log was cut)")
    if not blocks:
        raise ResultBlockError("the job's log holds no complete result block (the job did not reach its end, or "
                               "its log was cut)")
    if not LINE.match(last_line):
        raise ResultBlockError("the result block is not the last thing the job printed")
    if len(set(blocks)) > 1:
        raise ResultBlockError(f"the job's log holds {len(set(blocks))} different result blocks; a job prints one")
    return _unpack(blocks[-1])


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
