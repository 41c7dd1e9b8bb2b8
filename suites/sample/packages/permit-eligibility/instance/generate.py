"""Generate one batch of short-term rental permit applications and the city ordinance they are decided under.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes ordinance.md, applications.csv, parcels.csv,
violations.csv and permits.csv into ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier
imports ``build_instance`` and ``expected_decisions`` to rebuild the batch and apply the ordinance itself.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import os
import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/permit-eligibility/v1"
RULES = ("zone", "owner", "occupancy", "parking", "safety", "violations", "insurance", "fee", "limit")
SECTION_NUMBER = {rule: 30 + 10 * n for n, rule in enumerate(RULES)}  # zone -> .030, ..., limit -> .110
CITIES = ("Port Alder", "Whitcombe", "Lake Marisol", "Fernhollow", "Cedar Bluffs", "New Harlan", "Saltmarsh Bay",
          "Oak Terrace", "Greyford", "Millbrook Falls")
ZONES = ("R-1", "R-2", "R-3", "MU", "C-1", "I-1", "OS")
FIRST = ("Maria", "James", "Aisha", "Chen", "Olga", "Samuel", "Priya", "Diego", "Hannah", "Kofi", "Ingrid", "Tariq",
         "Lucia", "Marcus", "Yuki", "Fatima", "Peter", "Noor", "Elena", "Rafael")
MIDDLE = ("A", "B", "C", "D", "E", "J", "K", "L", "M", "R", "S", "T")
LAST = ("Gomez", "Whitaker", "Okafor", "Lindgren", "Nakamura", "Petrov", "Haddad", "Sullivan", "Moreau", "Adeyemi",
        "Kowalski", "Brennan", "Castillo", "Fischer", "Osei", "Varga", "Delacroix", "Holm", "Iyer", "Quint")
STREETS = ("Birch Ln", "Harbor St", "Quarry Rd", "Linden Ave", "Mill St", "Seaview Dr", "Orchard Way", "Ridge Rd",
           "Tanner St", "Willow Ct", "Beacon Ave", "Kestrel Pl")


@dataclass(frozen=True)
class Code:
    """The instance's ordinance: the chapter number and every parameter the rules use."""

    chapter: str
    allowed_zones: tuple[str, ...]  # R-1 is always among them, owner-occupied only
    parking_exempt: tuple[str, ...]
    guests_per_bedroom: int
    extra_guests: int
    guest_cap: int
    bedrooms_per_space: int
    insurance_days: int
    base_fee: int
    fee_per_bedroom: int
    permit_limit: int

    def section(self, rule: str) -> str:
        return f"{self.chapter}.{SECTION_NUMBER[rule]:03d}"


@dataclass(frozen=True)
class Application:
    application_id: str
    received_on: dt.date
    parcel_id: str
    applicant: str
    unit_type: str  # entire_home or room_in_home
    owner_occupied: bool
    bedrooms: int
    guests: int
    parking_spaces: int
    smoke_detectors: int
    gas_appliances: bool
    co_detector: bool
    insurance_expires: dt.date
    fee_paid: int  # whole dollars


@dataclass
class Instance:
    index: int
    city: str
    code: Code
    parcels: dict[str, tuple[str, str, str]]  # parcel_id -> (address, zone, owner of record)
    violations: list[tuple[str, str, dt.date, str, dt.date | None]]  # (parcel, case, opened, status, closed)
    permits: list[tuple[str, str, str, dt.date]]  # (permit number, holder, parcel, expires)
    applications: list[Application]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def same_person(a: str, b: str) -> bool:
    """Names compare equal ignoring case, periods, commas and runs of spaces."""
    def norm(name: str) -> str:
        return " ".join(re.sub(r"[.,]", " ", name).lower().split())
    return norm(a) == norm(b)


