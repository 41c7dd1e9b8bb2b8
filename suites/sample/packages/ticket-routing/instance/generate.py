"""Generate one morning's support inbox and the help desk's routing rules.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes tickets.jsonl, customers.csv and routing_rules.md
into ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier imports ``build_instance`` and
``expected_routing`` to rebuild the inbox and apply the rules itself.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/ticket-routing/v1"
UTC = dt.UTC
PRODUCTS = ("Ledgerly", "Shipwise", "Formstack Cloud", "Pollen CRM", "Tidepool Analytics", "Brightdesk")
KEYWORDS = {
    "security": ("phishing", "hacked", "breach", "unauthorized access"),
    "billing": ("invoice", "refund", "charged", "billing", "payment"),
    "access": ("password", "login", "locked out", "2fa", "sso"),
    "outage": ("outage", "down", "unavailable"),
    "bugs": ("error", "crash", "bug", "broken"),
}
URGENT_WORDS = ("urgent", "asap", "immediately")
SENTENCES = {
    "security": ("I think my account was hacked last night.", "We received a phishing email that uses your logo.",
                 "There was unauthorized access to our workspace from an unknown country.",
                 "Is this a data breach? Several users got strange notifications."),
    "billing": ("The latest invoice shows the wrong number of seats.", "We were charged twice this month.",
                "Please process a refund for the unused months.", "Our billing contact has changed.",
                "The card payment failed but the plan still renewed."),
    "access": ("The password reset email never arrives.", "My login keeps looping back to the start page.",
               "Two of our admins are locked out.", "The 2fa code is rejected every time.",
               "We cannot get SSO working with our identity provider."),
    "outage": ("The whole dashboard is down for our region.", "Reports have been unavailable since this morning.",
               "Is there an outage? Nothing loads."),
    "bugs": ("Saving a form shows an error about a missing field.", "The mobile app crash happens on every launch.",
             "I found a bug in the CSV export: dates are shifted.", "The search filter is broken since the update."),
    "general": ("How do I add a new teammate to our account?", "Could you explain the difference between the plans?",
                "We would like to give feedback on the new layout.", "Where can I find the API documentation?",
                "Can we change the name shown on our workspace?"),
}
SUBJECTS = {
    "security": ("Suspicious activity", "Possible phishing", "Account hacked?", "Security concern"),
    "billing": ("Question about invoice", "Double charge", "Refund request", "Billing contact update"),
    "access": ("Cannot sign in", "Password reset", "2FA problem", "SSO setup"),
    "outage": ("Service down?", "Dashboard unavailable", "Nothing loads"),
    "bugs": ("Export problem", "App keeps closing", "Error when saving", "Search filter"),
    "general": ("Quick question", "Adding a teammate", "Feedback", "Plan comparison"),
}
FILLER = ("Thanks in advance.", "Our team relies on it every day.", "Let me know if you need more details.",
          "Happy to jump on a call.", "We are happy with the product otherwise.")
FIRST = ("Aaron", "Bea", "Cyrus", "Dalia", "Emeka", "Farah", "Gus", "Hana", "Ilya", "Jade", "Kian", "Lena", "Milo",
         "Nadia", "Omar", "Pia", "Ravi", "Sofia", "Theo", "Wren")
DOMAINS = ("northpeak.io", "grainger-co.com", "bluefin.org", "atlasworks.net", "kestrelhealth.com", "quayside.co",
           "verdant.farm", "orbitlab.dev", "hollowpine.com", "saltlake-schools.org")
PLANS = ("enterprise", "business", "starter", "free")
OFFSETS = (0, 0, -300, -240, -420, 60, 120, 330, 540)  # minutes east of UTC
PREFIX = re.compile(r"^\s*((re|fwd|fw)\s*:\s*)+", flags=re.IGNORECASE)


@dataclass(frozen=True)
class Rules:
    """The instance's routing rules."""

    queue_order: tuple[str, ...]
    base_priority: dict[str, int]  # plan -> 1..4
    escalated_queues: tuple[str, ...]
    sla_hours: dict[int, int]  # priority -> hours to first response
    duplicate_hours: int


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    received_at: dt.datetime  # aware
    email: str
    channel: str
    subject: str
    body: str


