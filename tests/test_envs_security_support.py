"""Host-run checks of the auth-log-forensics and refund-desk environments.

For a spread of seeds: the oracle scores 1.0, other correct answers score 1.0 too, and forged or partial answers
score 0.0; the generators' designed answers match the rules. Runs generator, oracle and verifier as subprocesses
without Docker (tests/support/host_episode.py). The properties every bundled environment shares (doing nothing,
hostile files, determinism, placeholders) are in test_environment_properties.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.host_episode import generate, load_generator, reward_of, run_oracle, solved, variant, write_json

pytestmark = pytest.mark.slow  # each environment run on the host over many instances

ROOT = Path(__file__).resolve().parent.parent
AUTH = ROOT / "environments" / "auth-log-forensics"
REFUND = ROOT / "environments" / "refund-desk"
SEEDS = [0, 1, 2, 3, 7, 19, 42, 99, 123, 256, 311, 333, 404, 500, 512, 600, 666, 700, 777, 850, 901, 950, 997, 998, 999]


# --- auth-log-forensics ------------------------------------------------------------------------------------------


def auth_forgeries(workspace: Path) -> dict[str, Any]:
    """Wrong answers built from the oracle's correct one (each must score 0.0)."""
    good = json.loads((workspace / "findings.json").read_text())
    blocked = set(good["block_ips"])
    log = (workspace / "logs" / "auth.log").read_text() + (workspace / "logs" / "auth.log.1").read_text()
    benign = sorted({m for m in re.findall(r"Accepted publickey for \S+ from (\S+) ", log) if m not in blocked})
    ignoreip = (workspace / "jail.local").read_text().split("ignoreip = ", 1)[1].splitlines()[0].split()
    monitor = ignoreip[-1].rsplit(".", 1)[0] + "."  # the monitoring /24, e.g. "10.25.5."
    scanner = sorted({m for m in re.findall(r"Failed password for .* from (\S+) port", log) if m.startswith(monitor)})
    forged: dict[str, Any] = {}

    def edit(name: str, change: Any) -> None:
        data = json.loads(json.dumps(good))
        change(data)
        forged[name] = data

    edit("drop_block_ip", lambda d: d["block_ips"].pop())
    if benign:
        edit("extra_innocent_ip", lambda d: d["block_ips"].append(benign[0]))
    if scanner:
        edit("allowlisted_scanner_blocked", lambda d: d["block_ips"].append(scanner[0]))
    edit("duplicate_ip", lambda d: d["block_ips"].append(d["block_ips"][0]))
    edit("extra_top_level_key", lambda d: d.update(notes="none"))
    edit("block_ips_as_string", lambda d: d.update(block_ips=" ".join(d["block_ips"])))
    if good["compromised"]:
        edit("drop_compromised", lambda d: d["compromised"].pop())

        def shift_time(d: dict[str, Any]) -> None:
            ts = d["compromised"][0]["first_login"]
            d["compromised"][0]["first_login"] = ts[:25] + str((int(ts[25]) + 1) % 10) + ts[26:]

        edit("wrong_first_login", shift_time)
        edit("extra_entry_key", lambda d: d["compromised"][0].update(severity="high"))
        edit(
            "wrong_user",
            lambda d: d["compromised"][0].update(user="root" if d["compromised"][0]["user"] != "root" else "admin"),
        )
    else:
        edit(
            "invented_compromise",
            lambda d: d["compromised"].append(
                {"host": "web-01", "user": "root", "ip": d["block_ips"][0], "first_login": "2024-01-01T00:00:00+00:00"}
            ),
        )
    return forged


@pytest.mark.parametrize("seed", SEEDS)
def test_auth_oracle_passes_and_forgeries_fail(seed: int, tmp_path: Path) -> None:
    workspace = solved(AUTH, seed, tmp_path)
    assert reward_of(AUTH, seed, workspace) == 1.0

    shuffled = variant(workspace, tmp_path, "shuffled")
    good = json.loads((shuffled / "findings.json").read_text())
    write_json(
        shuffled / "findings.json", {"block_ips": good["block_ips"][::-1], "compromised": good["compromised"][::-1]}
    )
    assert reward_of(AUTH, seed, shuffled) == 1.0, "order must not matter"

    for name, data in auth_forgeries(workspace).items():
        forged = variant(workspace, tmp_path, name)
        write_json(forged / "findings.json", data)
        assert reward_of(AUTH, seed, forged) == 0.0, name

    # Forged inputs: empty the logs and answer for the empty logs.
    forged = variant(workspace, tmp_path, "forged_logs")
    for log in (forged / "logs").iterdir():
        log.write_bytes(b"")
    write_json(forged / "findings.json", {"compromised": [], "block_ips": []})
    assert reward_of(AUTH, seed, forged) == 0.0


# --- refund-desk -------------------------------------------------------------------------------------------------


