"""Reference solution for firewall-audit: parse the iptables-save export, walk the chains, compare rule pairs."""

from __future__ import annotations

import csv
import ipaddress
import json
import shlex
from pathlib import Path

FINAL = {"ACCEPT", "DROP", "REJECT"}


def parse_ports(text: str) -> set[int]:
    ports: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition(":")
        ports.update(range(int(low), int(high or low) + 1))
    return ports


def parse(path: Path) -> tuple[str, list[dict]]:
    policy, rules = "ACCEPT", []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(":INPUT "):
            policy = line.split()[1]
        if not line.startswith("-A "):
            continue
        words = shlex.split(line)
        rule = {"chain": words[1], "proto": None, "src": None, "dst": None, "ports": None, "special": False}
        for flag, value in zip(words[2::2], words[3::2], strict=True):  # every option here takes one value
            if flag in ("-s", "-d"):
                rule["src" if flag == "-s" else "dst"] = ipaddress.ip_network(value)
            elif flag == "-p":
                rule["proto"] = value
            elif flag in ("--dport", "--dports"):
                rule["ports"] = parse_ports(value)
            elif flag in ("-i", "--ctstate"):
                rule["special"] = True
            elif flag == "--comment":
                rule["id"] = value.split()[0]
            elif flag == "-j":
                rule["target"] = value
        rules.append(rule)
    return policy, rules


def hits(rule: dict, flow: dict) -> bool:
    if rule["special"]:
        return False
    if rule["proto"] and rule["proto"] != flow["protocol"]:
        return False
    if rule["src"] and ipaddress.ip_address(flow["src_ip"]) not in rule["src"]:
        return False
    if rule["dst"] and ipaddress.ip_address(flow["dst_ip"]) not in rule["dst"]:
        return False
    return rule["ports"] is None or (flow["dst_port"] != "" and int(flow["dst_port"]) in rule["ports"])


def decide(rules: list[dict], chain: str, flow: dict) -> tuple[str, str] | None:
    for rule in rules:
        if rule["chain"] == chain and hits(rule, flow):
            if rule["target"] in FINAL:
                return rule["target"], rule["id"]
            inner = decide(rules, rule["target"], flow)
            if inner:
                return inner
    return None


def covers(a: dict, b: dict) -> bool:
    if a["target"] not in FINAL or a["special"]:
        return False
    if a["proto"] and a["proto"] != b["proto"]:
        return False
    for key in ("src", "dst"):
        if a[key] and not (b[key] and b[key].subnet_of(a[key])):
            return False
    return a["ports"] is None or (b["ports"] is not None and b["ports"] <= a["ports"])


def main() -> None:
    policy, rules = parse(Path("iptables.rules"))
    with Path("flows.csv").open(newline="", encoding="utf-8") as handle:
        flows = list(csv.DictReader(handle))
    verdicts = []
    for flow in flows:
        action, rule = decide(rules, "INPUT", flow) or (policy, "policy")
        verdicts.append({"flow_id": flow["flow_id"], "action": action, "rule": rule})
    shadowed = [r["id"] for n, r in enumerate(rules)
                if any(e["chain"] == r["chain"] and covers(e, r) for e in rules[:n])]
    Path("audit.json").write_text(json.dumps({"verdicts": verdicts, "shadowed_rules": shadowed}, indent=2) + "\n",
                                  encoding="utf-8")


if __name__ == "__main__":
    main()
