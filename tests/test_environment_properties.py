"""Properties every bundled environment and every sample-suite package must have, checked on the host.

Doing nothing scores 0.0 (not a verifier error); hostile output files (empty, garbage, NUL bytes, deep nesting,
NaN, 5 MiB, a directory, a symlink, a FIFO, ...) score 0.0 without crashing the verifier; the generator is
deterministic and distinct across seeds; every prompt placeholder is filled. A new environment is checked as soon as
its expected output files are added to OUTPUTS. Runs generator, oracle and verifier as subprocesses without Docker
(tests/support/host_episode.py); the environment-specific checks are in test_envs_*.py, the sample suite's in
test_sample_suite_packages.py.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.host_episode import frontmatter, generate, reward_of, snapshot, solved, variant

pytestmark = pytest.mark.slow  # every bundled environment run on the host, many times

ENVIRONMENTS = Path(__file__).resolve().parent.parent / "environments"
SAMPLE_SUITE = ENVIRONMENTS.parent / "suites" / "sample" / "packages"
BUNDLED = sorted(p for p in ENVIRONMENTS.iterdir() if (p / "task.md").is_file())
SAMPLES = sorted(p for p in SAMPLE_SUITE.iterdir() if (p / "task.md").is_file())
PACKAGES = BUNDLED + SAMPLES
# The files an agent writes (or rewrites) as its answer, by package: a new environment must be added here.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "auth-log-forensics": ("findings.json",),
    "ledger-reconciliation": ("reconciliation.json",),
    "refund-desk": ("ticket_reply.json", "orders.json"),
    "shift-scheduling": ("schedule.csv",),
    "word-list": ("answer.txt",),
    # the sample suite
    "receivables-aging": ("aging_report.csv",),
    "lab-result-flags": ("flags.csv",),
    "permit-eligibility": ("decisions.csv",),
    "expense-consolidation": ("reimbursement.csv",),
    "ticket-routing": ("routing.csv",),
    "beam-reactions": ("results.csv",),
    "firewall-audit": ("audit.json",),
    "cargo-loading": ("loading_plan.csv",),
}
SEEDS = [0, 1, 2, 3, 7, 42, 99, 256, 500, 777, 998, 999]
HOSTILE_SEED = 5
PLACEHOLDER = re.compile(r"\{\{ instance\.([A-Za-z0-9_]+) \}\}")


def outputs_of(package: Path) -> tuple[str, ...]:
    """The expected output files of a package; fails loudly for one missing from OUTPUTS."""
    if package.name not in OUTPUTS:
        pytest.fail(f"{package.name} is a package but not in OUTPUTS of {Path(__file__).name}: add its output files")
    return OUTPUTS[package.name]


def with_special_numbers(good: bytes, value: float) -> bytes:
    """The correct answer with its numbers (or, where it has none, its strings) replaced by value (NaN, inf)."""
    try:
        data = json.loads(good)
    except ValueError:  # CSV: value in place of each row's last cell
        head, *rows = good.splitlines()
        return b"\n".join([head, *(row.rsplit(b",", 1)[0] + f",{value}".encode() for row in rows)]) + b"\n"

    def numeric(leaf: Any) -> bool:
        if isinstance(leaf, bool):
            return False
        if isinstance(leaf, int | float):
            return True
        return isinstance(leaf, str) and re.fullmatch(r"-?\d+(\.\d+)?", leaf) is not None

    def leaves(node: Any) -> Iterator[Any]:
        if isinstance(node, dict):
            for child in node.values():
                yield from leaves(child)
        elif isinstance(node, list):
            for child in node:
                yield from leaves(child)
        else:
            yield node

    def replace(node: Any, pick: Callable[[Any], bool]) -> Any:
        if isinstance(node, dict):
            return {k: replace(v, pick) for k, v in node.items()}
        if isinstance(node, list):
            return [replace(v, pick) for v in node]
        return value if pick(node) else node

    pick = numeric if any(numeric(leaf) for leaf in leaves(data)) else (lambda leaf: isinstance(leaf, str))
    return json.dumps(replace(data, pick), indent=2).encode()


def rewrite(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """A hostile case that replaces the file's (correct) bytes by change(bytes)."""
    return lambda path: path.write_bytes(change(path.read_bytes()))


def symlink_to_the_answer(path: Path) -> None:
    """A hostile case: the correct file moved aside, with a symlink to it in its place."""
    real = path.with_name(f"real-{path.name}")
    path.rename(real)
    path.symlink_to(real.name)


def replace_by(make: Callable[[Path], object]) -> Callable[[Path], None]:
    """A hostile case that removes the file and makes something else (a folder, a FIFO) in its place."""

    def case(path: Path) -> None:
        path.unlink()
        make(path)

    return case


