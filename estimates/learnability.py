"""Does GRPO have anything to learn from? A sequential test on the share of groups that carry signal.

Each instance played G times is one group; it carries signal when its rewards differ (`groups.has_signal`). The
groups seen are a binomial sample of the share s of signal-carrying groups the run would meet. The pre-flight looks
after each batch of instances, at most `looks` times, at an exact one-sided level alpha / looks per bound
(Bonferroni over the looks, so the chance of any wrong stop stays below alpha):

- refuse when the upper bound on s is below the threshold (the evidence says too few groups would teach anything);
- go when the lower bound reaches the threshold (enough signal seen; no need to sample further);
- otherwise sample the next batch; with no batch left the verdict is "inconclusive", and training goes ahead: a
  refusal needs evidence, never its absence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from estimates import binomial
from estimates.groups import has_signal, judged, passes


class Decision(StrEnum):
    """What a look at the pre-flight's groups decides (the report's `verdict.decision`)."""

    REFUSE = "refuse"  # the signal-carrying share is surely below the threshold: training would teach nothing
    GO = "go"  # it is surely at least the threshold: train
    INCONCLUSIVE = "inconclusive"  # the last look, and neither bound decides: train
    CONTINUE = "continue"  # neither bound decides yet: look at more instances


REFUSE, GO, INCONCLUSIVE, CONTINUE = Decision.REFUSE, Decision.GO, Decision.INCONCLUSIVE, Decision.CONTINUE


@dataclass(frozen=True)
class SignalTest:
    """The question asked: the least share of signal-carrying groups worth training on, at what confidence, over at
    most how many looks."""

    threshold: float
    confidence: float = 0.95
    looks: int = 1

    @property
    def alpha(self) -> float:
        """The one-sided level of each bound at each look."""
        return (1 - self.confidence) / max(self.looks, 1)


@dataclass(frozen=True)
class SignalVerdict:
    """What the groups so far say: the decision, the counts and the bounds on the signal-carrying share."""

    decision: Decision
    groups: int
    with_signal: int
    low: float
    high: float
    reason: str


def judge(groups: Sequence[Sequence[float | None]], test: SignalTest, last_look: bool) -> SignalVerdict:
    """The decision after a look at `groups` (each the rewards of one instance's G samples)."""
    usable = [g for g in groups if len(judged(g)) >= 2]
    n, k = len(usable), sum(has_signal(g) for g in usable)
    if n == 0:
        decision = REFUSE if last_look else CONTINUE
        return SignalVerdict(
            decision,
            0,
            0,
            0.0,
            1.0,
            "no group had two judged rewards: the verifier errored on "
            "(nearly) every pre-flight episode; fix verifier.py",
        )
    low, high = binomial.lower_bound(k, n, test.alpha), binomial.upper_bound(k, n, test.alpha)
    share = f"{k} of {n} groups carry signal (bounds {low:.2f}–{high:.2f})"
    if high < test.threshold:
        return SignalVerdict(
            REFUSE,
            n,
            k,
            low,
            high,
            f"{share}: below the {test.threshold:.0%} threshold; {_why(usable)}, so GRPO has (almost) no signal",
        )
    if low >= test.threshold:
        return SignalVerdict(GO, n, k, low, high, f"{share}: at least {test.threshold:.0%}")
    decision = INCONCLUSIVE if last_look else CONTINUE
    return SignalVerdict(decision, n, k, low, high, f"{share}: not enough evidence to refuse, trains")


def _why(groups: Sequence[Sequence[float | None]]) -> str:
    solved = sum(passes(g) for g in groups)
    total = sum(len(judged(g)) for g in groups)
    if solved == 0 and all(max(judged(g)) == 0 for g in groups):
        return "too hard for the base model: every rollout scored 0"
    if solved == total:
        return "already solved: every rollout passed"
    return "the rollouts of each instance scored alike"