@dataclass
class Instance:
    index: int
    product: str
    rules: Rules
    customers: dict[str, tuple[str, str]]  # email -> (account name, plan)
    tickets: list[Ticket]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def has_word(text: str, phrase: str) -> bool:
    """Whether the phrase occurs as whole words, ignoring case."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text, flags=re.IGNORECASE) is not None


def queue_of(rules: Rules, ticket: Ticket) -> str:
    text = f"{ticket.subject}\n{ticket.body}"
    for queue in rules.queue_order:
        if any(has_word(text, k) for k in KEYWORDS[queue]):
            return queue
    return "general"


def normal_subject(subject: str) -> str:
    return " ".join(PREFIX.sub("", subject).lower().split())


def add_sla(start: dt.datetime, hours: int, skip_weekends: bool) -> dt.datetime:
    """start (UTC) plus hours; with skip_weekends the clock stands still from Saturday 00:00 to Monday 00:00 UTC."""
    if not skip_weekends:
        return start + dt.timedelta(hours=hours)
    t, left = start, dt.timedelta(hours=hours)
    while True:
        if t.weekday() >= 5:
            t = dt.datetime.combine(t.date() + dt.timedelta(days=7 - t.weekday()), dt.time(), UTC)
            continue
        saturday = dt.datetime.combine(t.date() + dt.timedelta(days=5 - t.weekday()), dt.time(), UTC)
        if left <= saturday - t:
            return t + left
        left -= saturday - t
        t = saturday


def expected_routing(inst: Instance) -> dict[str, tuple[str, str, str, str]]:
    """ticket_id -> (queue, priority, due_at, duplicate_of); duplicates get ("duplicate", "", "", original)."""
    rules = inst.rules
    found: dict[str, tuple[str, str, str, str]] = {}
    originals: list[Ticket] = []
    for t in sorted(inst.tickets, key=lambda x: (x.received_at, x.ticket_id)):
        earlier = [o for o in originals if o.email.lower() == t.email.lower()
                   and normal_subject(o.subject) == normal_subject(t.subject)]
        if earlier and t.received_at - earlier[-1].received_at <= dt.timedelta(hours=rules.duplicate_hours):
            found[t.ticket_id] = ("duplicate", "", "", earlier[-1].ticket_id)
            continue
        originals.append(t)
        queue = queue_of(rules, t)
        plan = inst.customers.get(t.email.lower(), ("", "free"))[1]
        level = rules.base_priority[plan]
        level -= queue in rules.escalated_queues
        level -= any(has_word(f"{t.subject}\n{t.body}", w) for w in URGENT_WORDS)
        level = max(1, level)
        due = add_sla(t.received_at.astimezone(UTC), rules.sla_hours[level], level >= 3)
        found[t.ticket_id] = (queue, f"P{level}", due.strftime("%Y-%m-%dT%H:%M:%SZ"), "")
    return found


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _rules(rng: random.Random) -> Rules:
    middle = ["billing", "access", "outage", "bugs"]
    rng.shuffle(middle)
    base = {"enterprise": rng.choice([2, 2, 3]), "business": 3, "starter": rng.choice([3, 4]), "free": 4}
    escalated = tuple(q for q in ("security", "outage", "access") if q != "access" or rng.random() < 0.3)
    sla = {1: rng.choice([1, 2]), 2: rng.choice([4, 6, 8]), 3: rng.choice([12, 16, 24]), 4: rng.choice([48, 72])}
    return Rules(("security", *middle), base, escalated, sla, rng.choice([24, 48, 72]))


def _customers(rng: random.Random, count: int) -> dict[str, tuple[str, str]]:
    """email -> (account, plan): one to three contacts for each of `count` accounts."""
    found = {}
    for domain in rng.sample(DOMAINS, count):
        account, plan = domain.split(".")[0].replace("-", " ").title(), rng.choice(PLANS)
        for name in rng.sample(FIRST, rng.randint(1, 3)):
            found[f"{name.lower()}@{domain}"] = (account, plan)
    return found


def _ticket(rng: random.Random, inst: Instance, when: dt.datetime) -> Ticket:
    """A new ticket (its id is given once the inbox is in order)."""
    queue = rng.choices(["security", "billing", "access", "outage", "bugs", "general"], weights=[1, 3, 3, 2, 3, 3])[0]
    sentences = [rng.choice(SENTENCES[queue])]
    if rng.random() < 0.3:  # a second concern: the first queue in the rules' order wins
        sentences.append(rng.choice(SENTENCES[rng.choice(sorted(KEYWORDS))]))
    if rng.random() < 0.2:
        sentences.append(rng.choice(["This is urgent.", "Please reply asap.", "We need this fixed immediately."]))
    sentences += rng.sample(FILLER, rng.randint(0, 2))
    emails = sorted(inst.customers)
    email = rng.choice(emails) if rng.random() < 0.85 else f"{rng.choice(FIRST).lower()}{rng.randint(1, 99)}@gmail.com"
    offset = dt.timezone(dt.timedelta(minutes=rng.choice(OFFSETS)))
    return Ticket("", when.astimezone(offset), email if rng.random() < 0.8 else email.capitalize(),
                  rng.choice(["email", "email", "web", "chat"]), rng.choice(SUBJECTS[queue]), " ".join(sentences))


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    n_tickets, n_accounts = {"small": ((3, 5), 2), "medium": ((8, 14), 4), "large": ((18, 32), 7)}[tier]
    inst = Instance(index, rng.choice(PRODUCTS), _rules(rng), {}, [])
    inst.customers = _customers(rng, n_accounts)
    start = dt.datetime(2023, 1, 2, tzinfo=UTC) + dt.timedelta(days=rng.randint(0, 900), hours=rng.randint(0, 23))
    span_hours = {"small": 30, "medium": 80, "large": 120}[tier]
    for minute in rng.sample(range(span_hours * 60), rng.randint(*n_tickets)):
        ticket = _ticket(rng, inst, start + dt.timedelta(minutes=minute))
        inst.tickets.append(ticket)
        if tier != "small" and rng.random() < 0.15:  # the customer writes again about the same thing
            later = ticket.received_at + dt.timedelta(hours=rng.choice([1, 5, 20, inst.rules.duplicate_hours + 3]))
            subject = rng.choice(["Re: ", "RE: ", "Fwd: ", ""]) + ticket.subject
            inst.tickets.append(Ticket("", later, ticket.email, ticket.channel, subject,
                                       "Any update on this? " + ticket.body))
    inst.tickets.sort(key=lambda t: (t.received_at, t.subject))
    numbers = sorted(rng.sample(range(40000, 99999), len(inst.tickets)))
    inst.tickets = [replace(t, ticket_id=f"T-{n}") for t, n in zip(inst.tickets, numbers, strict=True)]
    _write_files(inst)
    return inst


def _rules_text(inst: Instance) -> str:
    rules = inst.rules
    order = "\n".join(f"{n}. `{q}`: " + ", ".join(f'"{k}"' for k in KEYWORDS[q])
                      for n, q in enumerate(rules.queue_order, start=1))
    plans = "\n".join(f"| {plan} | P{level} |" for plan, level in rules.base_priority.items())
    escalated = ", ".join(f"`{q}`" for q in rules.escalated_queues)
    sla = "\n".join(f"| P{p} | {h} |" for p, h in rules.sla_hours.items())
    return f"""# {inst.product} support: routing rules

