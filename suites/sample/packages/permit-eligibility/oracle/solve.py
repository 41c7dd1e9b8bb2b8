"""Reference solution for permit-eligibility: read the ordinance's parameters, then review each application."""

from __future__ import annotations

import csv
import datetime as dt
import math
import re
from pathlib import Path


def read(name: str) -> list[dict[str, str]]:
    with Path(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def find(pattern: str, text: str) -> re.Match[str]:
    found = re.search(pattern, text, flags=re.DOTALL)
    assert found, f"the ordinance has no match for {pattern!r}"
    return found


def person(name: str) -> str:
    return " ".join(re.sub(r"[.,]", " ", name).lower().split())


def main() -> None:
    text = Path("ordinance.md").read_text(encoding="utf-8")
    chapter = find(r"Chapter (\d+\.\d+):", text).group(1)
    zones = [z.strip() for z in find(r"permitted in zones (.*?)\. In zone", text).group(1).split(",")]
    exempt_match = re.search(r"Parcels in zone (.*?) are exempt", text)
    exempt = exempt_match.group(1).split(" and ") if exempt_match else []
    per_bedroom, extra = map(int, find(r"exceed (\d+) per bedroom plus (\d+)", text).groups())
    cap = int(find(r"never\s+more than (\d+)", text).group(1))
    per_space = int(find(r"space for every (\d+) bedroom", text).group(1))
    insurance_days = int(find(r"valid for at least (\d+) days", text).group(1))
    base_fee, fee_per_bedroom = map(int, find(r"fee is \$(\d+) plus \$(\d+) per bedroom", text).groups())
    limit = int(find(r"already holds\s+(\d+) or more", text).group(1))

    parcels = {p["parcel_id"]: p for p in read("parcels.csv")}
    cases = read("violations.csv")
    permits = read("permits.csv")
    rows = []
    for app in read("applications.csv"):
        received = dt.date.fromisoformat(app["received_on"])
        parcel = parcels[app["parcel_id"]]
        bedrooms = int(app["bedrooms"])
        failed = []
        if parcel["zone"] not in zones or (parcel["zone"] == "R-1" and app["owner_occupied"] != "yes"):
            failed.append("030")
        if person(app["applicant_name"]) != person(parcel["owner_of_record"]):
            failed.append("040")
        if int(app["max_guests"]) > min(cap, per_bedroom * bedrooms + extra):
            failed.append("050")
        if parcel["zone"] not in exempt and int(app["offstreet_parking"]) < math.ceil(bedrooms / per_space):
            failed.append("060")
        no_co = app["gas_appliances"] == "yes" and app["co_detector"] != "yes"
        if int(app["smoke_detectors"]) < bedrooms + 1 or no_co:
            failed.append("070")
        for case in cases:
            if case["parcel_id"] != app["parcel_id"] or dt.date.fromisoformat(case["opened_on"]) > received:
                continue
            if case["status"] == "open" or dt.date.fromisoformat(case["closed_on"]) > received:
                failed.append("080")
                break
        if dt.date.fromisoformat(app["insurance_expires"]) < received + dt.timedelta(days=insurance_days):
            failed.append("090")
        if float(app["fee_paid"]) < base_fee + fee_per_bedroom * bedrooms:
            failed.append("100")
        held = [p for p in permits if person(p["holder_name"]) == person(app["applicant_name"])
                and dt.date.fromisoformat(p["expires_on"]) >= received]
        if len(held) >= limit:
            failed.append("110")
        sections = ";".join(f"{chapter}.{n}" for n in failed)
        rows.append([app["application_id"], "DENY" if failed else "APPROVE", sections])
    with Path("decisions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["application_id", "decision", "sections"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
