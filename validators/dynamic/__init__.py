"""Dynamic checks on a real engine: build, oracle, do-nothing floor, determinism, isolation, leaks, tamper suite,
what the agent can read (validators.dynamic.readable), what it can write that steers the verifier (.steering) and the
answer probes (.answer_probes)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from docker.errors import DockerException

from agents.scripted import NOP_FLOOR, nop_agent, oracle_agent
from sandbox.agent_interface import Agent
from sandbox.batch_verification import BatchFailed, ContainerVerifier
from sandbox.images import BuildFailed
from sandbox.instances import own_folders, provision_files
from sandbox.outcomes import EpisodeOutcome
from sandbox.sandbox import EpisodeResult, InitialState, Sandbox
from sandbox.workspace_files import WorkspaceFile
from taskpkg.check_report import TrialOutcome
from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.package import TaskPackage
from taskpkg.rules import Category, Rule, ids
from taskpkg.rules.dynamic import (
    ARENA701,
    ARENA702,
    ARENA703,
    ARENA704,
    ARENA705,
    ARENA707,
    ARENA708,
    ARENA709,
    ARENA711,
    ARENA712,
    ARENA715,
)
from taskpkg.rules.infrastructure import ARENA901
from validators.dynamic.answer_probes import (
    Answers,
    AnswerTrial,
    constant_summary,
    distinctness_findings,
    judge_answer_trials,
    plan_answer_trials,
)
from validators.dynamic.leaks import scan_image
from validators.dynamic.probes import PROBES
from validators.dynamic.readable import image_created, judge_reading, read_agent
from validators.dynamic.setup_errors import setup_findings
from validators.dynamic.steering import TRACE_COMMAND, judge_steering, names_used, steer_agent
from validators.registry import Needs, check

DEFAULT_INSTANCES = 8  # the instances made: ARENA715 compares them all (the generator's output: no episode needed)
ORACLE_INSTANCES = 6  # the oracle's, spread among them: its answers feed the answer probes and ARENA715's same_answer
# (4 lose the constant-answer catch of tests/fixtures/broken/arena716-constant-label: its rare label is on none of them)
NOP_INSTANCES = 3  # the do-nothing floor is verified on the first of them
MAX_WORKERS = 4
SLOW_ORACLE_SHARE = 0.5
HEAVY_ORACLE_SHARE = 0.7
DYNAMIC_IDS = ids(Category.DYNAMIC)
READ_PROBE, STEER_PROBE = "read-answers", "steer-verifier"  # probes that need the package: not in PROBES


class Role(StrEnum):
    """What a trial plays, and so how it is run and judged."""

    ORACLE = "oracle"  # the package's own solution: must score 1
    NOP = "nop"  # doing nothing (its instance scored untouched): must score at most the floor
    REPEAT = "repeat"  # the oracle again on the first instance: the instance must be made the same
    PROBE = "probe"  # a scripted cheat: must not score above the floor
    READ = "read"  # reads what the package leaves readable for the answers
    STEER = "steer"  # the verifier run traced, to see what steers it
    ANSWER = "answer"  # an answer probe's submission, verified on a shared instance
    INSTANCE = "instance"  # the generator alone (no agent, no verification): one more instance for ARENA715


VERIFIED_TOGETHER = (Role.NOP, Role.ANSWER)  # roles that verify an instance's initial state: one unit per instance
TRUSTED = (Role.READ, Role.STEER)  # the arena's own probes (beside the oracle): their final state is verified in place,
# and they act in the oracle's container on their instance, put back as made, when nothing changed outside what is put
# back (else in a container of their own)


@dataclass(frozen=True)
class PlannedTrial:
    """One episode to run, and the check it serves."""

    rule: Rule
    role: Role
    instance: int
    make_agent: Callable[[], Agent]  # (an answer trial runs no agent)
    verifier_command: tuple[str, ...] | None = None  # a traced verifier run (steer), else the verifier as scored
    answer: AnswerTrial | None = None

    @property
    def check_id(self) -> str:
        """The id of the rule the trial serves."""
        return self.rule.id


@dataclass
class DynamicResult:
    """Findings and per-trial records of one package's dynamic checks."""

    diagnostics: list[Diagnostic]
    trials: list[dict[str, Any]]
    image_cached: bool | None = None


