"""Reference solution for lab-result-flags: keep the latest report per result, convert, look up the range, flag."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path


def read(name: str) -> list[dict[str, str]]:
    with Path(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def limit(text: str) -> Decimal | None:
    return Decimal(text) if text.strip() else None


def whole_years(birth: dt.date, day: dt.date) -> int:
    years = day.year - birth.year
    return years - 1 if (day.month, day.day) < (birth.month, birth.day) else years


def main() -> None:
    patients = {p["patient_id"]: (p["sex"], dt.date.fromisoformat(p["birth_date"])) for p in read("patients.csv")}
    ranges = read("reference_ranges.csv")
    reference_unit = {r["test_code"]: r["unit"] for r in ranges}
    factors = {(c["test_code"], c["from_unit"]): Decimal(c["factor"]) for c in read("unit_conversions.csv")}
    latest: dict[tuple[str, str], dict[str, str]] = {}
    for row in read("results.csv"):
        key = (row["accession"], row["test_code"])
        if key not in latest or row["reported_at"] > latest[key]["reported_at"]:
            latest[key] = row
    flags = []
    for (accession, test), row in sorted(latest.items()):
        if row["status"] == "cancelled":
            continue
        value = Decimal(row["value"])
        if row["unit"] != reference_unit[test]:
            value *= factors[(test, row["unit"])]
        sex, birth = patients[row["patient_id"]]
        age = whole_years(birth, dt.date.fromisoformat(row["collected_at"][:10]))
        (r,) = [r for r in ranges if r["test_code"] == test and r["sex"] in ("any", sex)
                and int(r["age_min"]) <= age <= int(r["age_max"])]
        crit_low, crit_high = limit(r["critical_low"]), limit(r["critical_high"])
        if crit_low is not None and value < crit_low:
            flags.append((accession, test, "LL"))
        elif crit_high is not None and value > crit_high:
            flags.append((accession, test, "HH"))
        elif value < Decimal(r["low"]):
            flags.append((accession, test, "L"))
        elif value > Decimal(r["high"]):
            flags.append((accession, test, "H"))
    with Path("flags.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["accession", "test_code", "flag"])
        writer.writerows(flags)


if __name__ == "__main__":
    main()
