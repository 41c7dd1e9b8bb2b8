"""The answer probes: submissions made from the oracle's own answers, verified on the instances' shared initial
states (no episode, no commit: each instance's in turn, in the container its oracle trial kept, as
sandbox.batch_verification does).

- rewritten-inputs (ARENA713): another instance's whole final workspace (its inputs and the oracle's answer to them)
  written over this instance's; judged against `replay`, the same answer without the inputs.
- near-miss (ARENA714): the oracle's answer one record changed, dropped or added (one kind per instance, the first
  verified three times); replay (ARENA714): another instance's answer.
- constant-answer (ARENA716): the commonest answer shape, on every instance.
ARENA715 needs no trial of its own: it compares the workspaces the oracle and determinism trials made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import mean
from typing import Literal

from sandbox.outcomes import EpisodeOutcome, EpisodeResult
from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules import Rule
from taskpkg.rules.dynamic import ARENA713, ARENA714, ARENA715, ARENA716
from validators.dynamic.answers import Answer, answer_of, constant_answers, near_misses, same_answer
from validators.registry import Needs, check

AnswerProbe = Literal["rewritten-inputs", "near-miss", "replay", "constant-answer"]
NearMiss = Literal["changed", "dropped", "added"]
ANSWER_PROBES: tuple[AnswerProbe, ...] = ("rewritten-inputs", "near-miss", "replay", "constant-answer")
PROBED_INSTANCES = 3  # the donor-based and near-miss probes run on this many of the sampled instances
NEAR_MISS_KINDS: tuple[NearMiss, ...] = ("changed", "dropped", "added")
NEAR_MISS_VERIFICATIONS = 3  # the first near miss is verified this many times: the same state, the same reward
WELL_ABOVE_FLOOR = 0.25  # a constant answer's mean this far above the floor is a warning
_RULES = {"rewritten-inputs": ARENA713, "near-miss": ARENA714, "replay": ARENA714, "constant-answer": ARENA716}


@dataclass(frozen=True)
class AnswerTrial:
    """One submission to verify: made by `probe` for `instance`, from `donor`'s oracle answer where there is one."""

    probe: AnswerProbe
    instance: int
    donor: int | None = None
    kind: NearMiss | Literal[""] = ""  # what a near miss did to the answer
    again: int = 0  # a repeated verification of the same near miss

    @property
    def rule(self) -> Rule:
        """The rule the trial serves."""
        return _RULES[self.probe]

    @property
    def agent(self) -> str:
        """The name the trial is reported under."""
        return f"probe:{self.probe}" + (f"-{self.kind}" if self.kind else "")


def plan_answer_trials(instances: list[int], probes: tuple[str, ...] | None) -> list[AnswerTrial]:
    """The answer probes' trials over the sampled instances (all probes unless named)."""
    wanted = set(ANSWER_PROBES if probes is None else probes)
    probed = instances[:PROBED_INSTANCES]
    trials: list[AnswerTrial] = []
    for index, instance in enumerate(probed):
        donor = instances[(index + 1) % len(instances)] if len(instances) > 1 else None
        if donor is not None and "rewritten-inputs" in wanted:
            trials.append(AnswerTrial("rewritten-inputs", instance, donor))
        if donor is not None and ("replay" in wanted or "rewritten-inputs" in wanted):
            trials.append(AnswerTrial("replay", instance, donor))
        if "near-miss" in wanted:
            kind = NEAR_MISS_KINDS[index % len(NEAR_MISS_KINDS)]
            repeats = NEAR_MISS_VERIFICATIONS if index == 0 else 1
            trials += [AnswerTrial("near-miss", instance, kind=kind, again=n) for n in range(repeats)]
    if len(instances) > 1 and "constant-answer" in wanted:
        trials += [AnswerTrial("constant-answer", instance) for instance in instances]
    return trials


