"""Read the validation report artifact as untrusted input: bounded, no path tricks, schema-validated, consistent.

The artifact is what `actions/download-artifact` left in ARENA_REPORT_DIR: a folder holding report.json, a zip
holding it, or the file itself. Anything else (too big, a link, an absolute or `..` member, not UTF-8 JSON, not the
report schema, a verdict that contradicts its own findings: taskpkg.check_report.read_check_report) raises
ReportError with a reason fit for a PR comment. `read_report` is the one call the bot makes: artifact in, a typed
`taskpkg.check_report.Report` out.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any, cast

from taskpkg.check_report import Report, ReportFormatError, read_check_report

REPORT_NAME = "report.json"
MAX_BYTES = 5 * 1024 * 1024
MAX_ENTRIES = 200


class ReportError(Exception):
    """The report cannot be used; the message says why, in words for the PR."""


def load_report(location: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The validated report JSON found at location (a folder, a .zip or report.json)."""
    return parse_report(_artifact_bytes(location))


def read_report(location: str | os.PathLike[str] | None) -> Report:
    """The trust boundary for the validation report: the artifact at location, bounded, decoded and validated, as
    the typed Report the bot renders its verdict from."""
    return _typed(_decode(_artifact_bytes(location)))


def parse_report(data: bytes) -> dict[str, Any]:
    """Decode, schema-validate and cross-check report bytes."""
    report = _decode(data)
    _typed(report)
    return cast(dict[str, Any], report)  # read_check_report accepted it: a JSON object


def _artifact_bytes(location: str | os.PathLike[str] | None) -> bytes:
    if not location:
        raise ReportError("no report artifact was downloaded (the validation run may have stopped before writing it)")
    path = Path(location)
    if path.is_symlink():
        raise ReportError("the report artifact is a symbolic link")
    if path.is_dir():
        return _from_folder(path)
    if path.is_file() and zipfile.is_zipfile(path):
        return _from_zip(path)
    if path.is_file():
        return _read_bounded(path)
    raise ReportError("no report artifact was downloaded (the validation run may have stopped before writing it)")


def _decode(data: bytes) -> object:
    if len(data) > MAX_BYTES:
        raise ReportError(f"the report is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReportError(f"the report is not valid UTF-8 JSON ({type(exc).__name__})") from None


def _typed(report: object) -> Report:
    try:
        return read_check_report(report)
    except ReportFormatError as exc:
        raise ReportError(f"the report does not match report schema v1 at {exc.where}: {exc.problem}") from None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _from_folder(folder: Path) -> bytes:
    entries = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            entries += 1
            if entries > MAX_ENTRIES:
                raise ReportError("the report artifact holds too many files")
            if os.path.islink(os.path.join(root, name)):
                raise ReportError("the report artifact contains a symbolic link")
    report = folder / REPORT_NAME
    if report.is_file():
        return _read_bounded(report)
    zips = sorted(folder.glob("*.zip"))
    if len(zips) == 1 and zipfile.is_zipfile(zips[0]):
        return _from_zip(zips[0])
    raise ReportError(f"the report artifact has no {REPORT_NAME}")


def _read_bounded(path: Path) -> bytes:
    if not stat.S_ISREG(path.lstat().st_mode):
        raise ReportError(f"{REPORT_NAME} is not a regular file")
    with path.open("rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ReportError(f"the report is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return data


def _from_zip(path: Path) -> bytes:
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_ENTRIES:
                raise ReportError("the report artifact holds too many files")
            for member in members:
                _check_member(member)
            if sum(m.file_size for m in members) > MAX_BYTES:
                raise ReportError(f"the report artifact unpacks to more than {MAX_BYTES // (1024 * 1024)} MiB")
            wanted = [m for m in members if m.filename == REPORT_NAME]
            if not wanted:
                raise ReportError(f"the report artifact has no {REPORT_NAME}")
            with archive.open(wanted[0]) as handle:
                data = handle.read(MAX_BYTES + 1)
    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
        raise ReportError(f"the report artifact is not a readable zip ({type(exc).__name__})") from None
    if len(data) > MAX_BYTES:
        raise ReportError(f"the report is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return data


def _check_member(member: zipfile.ZipInfo) -> None:
    name = member.filename
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or ":" in name or name.startswith("/"):
        raise ReportError("the report artifact contains a path outside its folder")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise ReportError("the report artifact contains a symbolic link")