def pick_instances(count: int, wanted: int) -> list[int]:
    """Distinct instances spread over the whole range: first, last and evenly between."""
    if wanted <= 1 or count <= 1:
        return [0]
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(min(wanted, count))})


def oracle_instances(instances: list[int]) -> list[int]:
    """The instances the oracle runs on: ORACLE_INSTANCES of the sampled ones, spread over them (the first and last
    among them), or all of them when there are no more."""
    if len(instances) <= ORACLE_INSTANCES:
        return list(instances)
    return [instances[i] for i in pick_instances(len(instances), ORACLE_INSTANCES)]


def plan(package: TaskPackage, instances: list[int], probes: tuple[str, ...] | None = None,
         image_created: float = 0.0) -> list[PlannedTrial]:
    """Every trial of the dynamic checks (all probes, tamper, reading, steering and answer, unless named), in the order
    they are reported. The oracle runs on oracle_instances(instances); the others are only made (the generator alone)
    for ARENA715's comparison. The tamper probes run on the first instance; the reading and steering probes (which run
    the oracle) on the oracle's first three; the answer trials come last: they wait for every oracle trial."""
    oracled = oracle_instances(instances)
    first = oracled[0]
    trials = [PlannedTrial(ARENA702, Role.ORACLE, i, lambda: oracle_agent(package)) for i in oracled]
    trials += [PlannedTrial(ARENA715, Role.INSTANCE, i, nop_agent) for i in instances if i not in oracled]
    trials += [PlannedTrial(ARENA703, Role.NOP, i, nop_agent) for i in oracled[:NOP_INSTANCES]]
    trials.append(PlannedTrial(ARENA704, Role.REPEAT, first, lambda: oracle_agent(package)))
    trials += [PlannedTrial(ARENA705 if name == "reach-network" else ARENA707, Role.PROBE, first, factory)
               for name, factory in PROBES.items() if probes is None or name in probes]
    probed = oracled[:NOP_INSTANCES]
    if probes is None or READ_PROBE in probes:
        trials += [PlannedTrial(ARENA711, Role.READ, i, lambda: read_agent(package, image_created)) for i in probed]
    if probes is None or STEER_PROBE in probes:
        used = names_used(package)  # here, once: the trials' threads must not parse at once
        trials += [PlannedTrial(ARENA712, Role.STEER, i, lambda: steer_agent(package, used), tuple(TRACE_COMMAND))
                   for i in probed]
    trials += [PlannedTrial(t.rule, Role.ANSWER, t.instance, nop_agent, answer=t)
               for t in plan_answer_trials(oracled, probes)]
    return trials


def default_workers(package: TaskPackage) -> int:
    """Parallel episodes for this package's CPU limit: one per core it fits in, plus one, since an episode spends
    much of its time waiting on the engine (measured on 2 cores: 3 workers beat 2 by about 14%)."""
    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) // max(1, math.ceil(package.limits.cpus)) + 1))


@check(ARENA701, needs=Needs.ENGINE)
def run_dynamic_checks(package: TaskPackage, sandbox: Sandbox, instances: int = DEFAULT_INSTANCES,
                       workers: int | None = None, on_trial: Callable[[str], None] | None = None,
                       probes: tuple[str, ...] | None = None) -> DynamicResult:
    """Build the image, then scan it for leaks while every trial runs in parallel; judge the results."""
    try:
        built = sandbox.image(package)
    except BuildFailed as exc:
        log = exc.log[-1500:] if exc.log else "(the engine sent no build output)"
        return DynamicResult([ARENA701.found("environment/Dockerfile", exc.line, problem=exc, log=log)], [])
    created = image_created(sandbox.client.api.inspect_image(built.tag))
    planned = plan(package, pick_instances(package.instance_count, instances), probes, created)
    scanner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-leak-scan")
    leaks = scanner.submit(scan_image, sandbox.client, built.tag, package)
    trials = _TrialRunner(package, sandbox, on_trial)
    trials.expect(planned)
    pool = ThreadPoolExecutor(max_workers=workers or default_workers(package))
    try:
        results = _in_units(planned, pool, trials)
        diagnostics = leaks.result()
    except BaseException:
        trials.abandon()  # episodes waiting for a shared instance give up instead of waiting forever
        sandbox.close()  # kill every container first, so running episodes fail fast instead of being waited for
        pool.shutdown(wait=True, cancel_futures=True)
        scanner.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        trials.release()
    pool.shutdown()
    scanner.shutdown()
    oracle_runs = {t.instance: r for t, r in zip(planned, results, strict=True) if t.role == Role.ORACLE}
    judged = [_judge(package, trial, result, oracle_runs) for trial, result in zip(planned, results, strict=True)]
    for found, _ in judged:
        diagnostics.extend(d for d in found if d not in diagnostics)
    records = [record for _, record in judged]
    diagnostics += _judge_answers(package, planned, results, records, trials)
    return DynamicResult(diagnostics, records, built.cached)


