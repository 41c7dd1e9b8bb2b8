"""Small held-out suites for tests: scaffolded packages (which pass every check) with prompts of their own."""

from __future__ import annotations

from pathlib import Path

import yaml

from scoring.contamination import InstanceText, instance_text
from taskpkg.domains import DOMAINS
from taskpkg.package import TaskPackage
from tests.support.packages import edit, make_valid_package

CANARY = "test-suite-canary:7d1c6a52-3b0e-4f7e-9d85-2f4a1e9b6c30"
SCAFFOLD_PARAGRAPH = "The file `/workspace/numbers.txt` holds"

STORIES = {
    "finance": "The treasury desk closes the quarter on Friday. Each line of the file is a wire transfer in cents "
               "booked by the overnight settlement run; reversed wires appear as negative amounts and late fees as "
               "small positive ones. The controller wants the net cash movement for the cash flow statement.",
    "healthcare": "The ward pharmacist reconciles the evening medication round. Every line records the dose change "
                  "in milligrams a nurse charted against the standing order, with reductions written as negative "
                  "numbers. Before handover she needs the overall adjustment to report to the attending physician.",
    "law-government": "The county clerk audits the land registry ledger after the annual reassessment. Each entry "
                      "is the change in assessed value of a parcel in thousands of dollars, negative where an "
                      "appeal succeeded. The board of supervisors votes tomorrow on the levy and needs the total.",
    "office-documents": "An office manager is merging the supply budget spreadsheets of four departments into "
                        "one workbook. Each row is a line item adjustment in euros from the procurement export, "
                        "credit notes being negative. The finance partner asked for one figure before the review.",
    "customer-operations": "A support team lead reviews yesterday's refund queue in the help desk. Every line is "
                           "the change in a customer's account balance after an agent closed a ticket, goodwill "
                           "credits being negative. The operations director wants the day's total on the dashboard.",
    "science-engineering": "A structures lab logs strain gauge offsets during a bridge load test. Each reading is "
                           "the drift in microstrain of one gauge relative to its calibration, compression being "
                           "negative. The test engineer needs the summed drift to decide whether to recalibrate.",
    "cybersecurity-it": "The security operations centre tallies firewall rule hit deltas after a policy push. "
                        "Each line is how many more connections one rule matched than the previous day, drops "
                        "being negative. The incident commander wants the total before closing the change window.",
    "math-planning": "A warehouse planner balances pallet moves between three depots for next week's schedule. "
                     "Each line is the net pallets one truck route shifts, outbound moves being negative. The "
                     "dispatcher must confirm the overall balance before the routes are released to drivers.",
}


def story_package(parent: Path, name: str, domain: str) -> Path:
    """A passing scaffolded package whose prompt opens with its domain's story."""
    package = make_valid_package(parent, name, domain)
    edit(package / "task.md", SCAFFOLD_PARAGRAPH, f"{STORIES[domain]}\n\n{SCAFFOLD_PARAGRAPH}")
    return package


def make_suite(root: Path, domains: tuple[str, ...] = DOMAINS, instances: tuple[int, ...] = (0, 1, 2),
               canary: str = CANARY) -> Path:
    """A suite of one package per domain at root/suite.yaml; returns the manifest's path."""
    items = []
    for domain in domains:
        name = f"{domain}-sum"
        story_package(root / "packages", name, domain)
        items.append({"package": f"packages/{name}", "domain": domain, "cluster": name, "instances": list(instances)})
    data = {"suite_version": 1, "name": "test-suite", "version": "1.0.0", "public": True, "canary": canary,
            "domains": {d: len(instances) for d in domains}, "items": items}
    manifest = root / "suite.yaml"
    manifest.write_text("# a test suite\n" + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return manifest


def generate_here(package: TaskPackage, instance: int) -> tuple[dict, dict[str, bytes]]:
    """An InstanceMaker that runs a (trusted, test-made) package's generator on this machine, in a scratch folder."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        generator = package.root / package.generator
        done = subprocess.run([sys.executable, "-I", str(generator)], cwd=workspace, capture_output=True, text=True,
                              env={**os.environ, "ARENA_INSTANCE": str(instance), "ARENA_WORKSPACE": str(workspace)},
                              check=True, timeout=60)
        files = {p.relative_to(workspace).as_posix(): p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
        return json.loads(done.stdout), files


def instance_here(package: TaskPackage, instance: int) -> InstanceText:
    """An InstanceMaker (the gate's): `generate_here`'s output as the gate reads it."""
    values, files = generate_here(package, instance)
    return instance_text(package, values, files)
