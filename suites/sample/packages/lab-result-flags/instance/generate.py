"""Generate one day's chemistry and haematology results to be flagged against a lab's reference ranges.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes reference_ranges.csv, unit_conversions.csv,
patients.csv and results.csv into ARENA_WORKSPACE and prints the prompt values as one JSON object. The verifier
imports ``build_instance`` and ``expected_flags`` to rebuild the instance and the flags without reading the workspace.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import random
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

COUNT = 1000
SALT = "posttrain-arena/sample/lab-result-flags/v1"
FLAGS = ("L", "H", "LL", "HH")
LABS = ("Riverside Regional Laboratory", "St. Brendan's Pathology", "Coastal Clinical Labs", "Meadowbrook Hospital Lab",
        "Summit Diagnostics", "Lakeland Community Hospital")
# test code -> (name, unit, decimals, {(sex, age_min, age_max): (low, high)}, (critical low, critical high))
TESTS: dict[str, tuple[str, str, int, dict[tuple[str, int, int], tuple[str, str]], tuple[str, str]]] = {
    "GLU": ("Glucose, fasting", "mg/dL", 0, {("any", 0, 150): ("70", "99")}, ("40", "400")),
    "K": ("Potassium", "mmol/L", 1, {("any", 0, 150): ("3.5", "5.1")}, ("2.8", "6.2")),
    "NA": ("Sodium", "mmol/L", 0, {("any", 0, 150): ("136", "145")}, ("120", "160")),
    "CA": ("Calcium", "mg/dL", 1, {("any", 0, 150): ("8.6", "10.3")}, ("6.5", "13.0")),
    "CREA": ("Creatinine", "mg/dL", 2, {("any", 0, 17): ("0.30", "0.70"), ("F", 18, 150): ("0.59", "1.04"),
                                        ("M", 18, 150): ("0.74", "1.35")}, ("", "10.00")),
    "HGB": ("Hemoglobin", "g/dL", 1, {("any", 0, 17): ("11.5", "15.5"), ("F", 18, 150): ("12.0", "15.5"),
                                      ("M", 18, 150): ("13.5", "17.5")}, ("7.0", "20.0")),
    "WBC": ("White blood cell count", "10^9/L", 1, {("any", 0, 17): ("5.0", "14.5"), ("any", 18, 150): ("4.0", "11.0")},
            ("2.0", "30.0")),
    "PLT": ("Platelet count", "10^9/L", 0, {("any", 0, 150): ("150", "400")}, ("50", "1000")),
    "TSH": ("Thyrotropin", "mIU/L", 2, {("any", 0, 150): ("0.40", "4.00")}, ("", "")),
    "ALT": ("Alanine aminotransferase", "U/L", 0, {("F", 0, 150): ("7", "45"), ("M", 0, 150): ("7", "55")}, ("", "")),
}
# test code -> (other unit, factor to the reference unit, decimals in the other unit)
CONVERSIONS = {"GLU": ("mmol/L", "18", 1), "CA": ("mmol/L", "4.008", 2), "HGB": ("g/L", "0.1", 0),
               "CREA": ("umol/L", "0.01131", 0)}
PANELS = {"BMP": ("GLU", "K", "NA", "CA", "CREA"), "CBC": ("HGB", "WBC", "PLT"), "THY": ("TSH",),
          "LFT": ("ALT",), "RENAL": ("CREA", "K", "NA")}


@dataclass(frozen=True)
class Range:
    test: str
    sex: str
    age_min: int
    age_max: int
    low: Decimal
    high: Decimal
    critical_low: Decimal | None
    critical_high: Decimal | None


@dataclass(frozen=True)
class Row:
    accession: str
    patient_id: str
    collected_at: dt.datetime
    test: str
    value: str
    unit: str
    status: str  # final, corrected or cancelled
    reported_at: dt.datetime


@dataclass
class Instance:
    index: int
    lab: str
    run_date: dt.date
    tier: str
    ranges: list[Range]
    patients: dict[str, tuple[str, dt.date]]  # patient_id -> (sex, birth date)
    rows: list[Row]
    files: dict[str, str] = field(default_factory=dict)
    prompt: dict[str, str] = field(default_factory=dict)


def age_on(birth: dt.date, day: dt.date) -> int:
    """Whole years of age on a day."""
    return day.year - birth.year - ((day.month, day.day) < (birth.month, birth.day))


def range_for(ranges: list[Range], test: str, sex: str, age: int) -> Range:
    """The one reference range that applies to a test for a patient's sex and age."""
    found = [r for r in ranges if r.test == test and r.sex in ("any", sex) and r.age_min <= age <= r.age_max]
    assert len(found) == 1, (test, sex, age)
    return found[0]