def violated(inst: Instance, app: Application) -> set[str]:
    """The rules (names from RULES) an application breaks."""
    code = inst.code
    _, zone, owner = inst.parcels[app.parcel_id]
    broken = set()
    if zone not in code.allowed_zones or (zone == "R-1" and not app.owner_occupied):
        broken.add("zone")
    if not same_person(app.applicant, owner):
        broken.add("owner")
    if app.guests > min(code.guest_cap, code.guests_per_bedroom * app.bedrooms + code.extra_guests):
        broken.add("occupancy")
    if zone not in code.parking_exempt and app.parking_spaces < math.ceil(app.bedrooms / code.bedrooms_per_space):
        broken.add("parking")
    if app.smoke_detectors < app.bedrooms + 1 or (app.gas_appliances and not app.co_detector):
        broken.add("safety")
    if any(parcel == app.parcel_id and opened <= app.received_on and (status == "open" or closed > app.received_on)
           for parcel, _, opened, status, closed in inst.violations):
        broken.add("violations")
    if app.insurance_expires < app.received_on + dt.timedelta(days=code.insurance_days):
        broken.add("insurance")
    if app.fee_paid < code.base_fee + code.fee_per_bedroom * app.bedrooms:
        broken.add("fee")
    held = sum(1 for _, holder, _, expires in inst.permits
               if same_person(holder, app.applicant) and expires >= app.received_on)
    if held >= code.permit_limit:
        broken.add("limit")
    return broken


def expected_decisions(inst: Instance) -> dict[str, frozenset[str]]:
    """application_id -> the section numbers it violates (empty: approve)."""
    return {a.application_id: frozenset(inst.code.section(r) for r in violated(inst, a)) for a in inst.applications}


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _csv(header: tuple[str, ...], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _code(rng: random.Random) -> Code:
    chapter = f"{rng.randint(3, 17)}.{rng.randint(20, 68)}"
    allowed = ("R-1", *sorted(rng.sample(["R-2", "R-3", "MU", "C-1"], rng.randint(2, 4))))
    exempt = tuple(z for z in ("MU", "C-1") if z in allowed and rng.random() < 0.7)
    return Code(chapter, allowed, exempt, rng.choice([2, 2, 3]), rng.choice([0, 2, 2, 4]), rng.choice([8, 10, 12]),
                rng.choice([1, 2, 2, 3]), rng.choice([30, 60, 90, 180]), rng.choice([150, 200, 250, 300]),
                rng.choice([25, 40, 50, 75]), rng.choice([1, 2, 2, 3]))


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(MIDDLE)}. {rng.choice(LAST)}"


def _restyled(rng: random.Random, name: str) -> str:
    """The same name as an applicant might type it: other case, no period or extra spaces."""
    style = rng.choice(["upper", "no-period", "spaces", "same"])
    if style == "upper":
        return name.upper()
    if style == "no-period":
        return name.replace(".", "")
    return name.replace(" ", "  ", 1) if style == "spaces" else name


def _compliant(rng: random.Random, inst: Instance, parcel: str, received: dt.date, number: int) -> Application:
    """An application that breaks no rule (before any planted fault)."""
    code = inst.code
    _, zone, owner = inst.parcels[parcel]
    bedrooms = rng.randint(1, 5)
    unit_type = rng.choice(["entire_home", "room_in_home"])
    gas = rng.random() < 0.5
    limit = min(code.guest_cap, code.guests_per_bedroom * bedrooms + code.extra_guests)
    need_spaces = math.ceil(bedrooms / code.bedrooms_per_space)
    fee = code.base_fee + code.fee_per_bedroom * bedrooms
    return Application(
        f"STR-{received:%Y}-{number:04d}", received, parcel, _restyled(rng, owner), unit_type,
        unit_type == "room_in_home" or zone == "R-1" or rng.random() < 0.3, bedrooms,
        rng.choice([limit, rng.randint(1, limit)]), need_spaces + rng.choice([0, 0, 1]),
        bedrooms + 1 + rng.choice([0, 0, 1, 2]), gas, gas or rng.random() < 0.5,
        received + dt.timedelta(days=code.insurance_days + rng.choice([0, rng.randint(1, 300)])),
        fee + rng.choice([0, 0, rng.randint(1, 60)]),
    )


