"""Sites for the leaderboard tests: sample inputs with hostile text mixed in, built once, served over local HTTP."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import random
from collections.abc import Iterator
from pathlib import Path

from leaderboard.sample_data import sample_record, write_package, write_run_files, write_sample_set
from tests.support.serving import serving

HOSTILE_NAME = "hostile-input"
SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '<img src="x" onerror="window.__pwned = 1">'
BIDI = "\u202eevil\u202c"
HOSTILE_TITLE = f"{SCRIPT}{IMG}{BIDI}"[:120]
HOSTILE_AUTHOR = f'<b onmouseover="window.__pwned=1">Mallory</b>{BIDI}'
HOSTILE_BODY = (f"# Title {SCRIPT}\n\n{IMG}\n\n<iframe src=\"https://example.com\"></iframe>\n\n"
                "[click me](javascript:window.__pwned=1) [data](data:text/html,hi) [ok](https://example.com/ok)\n\n"
                "![tracker](https://example.com/pixel.png)\n\n"
                f"Bidi: {BIDI} done.\n\n" + "W" * 60_000 + "\n")
HOSTILE_HARDWARE = f"{IMG}{BIDI}{'H' * 150}"
BROKEN_FOLDER = 'x"><img src=x onerror=window.__pwned=1>'


def hostile_inputs(root: Path) -> None:
    """Add a package and a results record full of markup, bidi controls and huge strings, and a broken package."""
    write_package(root / "environments", HOSTILE_NAME, "finance", HOSTILE_TITLE, (HOSTILE_AUTHOR, "mallory"),
                  HOSTILE_BODY)
    (root / "environments" / BROKEN_FOLDER).mkdir()
    (root / "environments" / BROKEN_FOLDER / "task.md").write_text("no frontmatter\n", encoding="utf-8")
    record, items = sample_record(HOSTILE_NAME, random.Random(3), when="2026-12-01T00:00:00Z", effect=0.05)
    record["training"]["hardware"] = HOSTILE_HARDWARE
    write_run_files(root / "results", record, items)


def sample_site_inputs(root: Path, environments: int = 40, records: int = 100) -> dict[str, Path]:
    """Sample results, packages, jobs and one validation report, plus the hostile inputs."""
    sample = write_sample_set(root, environments, records, jobs=8)
    hostile_inputs(root)
    reports = root / "reports"
    reports.mkdir()
    name = sorted(p.name for p in (root / "environments").iterdir() if p.name.startswith(sample.environments[0]))[0]
    reports.joinpath("check.json").write_text(json.dumps({
        "report_version": 1, "arena_version": "0.1.0", "mode": "full", "started_at": "2026-11-30T10:00:00Z",
        "duration_s": 42.0, "verdict": "pass",
        "summary": {"packages": 1, "passed": 1, "failed": 0, "errors": 0, "warnings": 0, "infos": 0},
        "packages": [{"path": f"environments/{name}", "name": name, "title": "t", "domain": "finance",
                      "instances": 500, "verdict": "pass", "counts": {"error": 0, "warning": 1, "info": 0},
                      "duration_ms": 4000, "diagnostics": [],
                      "checks": [{"check_id": "ARENA001", "title": "package folder", "status": "passed"},
                                 {"check_id": "ARENA300", "title": "oracle passes", "status": "passed"},
                                 {"check_id": "ARENA310", "title": "nop fails", "status": "warned"}],
                      "trials": [{"check_id": "ARENA300", "agent": "oracle", "instance": 0, "outcome": "ok",
                                  "duration_s": 3.25},
                                 {"check_id": "ARENA310", "agent": "nop", "instance": 0, "outcome": "ok",
                                  "duration_s": 1.5}]}]}), encoding="utf-8")
    return {"environments_dir": root / "environments", "results_dir": root / "results", "jobs_dir": root / "jobs",
            "reports_dir": reports}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log."""


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """The folder over HTTP on 127.0.0.1; yields the base URL (ending in /)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as base:
        yield f"{base}/"