def flag_of(value: Decimal, r: Range) -> str:
    """N, L, H, LL or HH for a value in the range's unit."""
    if r.critical_low is not None and value < r.critical_low:
        return "LL"
    if r.critical_high is not None and value > r.critical_high:
        return "HH"
    if value < r.low:
        return "L"
    return "H" if value > r.high else "N"


def in_reference_unit(row: Row) -> Decimal:
    """A result's value converted to its test's reference unit."""
    value = Decimal(row.value)
    return value * Decimal(CONVERSIONS[row.test][1]) if row.unit != TESTS[row.test][1] else value


def reportable(inst: Instance) -> list[Row]:
    """The row that counts for each (accession, test): the latest reported, unless it is cancelled."""
    latest: dict[tuple[str, str], Row] = {}
    for row in inst.rows:
        key = (row.accession, row.test)
        if key not in latest or row.reported_at > latest[key].reported_at:
            latest[key] = row
    return [r for r in latest.values() if r.status != "cancelled"]


def expected_flags(inst: Instance) -> dict[tuple[str, str], str]:
    """(accession, test code) -> flag, for every reportable result that is not normal."""
    found = {}
    for row in reportable(inst):
        sex, birth = inst.patients[row.patient_id]
        age = age_on(birth, row.collected_at.date())
        flag = flag_of(in_reference_unit(row), range_for(inst.ranges, row.test, sex, age))
        if flag != "N":
            found[(row.accession, row.test)] = flag
    return found