def _break(rng: random.Random, inst: Instance, app: Application, rule: str) -> Application:
    """The application (or its parcel) changed so that it breaks `rule`; the truth is recomputed from the data."""
    code = inst.code
    zone = inst.parcels[app.parcel_id][1]
    if rule == "owner":
        return replace(app, applicant=_person(rng))
    if rule == "occupancy":
        limit = min(code.guest_cap, code.guests_per_bedroom * app.bedrooms + code.extra_guests)
        return replace(app, guests=limit + rng.choice([1, 1, 2]))
    if rule == "parking" and zone not in code.parking_exempt:
        return replace(app, parking_spaces=math.ceil(app.bedrooms / code.bedrooms_per_space) - 1)
    if rule == "safety":
        if rng.random() < 0.5:
            return replace(app, gas_appliances=True, co_detector=False)
        return replace(app, smoke_detectors=app.bedrooms)
    if rule == "insurance":
        short = dt.timedelta(days=code.insurance_days - rng.randint(1, 20))
        return replace(app, insurance_expires=app.received_on + short)
    if rule == "fee":
        due = code.base_fee + code.fee_per_bedroom * app.bedrooms
        return replace(app, fee_paid=rng.choice([due - code.fee_per_bedroom, code.base_fee, due - 1]))
    if rule == "zone" and zone == "R-1":
        return replace(app, owner_occupied=False, unit_type="entire_home")
    if rule == "zone":  # the parcel lies in a zone where rentals are not permitted
        address, _, owner = inst.parcels[app.parcel_id]
        banned = [z for z in ZONES if z not in inst.code.allowed_zones]
        inst.parcels[app.parcel_id] = (address, rng.choice(banned), owner)
    return app


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    n_apps = {"small": (2, 4), "medium": (5, 10), "large": (12, 22)}[tier]
    inst = Instance(index, rng.choice(CITIES), _code(rng), {}, [], [], [])
    owners = [_person(rng) for _ in range(30)]
    for number in rng.sample(range(100000, 999999), n_apps[1] + 6):
        address = f"{rng.randint(10, 2999)} {rng.choice(STREETS)}"
        zone = rng.choice(inst.code.allowed_zones) if rng.random() < 0.85 else rng.choice(ZONES)
        inst.parcels[f"{number // 1000:03d}-{number % 1000:03d}"] = (address, zone, rng.choice(owners))
    parcels = sorted(inst.parcels)
    start = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randint(0, 900))
    first_number = rng.randint(100, 900)
    for n in range(rng.randint(*n_apps)):
        parcel = parcels[n]
        received = start + dt.timedelta(days=rng.randint(0, 25))
        app = _compliant(rng, inst, parcel, received, first_number + n)
        if rng.random() < 0.7:
            for rule in rng.sample(["zone", "owner", "occupancy", "parking", "safety", "insurance", "fee",
                                    "violations", "limit"], rng.choice([1, 1, 2, 3])):
                app = _break(rng, inst, app, rule)
                if rule == "violations":  # a code case open on the day the application came in
                    opened = received - dt.timedelta(days=rng.randint(0, 200))
                    closed = received + dt.timedelta(days=rng.randint(1, 60))
                    status = rng.choice(["open", "closed"])
                    inst.violations.append((parcel, "", opened, status, closed if status == "closed" else None))
                if rule == "limit":
                    for _ in range(inst.code.permit_limit):
                        inst.permits.append(("", _restyled(rng, app.applicant), rng.choice(parcels),
                                             received + dt.timedelta(days=rng.randint(0, 400))))
        inst.applications.append(app)
    for parcel in rng.sample(parcels, min(len(parcels), rng.randint(1, 6))):  # harmless cases: closed, or later
        opened = start - dt.timedelta(days=rng.randint(30, 400))
        if rng.random() < 0.5:
            inst.violations.append((parcel, "", opened, "closed", start - dt.timedelta(days=rng.randint(1, 29))))
        else:
            inst.violations.append((parcel, "", start + dt.timedelta(days=rng.randint(26, 90)), "open", None))
    for _ in range(rng.randint(2, 8)):  # other permit holders, and expired permits of applicants
        holder = rng.choice([a.applicant for a in inst.applications] + owners)
        expires = start - dt.timedelta(days=rng.randint(1, 300)) if rng.random() < 0.6 else \
            start + dt.timedelta(days=rng.randint(30, 500))
        inst.permits.append(("", holder, rng.choice(parcels), expires))
    _number_records(rng, inst)
    _write_files(inst)
    return inst


def _number_records(rng: random.Random, inst: Instance) -> None:
    cases = rng.sample(range(1000, 9999), len(inst.violations))
    inst.violations = sorted(((p, f"CE-{c}", o, s, cl) for (p, _, o, s, cl), c in zip(inst.violations, cases,
                                                                                      strict=True)),
                             key=lambda v: (v[2], v[1]))
    numbers = rng.sample(range(100, 999), len(inst.permits))
    inst.permits = sorted(((f"STR-P{n}", h, p, e) for (_, h, p, e), n in zip(inst.permits, numbers, strict=True)),
                          key=lambda x: x[0])


