"""Generate one server's iptables filter rules and a list of inbound connection attempts to audit against them.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes iptables.rules (iptables-save format) and flows.csv
into ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier imports ``build_instance``,
``verdicts`` and ``shadowed`` to rebuild the rule set and evaluate it itself.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import ipaddress
import json
import os
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/firewall-audit/v1"
TERMINAL = ("ACCEPT", "DROP", "REJECT")
Net = ipaddress.IPv4Network
HOSTNAMES = ("edge-proxy-02", "db-primary", "build-agent-7", "mail-relay", "vpn-concentrator", "metrics-01",
             "files-archive", "api-gw-3")
SERVICES = {"ssh": ("tcp", [(22, 22)]), "web": ("tcp", [(80, 80), (443, 443)]), "dns": ("udp", [(53, 53)]),
            "ntp": ("udp", [(123, 123)]), "postgres": ("tcp", [(5432, 5432)]), "smtp": ("tcp", [(25, 25), (587, 587)]),
            "snmp": ("udp", [(161, 162)]), "app": ("tcp", [(8000, 8099)]), "rdp": ("tcp", [(3389, 3389)]),
            "syslog": ("udp", [(514, 514)]), "redis": ("tcp", [(6379, 6379)]), "game": ("udp", [(27000, 27050)])}


@dataclass(frozen=True)
class Rule:
    rule_id: str
    chain: str
    proto: str | None  # tcp, udp, icmp or None (all)
    src: Net | None
    dst: Net | None
    ports: tuple[tuple[int, int], ...] | None  # destination port ranges (tcp/udp only)
    iface: str | None  # an -i condition: only lo is used
    state: bool  # a conntrack RELATED,ESTABLISHED condition
    target: str  # ACCEPT, DROP, REJECT or a chain name
    note: str


@dataclass(frozen=True)
class Flow:
    flow_id: str
    src: ipaddress.IPv4Address
    dst: ipaddress.IPv4Address
    proto: str
    port: int | None


@dataclass
class Instance:
    index: int
    hostname: str
    policy: str
    rules: list[Rule]
    flows: list[Flow]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def matches(rule: Rule, flow: Flow) -> bool:
    """Whether a new inbound connection on eth0 matches the rule's conditions."""
    if rule.iface is not None or rule.state:
        return False
    if rule.proto is not None and rule.proto != flow.proto:
        return False
    if rule.src is not None and flow.src not in rule.src:
        return False
    if rule.dst is not None and flow.dst not in rule.dst:
        return False
    return rule.ports is None or (flow.port is not None and any(lo <= flow.port <= hi for lo, hi in rule.ports))


def _walk(rules: list[Rule], chain: str, flow: Flow) -> tuple[str, str] | None:
    for rule in (r for r in rules if r.chain == chain):
        if not matches(rule, flow):
            continue
        if rule.target in TERMINAL:
            return rule.target, rule.rule_id
        found = _walk(rules, rule.target, flow)
        if found:
            return found
    return None


def verdicts(inst: Instance) -> dict[str, tuple[str, str]]:
    """flow_id -> (action, deciding rule id or "policy")."""
    return {f.flow_id: _walk(inst.rules, "INPUT", f) or (inst.policy, "policy") for f in inst.flows}