def _rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{SALT}:{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _csv(header: tuple[str, ...], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _nudge(rng: random.Random, text: str, decimals: int) -> Decimal:
    """A reference limit shifted a little, as another lab's validated range would be."""
    step = Decimal(1).scaleb(-decimals)
    return Decimal(text) + step * rng.choice([-1, 0, 0, 0, 1])


def _ranges(rng: random.Random) -> list[Range]:
    ranges = []
    for code, (_, _, decimals, bands, (crit_low, crit_high)) in TESTS.items():
        cl = _nudge(rng, crit_low, decimals) if crit_low else None
        ch = _nudge(rng, crit_high, decimals) if crit_high else None
        for (sex, age_min, age_max), (low, high) in bands.items():
            ranges.append(Range(code, sex, age_min, age_max, _nudge(rng, low, decimals), _nudge(rng, high, decimals),
                                cl, ch))
    return ranges


def _value(rng: random.Random, r: Range, decimals: int) -> Decimal:
    """A value in the reference unit, aimed at a random flag, sometimes exactly on a limit."""
    step = Decimal(1).scaleb(-decimals)
    limits = [x for x in (r.critical_low, r.low, r.high, r.critical_high) if x is not None]
    if rng.random() < 0.2:
        return rng.choice(limits)
    lowest = r.critical_low / 2 if r.critical_low is not None else r.low / 2
    highest = r.critical_high * Decimal("1.4") if r.critical_high is not None else r.high * 2
    target = rng.choices(["N", "L", "H", "LL", "HH"], weights=[40, 15, 20, 12, 13])[0]
    span = {
        "N": (r.low, r.high),
        "L": (r.critical_low if r.critical_low is not None else lowest, r.low),
        "H": (r.high, r.critical_high if r.critical_high is not None else highest),
        "LL": (lowest, r.critical_low if r.critical_low is not None else r.low),
        "HH": (r.critical_high if r.critical_high is not None else r.high, highest),
    }[target]
    units = rng.randint(int(span[0] / step), int(span[1] / step))
    return max(step, units * step)


def _converted(rng: random.Random, code: str, value: Decimal, r: Range) -> tuple[str, str] | None:
    """The value in the test's other unit, or None when that rounding would land too close to a limit."""
    unit, factor, decimals = CONVERSIONS[code]
    shown = (value / Decimal(factor)).quantize(Decimal(1).scaleb(-decimals))
    back = shown * Decimal(factor)
    limits = [x for x in (r.critical_low, r.low, r.high, r.critical_high) if x is not None]
    if shown <= 0 or any(abs(back - x) < Decimal("0.001") for x in limits):
        return None
    return f"{shown:f}", unit


def _results(rng: random.Random, inst: Instance, specimens: int) -> list[Row]:
    rows: list[Row] = []
    convert_share = {"small": 0.0, "medium": 0.25, "large": 0.3}[inst.tier]
    accessions = rng.sample(range(100000, 999999), specimens)
    for number in accessions:
        patient = rng.choice(sorted(inst.patients))
        sex, birth = inst.patients[patient]
        collected = dt.datetime.combine(inst.run_date, dt.time(rng.randint(5, 20), rng.randint(0, 59)))
        age = age_on(birth, collected.date())
        for code in PANELS[rng.choice(sorted(PANELS))]:
            decimals = TESTS[code][2]
            r = range_for(inst.ranges, code, sex, age)
            value, unit = f"{_value(rng, r, decimals):f}", TESTS[code][1]
            if code in CONVERSIONS and rng.random() < convert_share:
                value, unit = _converted(rng, code, Decimal(value), r) or (value, unit)
            reported = collected + dt.timedelta(minutes=rng.randint(30, 240))
            row = Row(f"A{inst.run_date:%y}-{number}", patient, collected, code, value, unit, "final", reported)
            rows.append(row)
            if inst.tier != "small" and rng.random() < 0.08:  # a later correction or cancellation of this result
                later = reported + dt.timedelta(minutes=rng.randint(20, 300))
                if rng.random() < 0.6:
                    fixed = f"{_value(rng, r, decimals):f}"
                    rows.append(Row(row.accession, patient, collected, code, fixed, TESTS[code][1], "corrected", later))
                else:
                    rows.append(Row(row.accession, patient, collected, code, value, unit, "cancelled", later))
    return sorted(rows, key=lambda x: (x.reported_at, x.accession, x.test))


def _patients(rng: random.Random, run_date: dt.date, count: int) -> dict[str, tuple[str, dt.date]]:
    patients = {}
    for number in rng.sample(range(1000000, 9999999), count):
        if rng.random() < 0.3:  # a birthday close to the run date, at the 17/18 boundary
            years = rng.choice([17, 18])
            birth = run_date.replace(year=run_date.year - years) + dt.timedelta(days=rng.randint(-3, 3))
        else:
            birth = run_date - dt.timedelta(days=rng.randint(2 * 365, 92 * 365))
        if (birth.month, birth.day) == (2, 29):  # conventions differ on when such a birthday falls: avoid it
            birth += dt.timedelta(days=1)
        patients[f"MRN{number}"] = (rng.choice("FM"), birth)
    return patients


def build_instance(index: int) -> Instance:
    """Build instance ``index`` deterministically; no files are written."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} is outside 0..{COUNT - 1}")
    rng = _rng(index)
    tier = rng.choices(["small", "medium", "large"], weights=[3, 4, 3])[0]
    n_patients, specimens = {"small": ((1, 2), (1, 2)), "medium": ((3, 6), (3, 8)), "large": ((8, 14), (10, 24))}[tier]
    run_date = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randint(0, 1000))
    if run_date.month == 2 and run_date.day == 29:
        run_date += dt.timedelta(days=1)
    inst = Instance(index, rng.choice(LABS), run_date, tier, _ranges(rng), {}, [])
    inst.patients = _patients(rng, run_date, rng.randint(*n_patients))
    while True:
        inst.rows = _results(rng, inst, rng.randint(*specimens))
        if expected_flags(inst):
            break
    plain = lambda x: "" if x is None else f"{x:f}"  # noqa: E731
    inst.files = {
        "reference_ranges.csv": _csv(
            ("test_code", "test_name", "unit", "sex", "age_min", "age_max", "low", "high", "critical_low",
             "critical_high"),
            [[r.test, TESTS[r.test][0], TESTS[r.test][1], r.sex, str(r.age_min), str(r.age_max), plain(r.low),
              plain(r.high), plain(r.critical_low), plain(r.critical_high)] for r in inst.ranges]),
        "unit_conversions.csv": _csv(
            ("test_code", "from_unit", "to_unit", "factor"),
            [[code, unit, TESTS[code][1], factor] for code, (unit, factor, _) in CONVERSIONS.items()]),
        "patients.csv": _csv(("patient_id", "sex", "birth_date"),
                             [[p, s, b.isoformat()] for p, (s, b) in sorted(inst.patients.items())]),
        "results.csv": _csv(
            ("accession", "patient_id", "collected_at", "test_code", "value", "unit", "status", "reported_at"),
            [[r.accession, r.patient_id, r.collected_at.isoformat(timespec="minutes"), r.test, r.value, r.unit,
              r.status, r.reported_at.isoformat(timespec="minutes")] for r in inst.rows]),
    }
    inst.prompt = {
        "lab": inst.lab,
        "run_date": run_date.isoformat(),
        "patient_count": str(len(inst.patients)),
        "result_count": str(len(inst.rows)),
    }
    return inst


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