def refund_forgeries(workspace: Path, original_orders: bytes) -> dict[str, tuple[Any, Any]]:
    """(ticket_reply, orders) pairs built from the oracle's correct state (each must score 0.0)."""
    reply = json.loads((workspace / "ticket_reply.json").read_text())
    orders = json.loads((workspace / "orders.json").read_text())
    ticket = json.loads((workspace / "ticket.json").read_text())
    touched = {r["order_id"] for m in ticket["messages"] for r in m["requests"]}
    approved = [d for d in reply["decisions"] if d["decision"] == "APPROVE"]
    forged: dict[str, tuple[Any, Any]] = {}

    def edit(name: str, change_reply: Any = None, change_orders: Any = None) -> None:
        r, o = json.loads(json.dumps(reply)), json.loads(json.dumps(orders))
        if change_reply:
            change_reply(r)
        if change_orders:
            change_orders(o)
        forged[name] = (r, o)

    edit("drop_decision", lambda r: r["decisions"].pop())
    edit("wrong_total", lambda r: r.update(total_refund=round(r["total_refund"] + 0.01, 2)))
    edit("wrong_ticket_id", lambda r: r.update(ticket_id="TCK-000000"))

    def flip_code(r: dict[str, Any]) -> None:
        d = r["decisions"][0]
        d["decision"] = "DENY_WINDOW" if d["decision"] != "DENY_WINDOW" else "DENY_FINAL_SALE"

    edit("wrong_decision", flip_code)
    edit("extra_decision_key", lambda r: r["decisions"][0].update(note="ok"))
    edit("quantity_as_float", lambda r: r["decisions"][0].update(quantity=float(r["decisions"][0]["quantity"])))
    untouched = next(o for o in orders["orders"] if o["order_id"] not in touched)

    def bump_other(o: dict[str, Any]) -> None:
        other = next(x for x in o["orders"] if x["order_id"] == untouched["order_id"])
        other["refund_total"] = round(other["refund_total"] + 25.0, 2)

    edit("modified_other_order", change_orders=bump_other)
    edit(
        "changed_status",
        change_orders=lambda o: o["orders"][0].update(
            status="delivered" if o["orders"][0]["status"] != "delivered" else "shipped"
        ),
    )
    edit("added_field", change_orders=lambda o: o["orders"][-1].update(note="refund reviewed"))
    edit("dropped_order", change_orders=lambda o: o["orders"].pop())
    if approved:
        rid = approved[0]["request_id"]

        def off_by_cent(r: dict[str, Any]) -> None:
            d = next(x for x in r["decisions"] if x["request_id"] == rid)
            d["amount"] = round(d["amount"] + 0.01, 2)
            r["total_refund"] = round(r["total_refund"] + 0.01, 2)

        def unrounded(r: dict[str, Any]) -> None:
            d = next(x for x in r["decisions"] if x["request_id"] == rid)
            d["amount"] = d["amount"] + 0.004
            r["total_refund"] = r["total_refund"] + 0.004

        edit("wrong_amount", off_by_cent)
        edit("unrounded_amount", unrounded)
        forged["orders_not_updated"] = (reply, json.loads(original_orders))
    return forged


@pytest.mark.parametrize("seed", SEEDS)
def test_refund_oracle_passes_and_forgeries_fail(seed: int, tmp_path: Path) -> None:
    original = tmp_path / "original"
    generate(REFUND, seed, original)
    original_orders = (original / "orders.json").read_bytes()
    workspace = solved(REFUND, seed, tmp_path)
    assert reward_of(REFUND, seed, workspace) == 1.0

    shuffled = variant(workspace, tmp_path, "shuffled")
    reply = json.loads((shuffled / "ticket_reply.json").read_text())
    orders = json.loads((shuffled / "orders.json").read_text())
    write_json(shuffled / "ticket_reply.json", {**reply, "decisions": reply["decisions"][::-1]})
    (shuffled / "orders.json").write_text(json.dumps({"orders": orders["orders"][::-1]}, separators=(",", ":")))
    assert reward_of(REFUND, seed, shuffled) == 1.0, "order and layout must not matter"

    for name, (reply_data, orders_data) in refund_forgeries(workspace, original_orders).items():
        forged = variant(workspace, tmp_path, name)
        write_json(forged / "ticket_reply.json", reply_data)
        write_json(forged / "orders.json", orders_data)
        assert reward_of(REFUND, seed, forged) == 0.0, name

    # Forged inputs: withdraw everything in ticket.json and answer for that ticket.
    forged = variant(original, tmp_path, "forged_ticket")
    ticket = json.loads((forged / "ticket.json").read_text())
    ids = [r["request_id"] for m in ticket["messages"] for r in m["requests"]]
    ticket["messages"][-1]["withdraw"] = ids
    write_json(forged / "ticket.json", ticket)
    run_oracle(REFUND, forged)
    assert reward_of(REFUND, seed, forged) == 0.0


# --- generator design --------------------------------------------------------------------------------------------


def test_auth_generator_design_matches_the_rules() -> None:
    gen = load_generator(AUTH)
    kinds = {"compromised": 0, "empty": 0}
    for seed in SEEDS:
        inst = gen.build_instance(seed)
        compromised, block = gen.expected_findings(inst)
        assert set(compromised) == inst.designed_compromised
        assert block == inst.designed_block and block
        kinds["compromised" if compromised else "empty"] += 1
        assert 1500 <= len(inst.lines) <= 6000
    assert kinds["compromised"] >= len(SEEDS) // 2


def test_refund_generator_design_matches_the_rules() -> None:
    gen = load_generator(REFUND)
    seen = set()
    for seed in SEEDS:
        inst = gen.build_instance(seed)
        decisions, _ = gen.expected_outcome(inst)
        for request, decision in zip(inst.requests, decisions, strict=True):
            designed = "WITHDRAWN" if request.request_id in inst.withdrawn else request.designed
            assert decision["decision"] == designed, (seed, request, decision)
            seen.add(designed)
    assert {"APPROVE", "DENY_WINDOW", "ESCALATE", "WITHDRAWN"} <= seen