def _in_units(planned: list[PlannedTrial], pool: ThreadPoolExecutor, runner: _TrialRunner) -> list[EpisodeResult]:
    """Every trial's result, in planned order. Each trial is one unit of work for the pool, but an instance's
    do-nothing and answer trials (verifications of its initial state) are one unit, verified in as few containers as
    stay honest (sandbox.batch_verification), after every other unit: the answer trials wait for every oracle."""
    alone: list[list[int]] = []
    together: dict[int, list[int]] = {}
    trusted: dict[int, list[int]] = {}  # an instance's trusted probes, one after the other in its oracle's container
    for index, trial in enumerate(planned):
        if trial.role in VERIFIED_TOGETHER:
            together.setdefault(trial.instance, []).append(index)
        elif trial.role in TRUSTED and trial.instance in trusted:
            trusted[trial.instance].append(index)
        else:
            alone.append([index])
            if trial.role in TRUSTED:
                trusted[trial.instance] = alone[-1]
    units = alone + list(together.values())
    results: list[EpisodeResult | None] = [None] * len(planned)
    for unit, done in zip(units, pool.map(lambda u: runner.run_unit([planned[i] for i in u]), units), strict=True):
        for index, result in zip(unit, done, strict=True):
            results[index] = result
    return [r for r in results if r is not None]