## 1. Duplicates
A ticket is a duplicate when the same sender (email address, ignoring case) sent an earlier ticket that is not
itself a duplicate, with the same subject, at most {rules.duplicate_hours} hours before it. Subjects are compared
ignoring case, repeated spaces and any leading `Re:`, `RE:`, `Fwd:` or `FW:` prefixes. A duplicate is merged into
the most recent such earlier ticket and is not routed, prioritised or timed.

## 2. Queue
Search the subject and the body for these keywords, as whole words and ignoring case. The first queue in this list
with any keyword present gets the ticket; a ticket with none goes to `general`.

{order}

## 3. Priority
Start from the sender's plan in `customers.csv` (a sender not listed there counts as `free`):

| plan | priority |
|---|---|
{plans}

Then raise the priority one level (P3 becomes P2, and so on) if the ticket goes to one of the queues {escalated};
and one more level if the subject or body contains "urgent", "asap" or "immediately" (whole words, ignoring case).
P1 is the highest level: a ticket never goes above it.

## 4. First-response deadline
The deadline is the time received plus the hours for the priority:

| priority | hours |
|---|---|
{sla}

For P3 and P4 the clock does not run at weekends: time from Saturday 00:00 to Monday 00:00 UTC does not count (a
ticket received at a weekend starts its clock on Monday at 00:00 UTC). For P1 and P2 every hour counts.
"""


def _write_files(inst: Instance) -> None:
    lines = [json.dumps({"ticket_id": t.ticket_id, "received_at": t.received_at.isoformat(), "from": t.email,
                         "channel": t.channel, "subject": t.subject, "body": t.body}) for t in inst.tickets]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["email", "account", "plan"])
    writer.writerows([e, a, p] for e, (a, p) in sorted(inst.customers.items()))
    inst.files = {"tickets.jsonl": "\n".join(lines) + "\n", "customers.csv": out.getvalue(),
                  "routing_rules.md": _rules_text(inst)}
    inst.prompt = {"product": inst.product, "ticket_count": str(len(inst.tickets)),
                   "first_ticket": inst.tickets[0].ticket_id, "last_ticket": inst.tickets[-1].ticket_id}


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
