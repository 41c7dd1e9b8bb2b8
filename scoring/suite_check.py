"""`arena suite check`: a suite's balance, duplicates, and every item's oracle and do-nothing trials.

`check_items` runs an `ItemRunner` over every item on a few threads and judges the outcomes; `check_episodes` does
so in one sandbox with `oracle_and_nop`, the scripted agents' two trials. An item passes when its oracle scores
exactly 1 and doing nothing scores at most the floor; a setup or verifier error is a failure, never a score.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agents.scripted import NOP_FLOOR, nop_agent, oracle_agent
from sandbox.outcomes import EpisodeOutcome
from sandbox.sandbox import InitialState, Sandbox
from scoring.suite import Suite, SuiteItem, balance_problems
from taskpkg.package import TaskPackage


@dataclass(frozen=True)
class Finding:
    """One problem of a suite: where (manifest:line), what, and how to fix it."""

    where: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}. {self.fix}"


@dataclass(frozen=True)
class ItemTrial:
    """What the oracle and the do-nothing agent got on one item; outcome as the sandbox reports it."""

    oracle_outcome: EpisodeOutcome
    oracle_reward: float | None
    nop_outcome: EpisodeOutcome
    nop_reward: float | None
    error: str | None = None


ItemRunner = Callable[[TaskPackage, int], ItemTrial]
ItemDone = Callable[[SuiteItem, Finding | None], None]


def check_layout(suite: Suite) -> list[Finding]:
    """Balance (≤20% per domain) and duplicate packages (the same prompt, generator and verifier twice)."""
    found = [Finding(str(suite.manifest), problem, "Balance the domains: no domain may hold more than a fifth "
                     "of the items") for problem in balance_problems(suite.counts())]
    first_line = {item.path: item.line for item in reversed(suite.items)}
    seen: dict[str, TaskPackage] = {}
    for package in suite.packages.values():
        key = _content_key(package)
        if key in seen:
            found.append(Finding(f"{suite.manifest}:{first_line[package.root]}",
                                 f"{package.name} duplicates {seen[key].name} (same prompt, generator and verifier)",
                                 "Keep one of them: a duplicate weighs its task twice"))
        else:
            seen[key] = package
    return found


def _content_key(package: TaskPackage) -> str:
    digest = hashlib.sha256(package.body.strip().encode("utf-8"))
    for path in (package.root / package.generator, package.verifier_file):
        digest.update(b"\0" + (path.read_bytes() if path.is_file() else b""))
    return digest.hexdigest()


def judge(item: SuiteItem, trial: ItemTrial, manifest: Path, nop_floor: float) -> Finding | None:
    """The finding for one item's trials, or None when the oracle scores 1 and doing nothing at most the floor."""
    where = f"{manifest}:{item.line}"
    name = f"{item.package} instance {item.instance}"
    if trial.oracle_outcome != EpisodeOutcome.SCORED or trial.nop_outcome != EpisodeOutcome.SCORED:
        return Finding(where, f"{name}: the oracle's episode ended {trial.oracle_outcome}, doing nothing's "
                       f"{trial.nop_outcome}" + (f" ({trial.error})" if trial.error else ""),
                       f"Run `arena run {item.path} --agent oracle --instance {item.instance}` to see why")
    if trial.oracle_reward != 1.0:
        return Finding(where, f"{name}: the oracle scored {trial.oracle_reward}, not 1",
                       f"Fix the package or drop the item; `arena run {item.path} --instance {item.instance}` shows "
                       "the episode")
    if trial.nop_reward is None or trial.nop_reward > nop_floor:
        return Finding(where, f"{name}: doing nothing scored {trial.nop_reward} (floor {nop_floor})",
                       "The item is solved before the agent acts: fix the verifier or drop the item")
    return None


def check_items(suite: Suite, run: ItemRunner, nop_floor: float, workers: int = 2,
                on_item: ItemDone | None = None) -> list[Finding]:
    """Run the oracle and the do-nothing agent on every item (workers at a time); the failures, in suite order."""
    lock = threading.Lock()
    packages = {package.root: package for package in suite.packages.values()}

    def one(item: SuiteItem) -> Finding | None:
        try:
            trial = run(packages[item.path], item.instance)
        except Exception as exc:  # an engine fault on one item is that item's failure, not the whole check's
            broke = EpisodeOutcome.AGENT_ERROR
            trial = ItemTrial(broke, None, broke, None, f"{type(exc).__name__}: {exc}")
        finding = judge(item, trial, suite.manifest, nop_floor)
        if on_item is not None:
            with lock:
                on_item(item, finding)
        return finding

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(one, suite.items))
    return [f for f in results if f is not None]


def oracle_and_nop(sandbox: Sandbox) -> ItemRunner:
    """One item's two trials: the oracle's episode, then its instance (committed before the oracle acted) scored
    untouched, as the do-nothing agent would leave it."""
    def run(package: TaskPackage, instance: int) -> ItemTrial:
        shared: list[InitialState] = []
        oracle = sandbox.run_episode(package, instance, oracle_agent(package), share_initial=shared.append)
        try:
            nop = sandbox.score_initial(package, shared[0], nop_agent().name) if shared else None
        finally:
            for state in shared:
                sandbox.release(state)
        return ItemTrial(oracle.outcome, oracle.reward, nop.outcome if nop else EpisodeOutcome.SETUP_ERROR,
                         nop.reward if nop else None, oracle.error or (nop.error if nop else None))
    return run


def check_episodes(suite: Suite, workers: int = 2, on_item: ItemDone | None = None) -> list[Finding]:
    """Every item's oracle and do-nothing trials in one sandbox (raises the engine's errors: the caller says so)."""
    with Sandbox() as sandbox:
        return check_items(suite, oracle_and_nop(sandbox), NOP_FLOOR, workers, on_item)