class _TrialRunner:
    """Runs planned trials so that each instance is generated once: the oracle's episode shares its instance as
    committed right after setup, the do-nothing and answer trials verify that state untouched or with their files
    written over it, and probes start from it. The determinism trial makes its instance afresh."""

    def __init__(self, package: TaskPackage, sandbox: Sandbox, on_trial: Callable[[str], None] | None) -> None:
        self.package = package
        self.sandbox = sandbox
        self.on_trial = on_trial
        self._shared: dict[int, Future[InitialState | None]] = {}
        self._oracle: dict[int, Future[EpisodeResult]] = {}
        self.answers: Answers | None = None
        self.notes: dict[AnswerTrial, str] = {}
        self._setup_failed: dict[int, EpisodeResult] = {}
        self._kept: dict[int, ContainerVerifier] = {}
        self._lock = threading.Lock()
        self._kept_free = threading.Condition(self._lock)
        self._trusted_left: Counter[int] = Counter()  # trusted probes still to act in an instance's container
        self._abandoned = False

    def expect(self, planned: list[PlannedTrial]) -> None:
        """Note the trusted probes planned on each instance: its verifications wait for them to be done with it (they
        run one after the other, in one unit: _in_units)."""
        with self._lock:
            self._trusted_left.update(t.instance for t in planned if t.role in TRUSTED)

    def run_unit(self, trials: list[PlannedTrial]) -> list[EpisodeResult]:
        """One trial's episode (or an instance's trusted probes, one after the other), or one instance's
        verifications together."""
        if all(trial.role not in VERIFIED_TOGETHER for trial in trials):
            return [self.run(trial) for trial in trials]
        instance = trials[0].instance
        state = self._shared_state(instance).result()
        results: list[EpisodeResult | None] = [None] * len(trials)
        wanted: list[tuple[int, str, dict[str, WorkspaceFile] | None]] = []
        for index, trial in enumerate(trials):
            name = trial.answer.agent if trial.answer else trial.make_agent().name
            files = self._submission(trial.answer) if trial.answer else None
            if isinstance(files, EpisodeResult):
                results[index] = files
            elif state is None:
                results[index] = self._not_made(instance, name) if trial.answer is None else EpisodeResult(
                    self.package.name, instance, name, EpisodeOutcome.SKIPPED, error="the instance was not made")
            else:
                wanted.append((index, name, files))
        kept = self._take_kept(instance)
        if state is not None and wanted:
            scored = self.sandbox.score_initial_many(self.package, state, [(name, files) for _, name, files in wanted],
                                                     kept)
            for (index, _, _), result in zip(wanted, scored, strict=True):
                results[index] = result
        done = [r for r in results if r is not None]
        for trial, result in zip(trials, done, strict=True):
            if self.on_trial:
                self.on_trial(f"{trial.role} {result.agent} #{trial.instance}")
        return done

    def run(self, trial: PlannedTrial) -> EpisodeResult:
        """One trial's episode."""
        try:
            result = self._episode(trial)
        finally:
            if trial.role in TRUSTED:
                self._trusted_done(trial.instance)
        if self.on_trial:
            self.on_trial(f"{trial.role} {result.agent} #{trial.instance}")
        return result

    def _episode(self, trial: PlannedTrial) -> EpisodeResult:
        if trial.role == Role.ORACLE:
            result = self._run_sharing(trial)
        elif trial.role == Role.INSTANCE:
            result = self.sandbox.instance_only(self.package, trial.instance)
        elif trial.role == Role.REPEAT:
            result = self.sandbox.run_episode(self.package, trial.instance, trial.make_agent(), keep_files=True,
                                              verify_in_place=True)
        else:
            state = self._shared_state(trial.instance).result()
            agent = trial.make_agent()
            if state is None:  # the instance could not be made: the same failure as the episode that tried
                result = self._not_made(trial.instance, agent.name)
            elif trial.role in TRUSTED:
                result = self._run_trusted(trial, agent, state)
            else:
                command = list(trial.verifier_command) if trial.verifier_command else None
                result = self.sandbox.run_episode(self.package, trial.instance, agent, start_from=state,
                                                  verifier_command=command)
        return result

    def _run_trusted(self, trial: PlannedTrial, agent: Agent, state: InitialState) -> EpisodeResult:
        """A trusted probe, verified in place: in the oracle's container on its instance (put back as made) when it
        is free and nothing changed there outside what is put back, else in a fresh container from the instance."""
        command = list(trial.verifier_command) if trial.verifier_command else None
        kept = self._borrow(trial.instance, own_folders(provision_files(agent.provision(self.package))))
        return self.sandbox.run_episode(self.package, trial.instance, agent, start_from=state,
                                        verifier_command=command, verify_in_place=True, start_in=kept,
                                        keep_for=(lambda back: self._keep(trial.instance, back)) if kept else None)

    def _borrow(self, instance: int, own: tuple[str, ...]) -> ContainerVerifier | None:
        """The oracle's container on this instance, once its trial is done, put back as made for an agent whose files
        go in `own`; None when there is none or it cannot be put back (the instance is then started afresh)."""
        with contextlib.suppress(Exception):
            self._oracle_run(instance).result()
        with self._lock:
            kept = self._kept.pop(instance, None)
        if kept is None:
            return None
        try:
            if kept.prepare(own):
                return kept
        except (BatchFailed, DockerException):
            kept.close()
            return None
        self._keep(instance, kept)  # changed elsewhere: its verifications go to fresh containers (verify_batch)
        return None

    def _run_sharing(self, trial: PlannedTrial) -> EpisodeResult:
        shared = self._shared_state(trial.instance)
        finished = self._oracle_run(trial.instance)
        try:
            result = self.sandbox.run_episode(self.package, trial.instance, trial.make_agent(),
                                              share_initial=shared.set_result, keep_files=True,
                                              keep_for=lambda kept: self._keep(trial.instance, kept))
            if result.outcome == EpisodeOutcome.SETUP_ERROR:
                self._setup_failed[trial.instance] = result
            finished.set_result(result)
            return result
        finally:
            if not shared.done():
                shared.set_result(None)
            if not finished.done():
                finished.set_exception(RuntimeError(f"the oracle's trial on instance {trial.instance} failed"))

    def _not_made(self, instance: int, agent: str) -> EpisodeResult:
        """A trial on an instance that could not be made: the same failure as the episode that tried."""
        failed = self._setup_failed.get(instance)
        return EpisodeResult(self.package.name, instance, agent, EpisodeOutcome.SETUP_ERROR,
                             error=failed.error if failed else "the instance was not made",
                             prompt_values=failed.prompt_values if failed else {},
                             unfilled=failed.unfilled if failed else [])

    def _submission(self, trial: AnswerTrial) -> dict[str, WorkspaceFile] | EpisodeResult:
        """An answer probe's files (once every oracle is done), or its result when it has none to verify."""
        with self._lock:
            oracle_runs = dict(self._oracle)
        answers = self.answers
        if answers is None:
            made = Answers({instance: future.result() for instance, future in oracle_runs.items()})
            with self._lock:
                self.answers = answers = self.answers or made
        try:
            files, note = answers.submission(trial)
        except Exception as exc:  # a fault in the arena's own probe: ARENA901, not the package's finding
            return EpisodeResult(self.package.name, trial.instance, trial.agent, EpisodeOutcome.AGENT_ERROR,
                                 error=f"the answer probe {trial.agent} failed: {exc!r}")
        self.notes[trial] = note
        if files is None:
            return EpisodeResult(self.package.name, trial.instance, trial.agent, EpisodeOutcome.SKIPPED, error=note)
        return files

    def _keep(self, instance: int, kept: ContainerVerifier) -> None:
        with self._lock:
            self._kept[instance] = kept

    def _take_kept(self, instance: int) -> ContainerVerifier | None:
        """The oracle's container on this instance, kept for its verifications (each instance's is taken once), once
        no trusted probe is still to act in it (a trusted probe borrows it and hands it back through _keep)."""
        with self._kept_free:
            while not self._abandoned and self._trusted_left[instance] > 0:
                self._kept_free.wait()
            return self._kept.pop(instance, None)

    def _trusted_done(self, instance: int) -> None:
        """A trusted probe planned on this instance has run (or failed): one fewer to wait for."""
        with self._kept_free:
            self._trusted_left[instance] -= 1
            self._kept_free.notify_all()

    def _oracle_run(self, instance: int) -> Future[EpisodeResult]:
        with self._lock:
            return self._oracle.setdefault(instance, Future())

    def _shared_state(self, instance: int) -> Future[InitialState | None]:
        with self._lock:
            return self._shared.setdefault(instance, Future())

    def abandon(self) -> None:
        """Wake every trial still waiting for a shared instance or container: there will be none."""
        with self._kept_free:
            self._abandoned = True
            self._kept_free.notify_all()
        with self._lock:
            waiting = [f for f in self._shared.values() if not f.done()]
            oracles = [f for f in self._oracle.values() if not f.done()]
        for future in waiting:
            with contextlib.suppress(InvalidStateError):
                future.set_result(None)
        for oracle in oracles:
            with contextlib.suppress(InvalidStateError):
                oracle.set_exception(RuntimeError("the checks were abandoned"))

    def release(self) -> None:
        """Hand every shared instance and kept container back to the sandbox."""
        with self._lock:
            shared = list(self._shared.values())
            kept, self._kept = list(self._kept.values()), {}
        for verifier in kept:
            verifier.close()
        for future in shared:
            state = future.result() if future.done() else None
            if state is not None:
                self.sandbox.release(state)


