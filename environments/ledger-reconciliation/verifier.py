"""Score a month-end bank reconciliation against the regenerated instance.

Runs as ``python3 -I verifier.py``. The instance and its answer key are rebuilt from ARENA_INSTANCE (the workspace
CSVs are never trusted); the agent's /workspace/reconciliation.json is read defensively and compared exactly, with
lists order-insensitive. Writes {"reward": 1.0 or 0.0, "details": {...}} to ARENA_OUTPUT.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "instance"))

import generate

ANSWER_FILE = "reconciliation.json"
MAX_BYTES = 4 * 1024 * 1024
AMOUNT_RE = re.compile(r"[+-]?\d{1,13}(\.\d{1,2})?")
ID_LISTS = ("deposits_in_transit", "outstanding_cheques", "unrecorded_bank_items", "duplicate_ledger_entries")
REQUIRED = (*ID_LISTS, "amount_errors", "adjusted_bank_balance", "adjusted_book_balance")


class Rejected(Exception):
    """The answer cannot be scored as correct; the message says why."""


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _sample(values: set[Any] | list[Any]) -> list[str]:
    return sorted(_short(v) for v in values)[:20]


def read_answer(workspace: Path) -> Any:
    """Read and parse the answer file, refusing anything but a small regular file of UTF-8 JSON."""
    path = workspace / ANSWER_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Rejected(f"{ANSWER_FILE} was not written") from None
    except OSError as exc:
        raise Rejected(f"{ANSWER_FILE} cannot be opened as a regular file ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Rejected(f"{ANSWER_FILE} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise Rejected(f"{ANSWER_FILE} is larger than {MAX_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Rejected(f"{ANSWER_FILE} is not valid UTF-8 JSON: {_short(str(exc))}") from None


def parse_cents(value: Any) -> int | None:
    """Return an amount in cents from a JSON string or number, or None if it is not an exact 2-decimal amount."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * 100 if abs(value) < 10**13 else None
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= 1e13:
            return None
        scaled = Decimal(repr(value)) * 100
    elif isinstance(value, str):
        text = value.strip()
        if not AMOUNT_RE.fullmatch(text):
            return None
        try:
            scaled = Decimal(text) * 100
        except InvalidOperation:
            return None
    else:
        return None
    if scaled != scaled.to_integral_value():
        return None
    return int(scaled)


def _id_list(answer: dict[str, Any], key: str) -> set[str]:
    value = answer[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Rejected(f"{key} must be a list of id strings")
    ids = [v.strip() for v in value]
    if len(set(ids)) != len(ids):
        raise Rejected(f"{key} lists an id more than once")
    return set(ids)


def judge(answer: Any, key: generate.AnswerKey) -> tuple[list[str], dict[str, Any]]:
    """Compare a parsed answer with the answer key; return the list of failures and per-check details."""
    if not isinstance(answer, dict):
        raise Rejected("the top level of the answer must be a JSON object")
    missing = [k for k in REQUIRED if k not in answer]
    if missing:
        raise Rejected(f"missing keys: {', '.join(missing)}")
    failures: list[str] = []
    checks: dict[str, Any] = {}

    expected_sets = {
        "deposits_in_transit": key.deposits_in_transit,
        "outstanding_cheques": key.outstanding_cheques,
        "unrecorded_bank_items": key.unrecorded_bank_items,
    }
    for name, expected in expected_sets.items():
        got = _id_list(answer, name)
        ok = got == expected
        checks[name] = ok
        if not ok:
            failures.append(name)
            checks[f"{name}_missing"] = len(expected - got)
            checks[f"{name}_unexpected"] = _sample(got - expected)

    extras = _id_list(answer, "duplicate_ledger_entries")
    in_groups = set().union(*key.duplicate_groups) if key.duplicate_groups else set()
    ok = not (extras - in_groups) and all(len(extras & g) == len(g) - 1 for g in key.duplicate_groups)
    checks["duplicate_ledger_entries"] = ok
    if not ok:
        failures.append("duplicate_ledger_entries")
        checks["duplicate_ledger_entries_unexpected"] = _sample(extras - in_groups)

    raw_errors = answer["amount_errors"]
    if not isinstance(raw_errors, list):
        raise Rejected("amount_errors must be a list of objects")
    errors: list[tuple[str, str, int]] = []
    for entry in raw_errors:
        if not isinstance(entry, dict) or not {"ledger_id", "bank_id", "correction"} <= entry.keys():
            raise Rejected("each amount_errors entry must be an object with ledger_id, bank_id and correction")
        ledger_id, bank_id, correction = entry["ledger_id"], entry["bank_id"], parse_cents(entry["correction"])
        if not isinstance(ledger_id, str) or not isinstance(bank_id, str) or correction is None:
            raise Rejected("amount_errors entries need string ids and a 2-decimal correction")
        errors.append((ledger_id.strip(), bank_id.strip(), correction))
    ok = len(set(errors)) == len(errors) and set(errors) == key.amount_errors
    checks["amount_errors"] = ok
    if not ok:
        failures.append("amount_errors")

    for name in ("adjusted_bank_balance", "adjusted_book_balance"):
        cents = parse_cents(answer[name])
        ok = cents == key.adjusted_balance
        checks[name] = ok
        if not ok:
            failures.append(name if cents is not None else f"{name} (not a 2-decimal amount)")
    return failures, checks


def main() -> None:
    """Regenerate the instance, judge the workspace answer and write the reward file."""
    index = int(os.environ["ARENA_INSTANCE"])
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    output = Path(os.environ["ARENA_OUTPUT"])
    key = generate.build_instance(index).answer
    details: dict[str, Any] = {"instance": index}
    try:
        failures, checks = judge(read_answer(workspace), key)
        details["checks"] = checks
        if failures:
            details["failed"] = failures
    except Rejected as exc:
        failures = ["rejected"]
        details["reason"] = str(exc)
    except Exception as exc:  # an answer shape the checks did not foresee must still score 0, never crash
        failures = ["unscorable"]
        details["reason"] = f"answer could not be checked: {type(exc).__name__}"
    reward = 0.0 if failures else 1.0
    output.write_text(json.dumps({"reward": reward, "details": details}), encoding="utf-8")


if __name__ == "__main__":
    main()
