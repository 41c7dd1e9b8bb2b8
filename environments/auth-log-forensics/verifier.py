"""Verifier for auth-log-forensics: regenerate the instance and compare /workspace/findings.json exactly.

The expected answer is recomputed from the generator's structured records for ARENA_INSTANCE; nothing in the
workspace except findings.json is read, so edited logs cannot change the expected answer. Reward is 1.0 only for an
exact match (order-insensitive), otherwise 0.0 with the reasons in details.
"""

from __future__ import annotations

import ipaddress
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

MAX_BYTES = 4 * 1024 * 1024
ENTRY_KEYS = {"host", "user", "ip", "first_login"}


class Rejected(Exception):
    """The agent's output is unusable; the message says why."""


def read_output(path: Path) -> Any:
    """Read and parse the agent's JSON file defensively (regular file only, size-capped)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Rejected(f"{path} does not exist") from None
    except OSError as exc:
        raise Rejected(f"cannot stat {path}: {exc.__class__.__name__}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Rejected(f"{path} is not a regular file")
    if info.st_size > MAX_BYTES:
        raise Rejected(f"{path} is larger than {MAX_BYTES} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise Rejected(f"cannot read {path}: {exc.__class__.__name__}") from None
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{path} is larger than {MAX_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Rejected(f"{path} is not valid UTF-8 JSON: {exc.__class__.__name__}") from None


def short(value: str, limit: int = 80) -> str:
    """Trim agent-controlled text before it goes into details (which are capped at 64 KiB)."""
    return value if len(value) <= limit else value[:limit] + "..."


def canonical_ip(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise Rejected(f"{where} is not a string")
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise Rejected(f"{where} is not an IP address: {value[:60]!r}") from None


def parse_findings(data: Any) -> tuple[dict[tuple[str, str], tuple[str, str]], set[str]]:
    """Validate the findings document and return it in the same shape as generate.expected_findings."""
    if not isinstance(data, dict):
        raise Rejected("findings.json is not a JSON object")
    if set(data) != {"compromised", "block_ips"}:
        got = [short(k, 40) for k in sorted(data)[:10]]
        raise Rejected(f"top-level keys must be exactly compromised and block_ips, got {got}")
    entries, blocks = data["compromised"], data["block_ips"]
    if not isinstance(entries, list) or not isinstance(blocks, list):
        raise Rejected("compromised and block_ips must be lists")
    compromised: dict[tuple[str, str], tuple[str, str]] = {}
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
            raise Rejected(f"compromised[{n}] must be an object with exactly the keys {sorted(ENTRY_KEYS)}")
        if not all(isinstance(entry[k], str) for k in ("host", "user", "first_login")):
            raise Rejected(f"compromised[{n}]: host, user and first_login must be strings")
        key = (entry["host"], entry["user"])
        if key in compromised:
            raise Rejected(f"compromised lists ({short(key[0])}, {short(key[1])}) more than once")
        compromised[key] = (canonical_ip(entry["ip"], f"compromised[{n}].ip"), entry["first_login"])
    block: set[str] = set()
    for n, value in enumerate(blocks):
        ip = canonical_ip(value, f"block_ips[{n}]")
        if ip in block:
            raise Rejected(f"block_ips lists {ip} more than once")
        block.add(ip)
    return compromised, block


def score(workspace: Path, index: int) -> dict[str, Any]:
    inst = generate.build_instance(index)
    want_comp, want_block = generate.expected_findings(inst)
    want_comp = {k: (str(ipaddress.ip_address(ip)), ts) for k, (ip, ts) in want_comp.items()}
    try:
        got_comp, got_block = parse_findings(read_output(workspace / "findings.json"))
    except Rejected as exc:
        return {"reward": 0.0, "details": {"error": str(exc)}}
    details: dict[str, Any] = {
        "expected_compromised": len(want_comp),
        "expected_block_ips": len(want_block),
    }
    missing = sorted(set(want_comp) - set(got_comp))
    extra = sorted(set(got_comp) - set(want_comp))
    wrong = sorted(k for k in set(want_comp) & set(got_comp) if want_comp[k] != got_comp[k])
    if missing:
        details["missing_compromised"] = [list(k) for k in missing][:20]
    if extra:
        details["unexpected_compromised"] = [[short(h), short(u)] for h, u in extra[:20]]
    if wrong:
        details["wrong_ip_or_first_login"] = [list(k) for k in wrong][:20]
    if want_block - got_block:
        details["missing_block_ips"] = len(want_block - got_block)
    if got_block - want_block:
        details["unexpected_block_ips"] = sorted(got_block - want_block)[:20]
    ok = not (missing or extra or wrong or want_block != got_block)
    details["result"] = "exact match" if ok else "mismatch"
    return {"reward": 1.0 if ok else 0.0, "details": details}


def main() -> None:
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    result = score(workspace, index)
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