@check(ARENA702, ARENA703, ARENA707, ARENA709, ARENA901, needs=Needs.ENGINE)
def _judge(package: TaskPackage, trial: PlannedTrial, result: EpisodeResult,
           oracle_runs: dict[int, EpisodeResult]) -> tuple[list[Diagnostic], dict[str, Any]]:
    found: list[Diagnostic] = []
    trial_of: dict[str, Any] = {"agent": result.agent, "instance": result.instance}
    if result.outcome == EpisodeOutcome.SKIPPED:
        return found, {**_record(trial, result, TrialOutcome.SKIPPED), "note": result.error}
    if result.outcome == EpisodeOutcome.SETUP_ERROR:
        found += setup_findings(package, result)
    elif result.outcome == EpisodeOutcome.VERIFIER_ERROR and trial.role == Role.STEER:
        pass  # the traced run failed (a plant broke the interpreter, say): the verifier's own runs judge its errors
    elif result.outcome == EpisodeOutcome.VERIFIER_ERROR:
        found.append(ARENA709.found("verifier.py", error=result.error, **trial_of))
    elif result.outcome == EpisodeOutcome.AGENT_ERROR:  # the arena's own scripted agent failed: not the package's fault
        found.append(ARENA901.found(None, error=result.error, **trial_of))
    elif result.outcome == EpisodeOutcome.LIMIT_EXCEEDED:
        if trial.role in (Role.ORACLE, Role.REPEAT):
            found.append(ARENA702.found(f"oracle/{package.oracle_entrypoint}", case="storage", problem=result.error,
                                        **trial_of))
    elif trial.role == Role.ORACLE:
        found += _judge_oracle(package, result)
    elif trial.role == Role.REPEAT:
        found += _judge_repeat(oracle_runs[result.instance], result)
    elif trial.role == Role.READ:
        found += judge_reading(package, result, NOP_FLOOR)
    elif trial.role == Role.STEER:
        found += judge_steering(result)
    elif trial.role in (Role.ANSWER, Role.INSTANCE):
        pass  # judged together: _judge_answers
    elif result.reward is not None and result.reward > NOP_FLOOR:
        scored: dict[str, Any] = {"reward": result.reward, "instance": result.instance, "floor": NOP_FLOOR,
                                  "details": _short(result.details)}
        found.append(ARENA703.found("verifier.py", **scored) if trial.role == Role.NOP
                     else ARENA707.found("verifier.py", agent=result.agent, **scored))
    if trial.rule is ARENA705 and result.outcome.judged:
        found += _judge_isolation(result)
    failed = any(d.severity is Severity.ERROR for d in found)
    outcome = (TrialOutcome.ERROR if not result.outcome.judged  # a broken limit won nothing: judged, not an error
               else TrialOutcome.FAILED if failed else TrialOutcome.OK)
    return found, _record(trial, result, outcome)


