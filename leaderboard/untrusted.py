"""Reading untrusted JSON inputs (job states, validation reports): bounded, regular files only, UTF-8 objects.

A file that cannot be used is skipped with a warning naming it, so one bad file never stops the site.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

MAX_BYTES = 4 * 1024 * 1024


def read_json_object(path: Path, warnings: list[str]) -> dict | None:
    """The file's JSON object, or None after appending a warning that names the file and the problem."""
    if path.is_symlink() or not path.is_file():
        warnings.append(f"{path}: skipped: not a regular file")
        return None
    if path.stat().st_size > MAX_BYTES:
        warnings.append(f"{path}: skipped: larger than {MAX_BYTES} bytes")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.append(f"{path}: skipped: not UTF-8 JSON ({exc})")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: skipped: expected a JSON object at the top level")
        return None
    return data


def parsed_files(folder: Path | None, pattern: str, parse: Callable[[dict], object | str],
                 warnings: list[str]) -> Iterator[tuple[Path, object]]:
    """(path, parse(data)) for every file matching pattern under folder that parses; parse returns a str to refuse
    the data, which becomes a warning naming the file."""
    if folder is None or not folder.is_dir():
        return
    for path in sorted(folder.glob(pattern)):
        data = read_json_object(path, warnings)
        if data is None:
            continue
        parsed = parse(data)
        if isinstance(parsed, str):
            warnings.append(f"{path}: skipped: {parsed}")
        else:
            yield path, parsed
