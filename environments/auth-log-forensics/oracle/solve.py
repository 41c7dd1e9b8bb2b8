"""Reference solution for auth-log-forensics: parse the rotated auth logs and apply the detection rules."""

from __future__ import annotations

import gzip
import ipaddress
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

LINE = re.compile(r"^(\S+) (\S+) ([^\s:\[]+)(?:\[\d+\])?: (.*)$")
FAILED = re.compile(r"^Failed password for (?:invalid user )?(\S+) from (\S+) port \d+ ssh2$")
REPEATED = re.compile(
    r"^message repeated (\d+) times: \[ Failed password for (?:invalid user )?(\S+) from (\S+) "
    r"port \d+ ssh2\]$"
)
ACCEPTED = re.compile(r"^Accepted \S+ for (\S+) from (\S+) port \d+ ssh2")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def read_jail(path: Path) -> tuple[int, int, list[str]]:
    """Return (maxretry, findtime in seconds, ignoreip networks) from a fail2ban jail.local."""
    values: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if "=" in line and not line.startswith("["):
            key, value = (part.strip() for part in line.split("=", 1))
            values[key] = value
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    findtime = values["findtime"]
    seconds = int(findtime[:-1]) * units[findtime[-1]] if findtime[-1] in units else int(findtime)
    return int(values["maxretry"]), seconds, values.get("ignoreip", "").split()


def log_lines(folder: Path) -> list[str]:
    """All lines of auth.log and its rotations, oldest file first."""

    def age(p: Path) -> int:
        parts = p.name.split(".")
        return int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0

    lines: list[str] = []
    for path in sorted(folder.glob("auth.log*"), key=age, reverse=True):
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        lines.extend(data.decode().splitlines())
    return lines


def main() -> None:
    work = Path.cwd()
    maxretry, findtime, ignore = read_jail(work / "jail.local")
    nets = [ipaddress.ip_network(n, strict=False) for n in ignore]
    attempts: dict[str, list[int]] = {}
    brute: set[str] = set()
    compromised: dict[tuple[str, str], dict[str, str]] = {}
    for line in log_lines(work / "logs"):
        m = LINE.match(line)
        if not m or m.group(3) != "sshd":
            continue
        stamp, host, _, msg = m.groups()
        when = (datetime.fromisoformat(stamp) - EPOCH) // timedelta(microseconds=1)
        count, ip = 0, ""
        if f := FAILED.match(msg):
            count, ip = 1, f.group(2)
        elif r := REPEATED.match(msg):
            count, ip = int(r.group(1)), r.group(3)
        elif a := ACCEPTED.match(msg):
            user, src = a.group(1), a.group(2)
            if src in brute and (host, user) not in compromised:
                compromised[(host, user)] = {"host": host, "user": user, "ip": src, "first_login": stamp}
            continue
        if count:
            seen = attempts.setdefault(ip, [])
            seen.extend([when] * count)
            if len(seen) >= maxretry and seen[-1] - seen[-maxretry] <= findtime * 1_000_000:
                brute.add(ip)
    block = sorted(
        ip
        for ip in brute
        if not any(ipaddress.ip_address(ip) in n for n in nets if n.version == ipaddress.ip_address(ip).version)
    )
    findings = {"compromised": sorted(compromised.values(), key=lambda c: c["first_login"]), "block_ips": block}
    (work / "findings.json").write_text(json.dumps(findings, indent=2) + "\n")


if __name__ == "__main__":
    main()