@check(ARENA702, ARENA708, needs=Needs.ENGINE)
def _judge_oracle(package: TaskPackage, result: EpisodeResult) -> list[Diagnostic]:
    found = []
    oracle = f"oracle/{package.oracle_entrypoint}"
    step = result.transcript.entries[0].result if result.transcript.entries else None
    if step and step.get("timed_out"):
        found.append(ARENA702.found(oracle, case="timeout", limit=package.limits.oracle_timeout_s,
                                    instance=result.instance))
    elif result.reward != 1.0:
        scored: dict[str, Any] = {"reward": result.reward, "instance": result.instance,
                                  "details": _short(result.details)}
        found.append(ARENA702.found(oracle, case="exit", status=step["exit_code"],
                                    stderr=step["stderr"][-300:].strip(), **scored)
                     if step and step.get("exit_code") else ARENA702.found(oracle, case="score", **scored))
    trial_of: dict[str, Any] = {"agent": result.agent, "instance": result.instance}
    seconds = step.get("duration_s", 0.0) if step else 0.0
    if seconds > SLOW_ORACLE_SHARE * package.limits.oracle_timeout_s:
        found.append(ARENA708.found("task.md", case="slow", seconds=seconds, share=SLOW_ORACLE_SHARE,
                                    limit=package.limits.oracle_timeout_s, **trial_of))
    if result.peak_memory_mb and result.peak_memory_mb > HEAVY_ORACLE_SHARE * package.limits.memory_mb:
        found.append(ARENA708.found("task.md", case="heavy", peak=result.peak_memory_mb, share=HEAVY_ORACLE_SHARE,
                                    limit=package.limits.memory_mb, **trial_of))
    return found


