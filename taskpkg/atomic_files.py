"""Writing files so that a reader sees the old file or the new one, never half of one (shared by every layer)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write text beside the target, flush it to disk, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: object, sort_keys: bool = False) -> None:
    """Write JSON (indented, one trailing newline) atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=sort_keys) + "\n")
