"""The report artifact is untrusted: bounded, free of path tricks, schema-valid and self-consistent, or refused
with a reason the PR comment can show."""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from bot.report_input import MAX_BYTES, ReportError, load_report, parse_report


def good_report() -> dict:
    return {"report_version": 1, "arena_version": "0.1.0", "mode": "static", "started_at": "2025-01-01T00:00:00+00:00",
            "duration_s": 0.1, "verdict": "fail",
            "summary": {"packages": 1, "passed": 0, "failed": 1, "errors": 1, "warnings": 0, "infos": 0},
            "packages": [{"path": "environments/sample-task", "name": "sample-task", "title": "t", "domain": "finance",
                          "instances": 10, "verdict": "fail", "counts": {"error": 1, "warning": 0, "info": 0},
                          "duration_ms": 1.0, "trials": [],
                          "diagnostics": [{"check_id": "ARENA202", "severity": "error", "message": "m", "fix": "f",
                                           "file": "task.md", "line": 3, "column": None}],
                          "checks": [{"check_id": "ARENA202", "title": "t", "status": "failed"}]}]}


def write_zip(path: Path, members: dict[str, bytes], links: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


def test_a_folder_a_zip_or_the_file_itself(tmp_path: Path) -> None:
    data = json.dumps(good_report()).encode()
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "report.json").write_bytes(data)
    zipped = write_zip(tmp_path / "report.zip", {"report.json": data})
    (tmp_path / "zip-in-folder").mkdir()
    write_zip(tmp_path / "zip-in-folder" / "artifact.zip", {"report.json": data})
    for location in ("folder", "report.zip", "zip-in-folder", "folder/report.json"):
        assert load_report(tmp_path / location) == good_report()
    assert load_report(str(zipped))["verdict"] == "fail"


@pytest.mark.parametrize(("members", "links", "reason"), [
    ({"../report.json": b"{}"}, (), "path outside its folder"),
    ({"/abs/report.json": b"{}"}, (), "path outside its folder"),
    ({"C:/report.json": b"{}"}, (), "path outside its folder"),
    ({"report.json": b"{}"}, ("evil",), "symbolic link"),
    ({"other.json": b"{}"}, (), "has no report.json"),
    ({"report.json": b"x" * (MAX_BYTES + 1)}, (), "more than 5 MiB"),
])
def test_zip_tricks_are_refused(tmp_path: Path, members: dict[str, bytes], links: tuple[str, ...],
                                reason: str) -> None:
    with pytest.raises(ReportError, match=reason):
        load_report(write_zip(tmp_path / "a.zip", members, links))


def test_folder_tricks_are_refused(tmp_path: Path) -> None:
    (tmp_path / "outside.json").write_text(json.dumps(good_report()))
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(tmp_path / "outside.json", linked / "report.json")
    with pytest.raises(ReportError, match="symbolic link"):
        load_report(linked)
    with pytest.raises(ReportError, match="symbolic link"):
        load_report(linked / "report.json")
    big = tmp_path / "big"
    big.mkdir()
    (big / "report.json").write_bytes(b" " * (MAX_BYTES + 1))
    with pytest.raises(ReportError, match="larger than 5 MiB"):
        load_report(big)
    for missing in (None, "", tmp_path / "nowhere"):
        with pytest.raises(ReportError, match="no report artifact was downloaded"):
            load_report(missing)


@pytest.mark.parametrize(("data", "reason"), [
    (b"\xff\xfe", "not valid UTF-8 JSON"),
    (b"[" * 100_000, "not valid UTF-8 JSON"),
    (b'{"report_version": NaN}', "not valid UTF-8 JSON"),
    (b'{"report_version": 2}', "does not match report schema v1"),
])
def test_bad_bytes_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(ReportError, match=reason):
        parse_report(data)


def test_schema_errors_name_the_place(tmp_path: Path) -> None:
    report = good_report()
    report["packages"][0]["diagnostics"][0]["message"] = "m" * 5000
    with pytest.raises(ReportError, match="at packages/0/diagnostics/0/message"):
        parse_report(json.dumps(report).encode())


@pytest.mark.parametrize("lie", ["package verdict", "error count", "top verdict"])
def test_a_report_that_contradicts_itself_is_refused(lie: str) -> None:
    report = good_report()
    if lie == "package verdict":
        report["packages"][0]["verdict"] = "pass"
    elif lie == "error count":
        report["packages"][0]["counts"]["error"] = 0
    else:
        report["verdict"] = "pass"
    with pytest.raises(ReportError, match="contradicts"):
        parse_report(json.dumps(report).encode())
