"""Reference solution for ticket-routing: read the rules' parameters, then triage the inbox in order of arrival."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from pathlib import Path

UTC = dt.UTC


def words(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text, flags=re.IGNORECASE) is not None


def subject_key(subject: str) -> str:
    return " ".join(re.sub(r"^\s*((re|fwd|fw)\s*:\s*)+", "", subject, flags=re.IGNORECASE).lower().split())


def deadline(start: dt.datetime, hours: int, pause_weekends: bool) -> dt.datetime:
    """Add hours to a UTC time, skipping Saturday and Sunday (UTC) when asked, hour by hour in minute steps."""
    if not pause_weekends:
        return start + dt.timedelta(hours=hours)
    t, left = start, hours * 60
    while left > 0 or t.weekday() >= 5:
        if t.weekday() >= 5:
            t = dt.datetime.combine(t.date() + dt.timedelta(days=1), dt.time(), UTC)
            continue
        step = min(left, int((dt.datetime.combine(t.date() + dt.timedelta(days=1), dt.time(), UTC) - t)
                             .total_seconds() // 60))
        t += dt.timedelta(minutes=step)
        left -= step
        if left == 0:
            break
    return t


def main() -> None:
    rules = Path("routing_rules.md").read_text(encoding="utf-8")
    window = int(re.search(r"at most (\d+) hours before it", rules).group(1))
    queues = [(q, re.findall(r'"([^"]+)"', kws)) for q, kws in re.findall(r"^\d+\. `(\w+)`: (.*)$", rules, re.M)]
    plan_level = {p: int(n) for p, n in re.findall(r"^\| (\w+) \| P(\d) \|$", rules, re.M)}
    escalated = re.findall(r"`(\w+)`", re.search(r"goes to one of the queues (.*?);", rules, re.S).group(1))
    hours = {int(p): int(h) for p, h in re.findall(r"^\| P(\d) \| (\d+) \|$", rules, re.M)}
    with Path("customers.csv").open(newline="", encoding="utf-8") as handle:
        plans = {r["email"].lower(): r["plan"] for r in csv.DictReader(handle)}
    tickets = [json.loads(line) for line in Path("tickets.jsonl").read_text(encoding="utf-8").splitlines() if line]
    for t in tickets:
        t["at"] = dt.datetime.fromisoformat(t["received_at"]).astimezone(UTC)
    tickets.sort(key=lambda t: t["at"])
    kept: list[dict] = []
    rows = []
    for t in tickets:
        same = [k for k in kept if k["from"].lower() == t["from"].lower()
                and subject_key(k["subject"]) == subject_key(t["subject"])]
        if same and t["at"] - same[-1]["at"] <= dt.timedelta(hours=window):
            rows.append([t["ticket_id"], "duplicate", "", "", same[-1]["ticket_id"]])
            continue
        kept.append(t)
        text = t["subject"] + "\n" + t["body"]
        queue = next((q for q, kws in queues if any(words(text, k) for k in kws)), "general")
        level = plan_level[plans.get(t["from"].lower(), "free")]
        if queue in escalated:
            level -= 1
        if any(words(text, w) for w in ("urgent", "asap", "immediately")):
            level -= 1
        level = max(level, 1)
        due = deadline(t["at"], hours[level], level >= 3)
        rows.append([t["ticket_id"], queue, f"P{level}", due.strftime("%Y-%m-%dT%H:%M:%SZ"), ""])
    with Path("routing.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["ticket_id", "queue", "priority", "due_at", "duplicate_of"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