class Answers:
    """The oracle's answers by instance, read once every oracle trial has finished (those that scored 1 only)."""

    def __init__(self, oracle_runs: dict[int, EpisodeResult]) -> None:
        self.runs = oracle_runs
        self.by_instance: dict[int, Answer] = {}
        for instance, run in oracle_runs.items():
            answer = answer_of(run.initial_files, run.final_files) if run.reward == 1.0 else None
            if answer:
                self.by_instance[instance] = answer
        self.constant: dict[int, Answer] = {}
        self.constant_described = ""
        self.constant_source: int | None = None
        if len(self.by_instance) > 1:
            self.constant, self.constant_described, self.constant_source = constant_answers(self.by_instance)

    def submission(self, trial: AnswerTrial) -> tuple[Answer | None, str]:
        """The files to write over the trial's instance, and what they are; None (and why) when there are none."""
        own = self.by_instance.get(trial.instance)
        if own is None:
            return None, "the oracle's answer on this instance is unknown (the oracle failed, or wrote nothing kept)"
        if trial.probe == "near-miss":
            made = near_misses(own).get(trial.kind)
            return made if made else (None, f"the answer holds no record that can be {trial.kind}")
        if trial.probe == "constant-answer":
            constant = self.constant.get(trial.instance)
            if trial.instance == self.constant_source:
                return None, "the constant answer is made from this instance's answer"
            if constant is None or same_answer(constant, own):
                return None, f"the constant answer ({self.constant_described}) is this instance's right answer"
            return constant, self.constant_described
        if trial.donor is None or trial.donor not in self.by_instance:  # only the constant answer has no donor
            return None, f"the oracle's answer on instance {trial.donor} is unknown"
        donor = self.by_instance[trial.donor]
        if same_answer(donor, own):
            return None, f"instance {trial.donor} has the same answer as this one"
        if trial.probe == "replay":
            return donor, f"the oracle's answer of instance {trial.donor}"
        return self.runs[trial.donor].final_files, f"instance {trial.donor}'s whole final workspace"


@dataclass
class Judged:
    """The answer probes' findings, and the trials (by position) an error among them rests on."""

    diagnostics: list[Diagnostic]
    failed: set[int]


@check(ARENA713, ARENA714, ARENA716, needs=Needs.ENGINE)
def judge_answer_trials(trials: list[AnswerTrial], results: list[EpisodeResult], notes: list[str],
                        floor: float) -> Judged:
    """ARENA713, ARENA714 and ARENA716 over the answer probes' scored results (`notes`: what each submitted)."""
    scored = {i: r.reward for i, r in enumerate(results) if r.outcome == EpisodeOutcome.SCORED and r.reward is not None}
    judged = Judged([], set())
    _judge_rewritten(trials, scored, floor, judged)
    _judge_near_misses(trials, scored, notes, judged)
    if not _judge_replays(trials, scored, floor, judged):  # a replay that scores says more than a constant answer
        _judge_constant(trials, results, scored, notes, floor, judged)
    return judged


def _judge_rewritten(trials: list[AnswerTrial], scored: dict[int, float], floor: float, judged: Judged) -> None:
    replays = {(t.instance, t.donor): scored[i] for i, t in enumerate(trials)
               if t.probe == "replay" and i in scored}
    for i, trial in enumerate(trials):
        if trial.probe != "rewritten-inputs" or i not in scored or (trial.instance, trial.donor) not in replays:
            continue
        alone = replays[(trial.instance, trial.donor)]
        reward = scored[i]
        if reward > max(floor, alone):
            judged.failed.add(i)
            judged.diagnostics.append(ARENA713.found("verifier.py", instance=trial.instance, donor=trial.donor,
                                                     reward=reward, alone=alone))
            return  # one finding says it; the trials show every instance


def _judge_near_misses(trials: list[AnswerTrial], scored: dict[int, float], notes: list[str],
                       judged: Judged) -> None:
    rewards: dict[tuple[int, str], list[tuple[int, float]]] = {}
    for i, trial in enumerate(trials):
        if trial.probe == "near-miss" and i in scored:
            rewards.setdefault((trial.instance, trial.kind), []).append((i, scored[i]))
    for (instance, _kind), runs in rewards.items():
        values = [reward for _, reward in runs]
        note = notes[runs[0][0]]
        if len(set(values)) > 1:
            judged.failed.update(i for i, _ in runs)
            judged.diagnostics.append(ARENA714.found("verifier.py", case="unstable", instance=instance, what=note,
                                                     rewards=", ".join(map(str, values))))
        elif values[0] >= 1.0:
            judged.failed.update(i for i, _ in runs)
            judged.diagnostics.append(ARENA714.found("verifier.py", case="near_miss", instance=instance, what=note,
                                                     reward=values[0]))


