"""Score a checklist copied into /workspace/answer.txt against the words regenerated from ARENA_INSTANCE.

Runs as ``python3 -I verifier.py``. Partial credit: the share of lines holding the right word in the right place,
out of the longer of the answer and the checklist, so a word changed, dropped or added scores below 1. An answer
that is not a small UTF-8 text file of bare words (letters only, one a line), or that names a checklist word this
instance did not ask for, scores 0: another instance's checklist or a constant answer earns nothing. Writes
{"reward": share, "details": {...}} to ARENA_OUTPUT.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER_FILE = "answer.txt"
MAX_BYTES = 4096
WORD_RE = re.compile(r"[a-z]+")


class Rejected(Exception):
    """The answer cannot earn credit; the message says why."""


def read_lines(workspace: Path) -> list[str]:
    """The answer's lines (outer blank lines dropped), refusing anything but a small regular UTF-8 text file."""
    path = workspace / ANSWER_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Rejected(f"{ANSWER_FILE} was not written") from None
    except OSError as exc:
        raise Rejected(f"{ANSWER_FILE} cannot be opened as a regular file ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Rejected(f"{ANSWER_FILE} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{ANSWER_FILE} is larger than {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(f"{ANSWER_FILE} is not UTF-8 text") from None
    lines = [line.strip() for line in text.strip().splitlines()]
    if not lines:
        raise Rejected(f"{ANSWER_FILE} is empty")
    return lines


def judge(lines: list[str], words: list[str]) -> tuple[float, dict[str, Any]]:
    """The share of lines with the right word in the right place, and what was checked."""
    malformed = [line for line in lines if line and not WORD_RE.fullmatch(line.lower())]
    if malformed:
        raise Rejected(f"a line is not a bare word: {malformed[0][:40]!r}")
    foreign = sorted({line.lower() for line in lines} & (set(generate.VOCABULARY) - set(words)))
    if foreign:
        raise Rejected(f"names checklist words this instance did not ask for: {', '.join(foreign[:5])}")
    right = sum(1 for got, want in zip(lines, words, strict=False) if got.lower() == want)
    total = max(len(lines), len(words))
    return right / total, {"right": right, "lines": len(lines), "expected": len(words)}


def main() -> None:
    """Regenerate the checklist, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    output = Path(os.environ["ARENA_OUTPUT"])
    details: dict[str, Any] = {"instance": index}
    try:
        reward, checks = judge(read_lines(workspace), generate.words_for(index))
        details["checks"] = checks
    except Rejected as exc:
        reward = 0.0
        details["reason"] = str(exc)
    output.write_text(json.dumps({"reward": round(reward, 4), "details": details}), encoding="utf-8")


if __name__ == "__main__":
    main()