def _ordinance(inst: Instance) -> str:
    code, s = inst.code, inst.code.section
    zones = ", ".join(z for z in code.allowed_zones if z != "R-1")
    exempt = " and ".join(code.parking_exempt)
    exemption = f" Parcels in zone {exempt} are exempt from this section." if exempt else ""
    return f"""# City of {inst.city} Municipal Code, Chapter {code.chapter}: Short-Term Rentals

## {code.chapter}.010 Purpose
This chapter regulates the rental of dwelling units, or rooms in them, for periods of fewer than 30 days.

## {code.chapter}.020 Permit required; review
No short-term rental may operate without a permit. An application is reviewed against sections {s('zone')}
to {s('limit')} as they stand on the date the application is received. An application that fails any of them is
denied; every section it fails is stated in the denial.

## {s('zone')} Zoning
Short-term rentals are permitted in zones R-1, {zones}. In zone R-1 a permit may be issued only when the
dwelling is owner-occupied. They are not permitted in any other zone.

## {s('owner')} Applicant
The applicant must be the owner of record of the parcel. Names are compared without regard to capitalisation,
punctuation or spacing.

## {s('occupancy')} Occupancy
The number of guests may not exceed {code.guests_per_bedroom} per bedroom plus {code.extra_guests}, and never
more than {code.guest_cap} in all.

## {s('parking')} Parking
The dwelling must provide at least one off-street parking space for every {code.bedrooms_per_space} bedroom(s)
or part thereof (bedrooms divided by {code.bedrooms_per_space}, rounded up).{exemption}

## {s('safety')} Life safety
The dwelling must have at least one smoke detector per bedroom plus one more. A dwelling with any gas appliance
must also have a carbon monoxide detector.

## {s('violations')} Code compliance
No permit may be issued for a parcel with an open code enforcement case. A case is open on a date if it was opened
on or before that date and had not been closed by then (a case closed on a later date was still open).

## {s('insurance')} Insurance
The applicant must hold liability insurance valid for at least {code.insurance_days} days after the date the
application is received (the expiry date may be that day or later).

## {s('fee')} Fee
The application fee is ${code.base_fee} plus ${code.fee_per_bedroom} per bedroom. An application paid short of the
fee is incomplete and denied.

## {s('limit')} Limit per person
No person may hold more than {code.permit_limit} short-term rental permit(s). An applicant who already holds
{code.permit_limit} or more permits that are unexpired on the date received (expiry on or after that date) is denied.
"""


def _write_files(inst: Instance) -> None:
    yes = lambda flag: "yes" if flag else "no"  # noqa: E731
    apps = sorted(inst.applications, key=lambda a: a.application_id)
    inst.files = {
        "ordinance.md": _ordinance(inst),
        "applications.csv": _csv(
            ("application_id", "received_on", "parcel_id", "applicant_name", "unit_type", "owner_occupied",
             "bedrooms", "max_guests", "offstreet_parking", "smoke_detectors", "gas_appliances", "co_detector",
             "insurance_expires", "fee_paid"),
            [[a.application_id, a.received_on.isoformat(), a.parcel_id, a.applicant, a.unit_type,
              yes(a.owner_occupied), str(a.bedrooms), str(a.guests), str(a.parking_spaces), str(a.smoke_detectors),
              yes(a.gas_appliances), yes(a.co_detector), a.insurance_expires.isoformat(), f"{a.fee_paid}.00"]
             for a in apps]),
        "parcels.csv": _csv(("parcel_id", "address", "zone", "owner_of_record"),
                            [[p, *v] for p, v in sorted(inst.parcels.items())]),
        "violations.csv": _csv(("parcel_id", "case_no", "opened_on", "status", "closed_on"),
                               [[p, c, o.isoformat(), s, cl.isoformat() if cl else ""]
                                for p, c, o, s, cl in inst.violations]),
        "permits.csv": _csv(("permit_no", "holder_name", "parcel_id", "expires_on"),
                            [[n, h, p, e.isoformat()] for n, h, p, e in inst.permits]),
    }
    inst.prompt = {
        "city": inst.city,
        "chapter": inst.code.chapter,
        "application_count": str(len(apps)),
    }


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