@check(ARENA704, needs=Needs.ENGINE)
def _judge_repeat(first: EpisodeResult, again: EpisodeResult) -> list[Diagnostic]:
    differences = [name for name, a, b in (("reward", first.reward, again.reward),
                                           ("details", first.details, again.details)) if a != b]
    if not differences:
        return []
    return [ARENA704.found("verifier.py", instance=first.instance, what=", ".join(differences),
                           first=_short(first.details), second=_short(again.details))]


def _judge_answers(package: TaskPackage, planned: list[PlannedTrial], results: list[EpisodeResult],
                   records: list[dict[str, Any]], runner: _TrialRunner) -> list[Diagnostic]:
    """ARENA713-716: the answer probes' results taken together, and the instances the oracle's trials made. The
    answer trials' records get what each submitted, and the ones a finding rests on are marked failed."""
    oracle_runs = {t.instance: r for t, r in zip(planned, results, strict=True) if t.role == Role.ORACLE}
    repeat = next((r for t, r in zip(planned, results, strict=True) if t.role == Role.REPEAT), None)
    made = {t.instance: r for t, r in zip(planned, results, strict=True) if t.role == Role.INSTANCE}
    found = distinctness_findings(package, oracle_runs, repeat, runner.answers or Answers(oracle_runs), made)
    pairs = [(i, t.answer) for i, t in enumerate(planned) if t.answer is not None]
    if not pairs:
        return found
    positions = [i for i, _ in pairs]
    trials = [answer for _, answer in pairs]
    answer_results = [results[i] for i in positions]
    notes = [runner.notes.get(t, "") for t in trials]
    judged = judge_answer_trials(trials, answer_results, notes, NOP_FLOOR)
    summary = constant_summary(trials, answer_results, notes)
    for k, i in enumerate(positions):
        records[i]["note"] = notes[k][:500]
        if trials[k].donor is not None:
            records[i]["donor"] = trials[k].donor
        if summary and trials[k].probe == "constant-answer":
            records[i]["summary"] = summary[:1000]
        if k in judged.failed and records[i]["outcome"] == TrialOutcome.OK:
            records[i]["outcome"] = TrialOutcome.FAILED
    return found + judged.diagnostics


@check(ARENA705, needs=Needs.ENGINE)
def _judge_isolation(result: EpisodeResult) -> list[Diagnostic]:
    first = result.transcript.entries[0].result if result.transcript.entries else None
    output = str(first.get("stdout", "")) if first else ""
    line = next((x for x in output.splitlines() if x.startswith("EGRESS ")), None)
    if line is None:
        return [ARENA705.found("environment/Dockerfile", case="unproven")]
    found = json.loads(line[len("EGRESS "):])
    reached = [name for name, value in found.items() if value == "reached"]
    interfaces = [name for name in found.get("interfaces", []) if name != "lo"]
    if reached or interfaces:
        return [ARENA705.found("environment/Dockerfile", case="reached", reached=reached or "nothing",
                               interfaces=interfaces)]
    return []


def _short(value: object, limit: int = 300) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _record(trial: PlannedTrial, result: EpisodeResult, outcome: TrialOutcome) -> dict[str, Any]:
    log = "\n".join(
        f"$ {e.action.get('command', e.action.get('path', ''))}\n"
        + (f"exit {e.result.get('exit_code')}; {e.result.get('stderr', '')[-200:]}" if e.result else e.error or "")
        for e in result.transcript.entries)
    if result.error:
        log = f"{result.error}\n{log}"
    step = result.transcript.entries[0].result if result.transcript.entries else None
    return {
        "check_id": trial.check_id,
        "agent": result.agent,
        "instance": result.instance,
        "outcome": TrialOutcome.TIMEOUT if step and step.get("timed_out") and trial.role == Role.ORACLE else outcome,
        "reward": result.reward,
        "details": json.loads(_short(result.details, 2000)) if len(_short(result.details, 2000)) < 2000 else None,
        "duration_s": round(result.timings.get("total_s", 0.0), 3),
        "peak_memory_mb": result.peak_memory_mb,
        "log": log[-4000:],
    }