def port_set(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {p for lo, hi in ranges for p in range(lo, hi + 1)}


def covers(first: Rule, later: Rule) -> bool:
    """Whether `first` can shadow `later`: terminal, unconditional on interface and state, and matching every packet
    that `later` matches."""
    if first.target not in TERMINAL or first.iface is not None or first.state:
        return False
    if first.proto is not None and first.proto != later.proto:
        return False
    for mine, theirs in ((first.src, later.src), (first.dst, later.dst)):
        if mine is not None and (theirs is None or not theirs.subnet_of(mine)):
            return False
    return first.ports is None or (later.ports is not None and port_set(later.ports) <= port_set(first.ports))


def shadowed(inst: Instance) -> set[str]:
    """Rule ids that a single earlier rule of the same chain shadows."""
    found = set()
    for n, rule in enumerate(inst.rules):
        if any(covers(e, rule) for e in inst.rules[:n] if e.chain == rule.chain):
            found.add(rule.rule_id)
    return found


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _network(rng: random.Random) -> Net:
    kind = rng.choice(["corp", "corp", "partner", "hostile", "host"])
    if kind == "corp":
        return Net(f"10.{rng.randint(0, 255)}.0.0/{rng.choice([16, 16, 20, 24])}", strict=False)
    if kind == "partner":
        return Net(f"{rng.choice([198, 203])}.{rng.choice([51, 0])}.{rng.randint(0, 255)}.0/24", strict=False)
    if kind == "hostile":
        return Net(f"{rng.choice([45, 89, 185, 193])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.0/"
                   f"{rng.choice([24, 22])}", strict=False)
    return Net(f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}/32")


def _inside(rng: random.Random, net: Net) -> ipaddress.IPv4Address:
    return net.network_address + rng.randrange(net.num_addresses)


def _subrule(rng: random.Random, rule: Rule) -> dict:
    """Conditions for a rule matching a subset of `rule`'s packets (so it is shadowed if it comes later)."""
    src = rule.src
    if src is not None and src.prefixlen < 32:
        src = Net(f"{_inside(rng, src)}/{min(32, src.prefixlen + rng.choice([0, 4, 8]))}", strict=False)
    elif src is None and rng.random() < 0.5:
        src = _network(rng)
    ports = rule.ports
    if ports is not None:
        lo, hi = rng.choice(ports)
        start = rng.randint(lo, hi)
        ports = ((start, rng.randint(start, hi)),)
    elif rule.proto in (None, "tcp", "udp") and rng.random() < 0.5:
        proto = rule.proto or rng.choice(["tcp", "udp"])
        port = rng.randint(1, 9999)
        return {"proto": proto, "src": src, "dst": rule.dst, "ports": ((port, port),)}
    return {"proto": rule.proto, "src": src, "dst": rule.dst, "ports": ports}


def _near_miss(rng: random.Random, rule: Rule) -> dict:
    """Conditions overlapping `rule` without being covered by it: a wider network or an extra port."""
    if rule.ports is not None:
        lo, hi = rule.ports[-1]
        return {"proto": rule.proto, "src": rule.src, "dst": rule.dst, "ports": ((lo, hi + rng.randint(1, 20)),)}
    if rule.src is not None and rule.src.prefixlen > 8:
        return {"proto": rule.proto, "src": rule.src.supernet(prefixlen_diff=rng.choice([1, 4])), "dst": rule.dst,
                "ports": None}
    return {"proto": rule.proto, "src": None, "dst": rule.dst, "ports": rule.ports}


def _rules(rng: random.Random, tier: str, addresses: list[Net], ids: list[int]) -> list[Rule]:
    plain = {"small": (3, 5), "medium": (7, 12), "large": (12, 18)}[tier]
    specs: list[dict] = []
    if tier != "small":
        specs.append({"iface": "lo", "target": "ACCEPT", "note": "loopback"})
        specs.append({"state": True, "target": "ACCEPT", "note": "return traffic"})
    for _ in range(rng.randint(*plain)):
        name = rng.choice(sorted(SERVICES))
        proto, ranges = SERVICES[name]
        spec = {"proto": proto, "ports": tuple(ranges) if rng.random() < 0.85 else None,
                "src": _network(rng) if rng.random() < 0.7 else None,
                "dst": rng.choice(addresses) if rng.random() < 0.3 else None,
                "target": rng.choices(TERMINAL, weights=[5, 3, 2])[0], "note": name}
        if spec["ports"] is None and spec["src"] is None:  # a whole protocol is only ever opened to one network
            spec["src"] = _network(rng)
        if rng.random() < 0.2:  # icmp, or every protocol, from one network
            other = rng.choice(["icmp", None])
            spec.update(proto=other, ports=None, note=other or "any", src=spec["src"] or _network(rng))
        specs.append(spec)
    for _ in range(rng.choice([1, 1, 2])):  # shadowed rules: a later subset of an earlier terminal rule
        base = rng.choice([s for s in specs if s["target"] in TERMINAL and "iface" not in s and "state" not in s])
        where = specs.index(base) + rng.randint(1, len(specs) - specs.index(base))
        specs.insert(where, {**_subrule(rng, _rule("", "INPUT", base)), "target": rng.choice(TERMINAL),
                             "note": base["note"]})
    if tier != "small":  # a look-alike that is not shadowed
        base = rng.choice([s for s in specs if "iface" not in s and "state" not in s])
        specs.append({**_near_miss(rng, _rule("", "INPUT", base)), "target": rng.choice(TERMINAL),
                      "note": base["note"]})
    rules = [_rule("", "INPUT", spec) for spec in specs]
    if tier == "large":  # a user-defined chain for ssh, jumped to from INPUT
        jump = _rule("", "INPUT", {"proto": "tcp", "ports": ((22, 22),), "target": "SSH-IN", "note": "ssh"})
        rules.insert(rng.randint(2, len(rules)), jump)
        rules += [_rule("", "SSH-IN", {"src": _network(rng), "target": target, "note": note}) for target, note in
                  (("ACCEPT", "ssh admins"), (rng.choice(["DROP", "REJECT"]), "ssh blocked"), ("ACCEPT", "ssh jump"))]
    return [replace(r, rule_id=f"FW-{ids[n]}") for n, r in enumerate(rules)]


def _rule(rule_id: str, chain: str, spec: dict) -> Rule:
    return Rule(rule_id, chain, spec.get("proto"), spec.get("src"), spec.get("dst"), spec.get("ports"),
                spec.get("iface"), spec.get("state", False), spec["target"], spec.get("note", ""))


def _flows(rng: random.Random, inst: Instance, count: int, addresses: list[Net]) -> list[Flow]:
    flows = []
    plain = [r for r in inst.rules if r.iface is None and not r.state]
    seen: set[Flow] = set()
    while len(flows) < count:
        rule = rng.choice(plain) if rng.random() < 0.7 else None
        port: int | None = None
        proto = (rule.proto if rule and rule.proto else None) or rng.choice(["tcp", "tcp", "udp", "icmp"])
        if rule and rule.chain == "SSH-IN":  # only ssh reaches that chain
            proto, port = "tcp", 22
        elif rule and rule.ports:
            lo, hi = rng.choice(rule.ports)
            port = rng.randint(lo, hi)
        else:
            port = None if proto == "icmp" else rng.choice([22, 80, 443, 53, 3306, 8080, 8443, 25, 161, 6379])
        src = _inside(rng, rule.src) if rule and rule.src else _inside(rng, _network(rng))
        dst = _inside(rng, rule.dst) if rule and rule.dst else _inside(rng, rng.choice(addresses))
        flow = Flow("", src, dst, proto, port if proto != "icmp" else None)
        if flow not in seen:
            seen.add(flow)
            flows.append(flow)
    numbers = sorted(rng.sample(range(10000, 99999), count))
    return [replace(f, flow_id=f"C-{n}") for f, n in zip(flows, numbers, strict=True)]


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    addresses = [Net(f"192.0.2.{n}/32") for n in rng.sample(range(10, 250), 2)]
    ids = sorted(rng.sample(range(1000, 9999), 40))
    inst = Instance(index, rng.choice(HOSTNAMES), rng.choice(["DROP", "DROP", "ACCEPT"]), [], [])
    while True:
        inst.rules = _rules(rng, tier, addresses, ids)
        if shadowed(inst):
            break
    count = {"small": (3, 5), "medium": (8, 14), "large": (15, 26)}[tier]
    inst.flows = _flows(rng, inst, rng.randint(*count), addresses)
    stamp = dt.datetime(2023, 1, 1) + dt.timedelta(minutes=rng.randint(0, 1_000_000))
    inst.files = {"iptables.rules": _save_format(inst, stamp), "flows.csv": _flows_csv(inst)}
    inst.prompt = {"hostname": inst.hostname, "rule_count": str(len(inst.rules)), "flow_count": str(len(inst.flows)),
                   "addresses": ", ".join(str(a.network_address) for a in addresses)}
    return inst


def _save_format(inst: Instance, stamp: dt.datetime) -> str:
    chains = [f":INPUT {inst.policy} [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]"]
    if any(r.chain == "SSH-IN" for r in inst.rules):
        chains.append(":SSH-IN - [0:0]")
    lines = [f"# Generated by iptables-save v1.8.9 on {stamp:%a %b %d %H:%M:%S %Y}", "*filter", *chains]
    for r in inst.rules:
        parts = [f"-A {r.chain}"]
        if r.iface:
            parts.append(f"-i {r.iface}")
        if r.src is not None:
            parts.append(f"-s {r.src}")
        if r.dst is not None:
            parts.append(f"-d {r.dst}")
        if r.proto:
            parts.append(f"-p {r.proto}")
        if r.state:
            parts.append("-m conntrack --ctstate RELATED,ESTABLISHED")
        if r.ports:
            spelled = [f"{lo}" if lo == hi else f"{lo}:{hi}" for lo, hi in r.ports]
            if len(spelled) == 1:
                parts.append(f"-m {r.proto} --dport {spelled[0]}")
            else:
                parts.append(f"-m multiport --dports {','.join(spelled)}")
        parts.append(f'-m comment --comment "{r.rule_id} {r.note}"')
        parts.append(f"-j {r.target}" + (" --reject-with icmp-port-unreachable" if r.target == "REJECT" else ""))
        lines.append(" ".join(parts))
    lines += ["COMMIT", f"# Completed on {stamp:%a %b %d %H:%M:%S %Y}", ""]
    return "\n".join(lines)


def _flows_csv(inst: Instance) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["flow_id", "src_ip", "dst_ip", "protocol", "dst_port"])
    writer.writerows([f.flow_id, str(f.src), str(f.dst), f.proto, "" if f.port is None else str(f.port)]
                     for f in inst.flows)
    return out.getvalue()


def main() -> None:
    """Write the instance named by ARENA_INSTANCE into the workspace and print its prompt values."""
    inst = build_instance(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in inst.files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    print(json.dumps(inst.prompt, sort_keys=True))


if __name__ == "__main__":
    main()