# Each case turns a correct output file into a hostile one; all of them must score 0.0 without a verifier error.
HOSTILE: dict[str, Callable[[Path], None]] = {
    "empty": rewrite(lambda good: b""),
    "whitespace": rewrite(lambda good: b"\n \n"),
    "garbage": rewrite(lambda good: bytes(range(256)) * 8),
    "nul_bytes": rewrite(lambda good: good[:1] + b"\x00" + good[1:]),
    "only_nul_bytes": rewrite(lambda good: b"\x00" * 4096),
    "latin1": rewrite(lambda good: "caf\u00e9".encode("latin-1") + good),
    "not_json": rewrite(lambda good: b"{'compromised': [], 'decisions': [], 'deposits_in_transit': ["),
    "json_list": rewrite(lambda good: b"[]"),
    "json_null": rewrite(lambda good: b"null"),
    "deep_nesting": rewrite(lambda good: b"[" * 100_000 + b"]" * 100_000),
    "deep_nesting_objects": rewrite(lambda good: b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    "nan_and_inf": rewrite(
        lambda good: b'{"adjusted_bank_balance": NaN, "adjusted_book_balance": Infinity, "amount_errors": [NaN], '
        b'"compromised": [NaN], "block_ips": [Infinity], "decisions": [NaN], "total_refund": NaN}'
    ),
    "nan_in_answer": rewrite(lambda good: with_special_numbers(good, math.nan)),
    "infinity_in_answer": rewrite(lambda good: with_special_numbers(good, math.inf)),
    "huge_int": rewrite(lambda good: b'{"adjusted_bank_balance": ' + b"9" * 5000 + b', "total_refund": 1}'),
    "huge": rewrite(lambda good: good + b"x" * (5 * 1024 * 1024)),
    "huge_string": rewrite(lambda good: b'{"x": "' + b"a" * (5 * 1024 * 1024) + b'"}'),
    "huge_field": rewrite(lambda good: b'shift_id,staff_id\n"' + b"a" * 300_000 + b'",E1\n'),
    "header_only": rewrite(lambda good: b"shift_id,staff_id\n"),
    "wrong_header": rewrite(lambda good: b"\n".join([b"shift,staff", *good.splitlines()[1:]]) + b"\n"),
    "extra_column": rewrite(lambda good: b"\n".join(line + b",x" for line in good.splitlines()) + b"\n"),
    "missing": lambda path: path.unlink(),
    "directory": replace_by(Path.mkdir),
    "symlink": symlink_to_the_answer,
    "fifo": replace_by(os.mkfifo),
}


@pytest.fixture(scope="module")
def oracle_workspace(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Path]:
    """The oracle's workspace for HOSTILE_SEED of a package, solved once per package (copy it before changing it)."""
    solved_by_name: dict[str, Path] = {}

    def get(package: Path) -> Path:
        if package.name not in solved_by_name:
            workspace = solved(package, HOSTILE_SEED, tmp_path_factory.mktemp(package.name))
            assert reward_of(package, HOSTILE_SEED, workspace) == 1.0, "the oracle must pass"
            solved_by_name[package.name] = workspace
        return solved_by_name[package.name]

    return get


def test_every_package_is_checked() -> None:
    names = {p.name for p in PACKAGES}
    assert len(BUNDLED) >= 4 and len(SAMPLES) >= 1 and len(names) == len(PACKAGES)
    assert names <= set(OUTPUTS), f"packages missing from OUTPUTS: {sorted(names - set(OUTPUTS))}"
    assert set(OUTPUTS) <= names, f"OUTPUTS names packages that do not exist: {sorted(set(OUTPUTS) - names)}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_doing_nothing_scores_zero(package: Path, seed: int, tmp_path: Path) -> None:
    workspace = tmp_path / "nop" / "workspace"
    generate(package, seed, workspace)
    assert reward_of(package, seed, workspace) == 0.0


@pytest.mark.parametrize("case", HOSTILE)
@pytest.mark.parametrize(
    ("package", "output"),
    [(p, name) for p in PACKAGES for name in OUTPUTS.get(p.name, ("<missing from OUTPUTS>",))],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_hostile_output_file_scores_zero_without_crashing(
    package: Path, output: str, case: str, oracle_workspace: Callable[[Path], Path], tmp_path: Path
) -> None:
    assert output in outputs_of(package)
    workspace = variant(oracle_workspace(package), tmp_path, case)
    assert (workspace / output).is_file(), f"the oracle wrote no {output}: fix OUTPUTS"
    HOSTILE[case](workspace / output)
    assert reward_of(package, HOSTILE_SEED, workspace) == 0.0


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_generator_is_deterministic_and_distinct(package: Path, tmp_path: Path) -> None:
    digests = set()
    for seed in SEEDS:
        first, second = tmp_path / f"{seed}-a", tmp_path / f"{seed}-b"
        values = generate(package, seed, first)
        assert generate(package, seed, second) == values
        files = snapshot(first)
        assert files and files == snapshot(second), f"seed {seed} is not deterministic"
        digests.add(hashlib.sha256(json.dumps(sorted((k, v.hex()) for k, v in files.items())).encode()).hexdigest())
    assert len(digests) == len(SEEDS), "two seeds produced the same instance"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_prompt_placeholders_are_all_filled(package: Path, tmp_path: Path) -> None:
    meta = frontmatter(package)
    assert meta["name"] == package.name and meta["instances"]["count"] == 1000
    body = (package / "task.md").read_text().split("---\n", 2)[2]
    keys = set(PLACEHOLDER.findall(body))
    assert body.count("{{") == len(PLACEHOLDER.findall(body)), "a placeholder not of the form {{ instance.name }}"
    for seed in (SEEDS[0], SEEDS[-1]):
        values = generate(package, seed, tmp_path / str(seed))
        assert keys <= set(values), keys - set(values)
        assert all(isinstance(v, str) and v for v in values.values())
    for scene in meta.get("scenes", []):
        assert f"\n## {scene['section']}\n" in body