def _judge_replays(trials: list[AnswerTrial], scored: dict[int, float], floor: float, judged: Judged) -> bool:
    for i, trial in enumerate(trials):
        if trial.probe == "replay" and i in scored and scored[i] > floor:
            judged.failed.add(i)
            judged.diagnostics.append(ARENA714.found("verifier.py", case="replay", instance=trial.instance,
                                                     donor=trial.donor, reward=scored[i], floor=floor))
            return True
    return False


def _judge_constant(trials: list[AnswerTrial], results: list[EpisodeResult], scored: dict[int, float],
                    notes: list[str], floor: float, judged: Judged) -> None:
    runs = [(i, scored[i], results[i].instance) for i, t in enumerate(trials)
            if t.probe == "constant-answer" and i in scored]
    if not runs:
        return
    average = mean(reward for _, reward, _ in runs)
    best_index, best, instance = max(runs, key=lambda run: (run[1], -run[2]))
    if average >= floor + WELL_ABOVE_FLOOR:  # a warning: its trials stay "ok", as a warning's do elsewhere
        judged.diagnostics.append(ARENA716.found("verifier.py", what=notes[best_index], mean=average,
                                                 count=len(runs), best=best, instance=instance, floor=floor))


def constant_summary(trials: list[AnswerTrial], results: list[EpisodeResult], notes: list[str]) -> str:
    """The constant-answer probe's mean and best single instance, for the report (empty when it scored nothing)."""
    runs = [(r.reward, r.instance, n) for t, r, n in zip(trials, results, notes, strict=True)
            if t.probe == "constant-answer" and r.outcome == EpisodeOutcome.SCORED and r.reward is not None]
    if not runs:
        return ""
    best, instance, note = max(runs, key=lambda run: (run[0], -run[1]))
    average = mean(reward for reward, _, _ in runs)
    return (f"constant answer ({note}): mean {average:.2f} over {len(runs)} instance(s), best {best} on "
            f"instance {instance}")


@check(ARENA715, needs=Needs.ENGINE)
def distinctness_findings(package: TaskPackage, oracle_runs: dict[int, EpisodeResult],
                          repeat: EpisodeResult | None, answers: Answers,
                          generated: dict[int, EpisodeResult] | None = None) -> list[Diagnostic]:
    """ARENA715: one instance made twice is the same, the sampled instances (the oracle's, and those only `generated`)
    differ, the oracle's answers are not all equal."""
    found = []
    generator = package.generator
    first = oracle_runs.get(repeat.instance) if repeat else None
    if repeat and first and EpisodeOutcome.SETUP_ERROR not in (repeat.outcome, first.outcome):
        what = _difference(first, repeat)
        if what:
            found.append(ARENA715.found(generator, case="irreproducible", instance=repeat.instance, what=what))
    made = {i: r for i, r in sorted({**(generated or {}), **oracle_runs}.items())
            if r.outcome != EpisodeOutcome.SETUP_ERROR and r.initial_files is not None}
    seen: dict[str, int] = {}
    for instance, run in made.items():
        key = _fingerprint(run)
        if key in seen:
            found.append(ARENA715.found(generator, case="same_instance", first=seen[key], second=instance,
                                        count=len(made)))
            return found
        seen[key] = instance
    known = answers.by_instance
    if len(known) > 1 and len(known) == len(made.keys() & oracle_runs.keys()):
        listed = list(known.values())
        if all(same_answer(listed[0], other) for other in listed[1:]):
            found.append(ARENA715.found(generator, case="same_answer", count=len(known),
                                        files=", ".join(sorted(listed[0]))))
    return found


def _difference(first: EpisodeResult, again: EpisodeResult) -> str:
    if first.prompt_values != again.prompt_values:
        return f"prompt values ({_short(first.prompt_values)} vs {_short(again.prompt_values)})"
    one, two = first.initial_files or {}, again.initial_files or {}
    if first.initial_files is None or again.initial_files is None:
        return ""
    differing = sorted(p for p in set(one) | set(two) if (one.get(p) and one[p].data) != (two.get(p) and two[p].data))
    return f"/workspace/{differing[0]}" + (f" (and {len(differing) - 1} more)" if len(differing) > 1 else "") \
        if differing else ""


def _fingerprint(run: EpisodeResult) -> str:
    files = sorted((p, f.data.hex()) for p, f in (run.initial_files or {}).items())
    return json.dumps([run.prompt_values, files], sort_keys=True, default=str)


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:119] + "…"

