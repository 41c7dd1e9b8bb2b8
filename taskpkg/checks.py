"""The catalogue of check ids: every finding the arena can report, with its stable id and severity.

Ids never change meaning once released. ARENA0xx: package files; ARENA1xx: task.md and its frontmatter;
ARENA2xx: the prompt body, roles and scenes; ARENA4xx: the Dockerfile; ARENA5xx: verifier.py; ARENA6xx: oracle/;
ARENA7xx: dynamic checks on a Docker engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskpkg.diagnostics import Diagnostic, Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True)
class Check:
    """One catalogue entry."""

    check_id: str
    severity: Severity
    title: str

    def found(
        self, message: str, fix: str, file: str | None = None, line: int | None = None, column: int | None = None
    ) -> Diagnostic:
        """Return a diagnostic of this check at the given place."""
        return Diagnostic(self.check_id, self.severity, message, fix, file, line, column)


_ENTRIES: tuple[tuple[str, Severity, str], ...] = (
    ("ARENA001", E, "package folder missing or not a folder"),
    ("ARENA002", E, "required file or folder missing"),
    ("ARENA003", E, "symbolic link escapes the package"),
    ("ARENA004", E, "package or file too large"),
    ("ARENA005", W, "binary file in the package"),
    ("ARENA006", E, "credential or private key in the package"),
    ("ARENA007", E, "special file in the package"),
    ("ARENA100", E, "task.md cannot be read as UTF-8 text"),
    ("ARENA101", W, "task.md starts with a byte-order mark"),
    ("ARENA102", W, "task.md has CRLF line endings"),
    ("ARENA103", E, "frontmatter missing or unterminated"),
    ("ARENA104", E, "YAML syntax error"),
    ("ARENA105", E, "YAML feature not allowed in frontmatter"),
    ("ARENA106", E, "frontmatter is not a mapping"),
    ("ARENA110", E, "unknown key"),
    ("ARENA111", E, "required key missing"),
    ("ARENA112", E, "value has the wrong type or form"),
    ("ARENA113", E, "name does not match the folder"),
    ("ARENA114", E, "unknown domain"),
    ("ARENA115", E, "limits are inconsistent"),
    ("ARENA116", E, "instance generator missing or misplaced"),
    ("ARENA118", E, "verifier data missing or misplaced"),
    ("ARENA119", W, "few instances"),
    ("ARENA120", E, "unsupported schema_version"),
    ("ARENA201", E, "prompt is empty"),
    ("ARENA202", E, "scaffold placeholder left in the package"),
    ("ARENA203", E, "template placeholder not allowed"),
    ("ARENA204", E, "scene names an undeclared role"),
    ("ARENA205", E, "scene names a missing section"),
    ("ARENA206", E, "roles or scenes are inconsistent"),
    ("ARENA207", W, "section not used by any scene"),
    ("ARENA401", E, "base image not pinned"),
    ("ARENA402", N, "base image not pinned by digest"),
    ("ARENA403", E, "Python package not pinned"),
    ("ARENA404", N, "Debian package not pinned"),
    ("ARENA405", E, "ADD from a URL"),
    ("ARENA406", E, "verifier, oracle or generator copied into the image"),
    ("ARENA407", E, "download piped into a shell"),
    ("ARENA408", E, "Dockerfile has no FROM"),
    ("ARENA501", E, "verifier.py is not valid Python"),
    ("ARENA502", E, "verifier reads the transcript or agent logs"),
    ("ARENA503", E, "verifier uses the network"),
    ("ARENA504", E, "verifier installs packages"),
    ("ARENA505", E, "verifier never writes the reward"),
    ("ARENA601", E, "oracle entrypoint missing or unsupported"),
    ("ARENA602", E, "oracle only copies or echoes an answer"),
    ("ARENA603", W, "oracle ships data files"),
    ("ARENA700", W, "dynamic checks skipped"),
    ("ARENA701", E, "image does not build within the build timeout"),
    ("ARENA702", E, "oracle does not solve an instance within its limits"),
    ("ARENA703", E, "doing nothing scores above the floor"),
    ("ARENA704", E, "same instance, different result"),
    ("ARENA705", E, "agent container reaches the network"),
    ("ARENA706", E, "verifier, oracle or generator inside the image"),
    ("ARENA707", E, "tamper probe scores above the floor"),
    ("ARENA708", W, "oracle close to its limits"),
    ("ARENA709", E, "verifier error"),
    ("ARENA710", E, "instance setup fails"),
)

CHECKS: dict[str, Check] = {cid: Check(cid, sev, title) for cid, sev, title in _ENTRIES}


def check(check_id: str) -> Check:
    """Return the catalogue entry for an id (KeyError for an unknown id: a programming error)."""
    return CHECKS[check_id]
