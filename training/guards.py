"""Stops that end a training run whose rollouts are mostly broken: a windowed count of verifier errors and of
instance setup errors over consecutive rollouts (docs/TRAINING.md, "Rollouts")."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sandbox.outcomes import EpisodeOutcome

WINDOW = 8  # consecutive rollouts, in the order they were verified
MAX_SHARE = 0.5  # more than this share of a full window in one kind of error stops the run

FIXES = {
    EpisodeOutcome.VERIFIER_ERROR: "fix verifier.py so that it scores any final state (its error is in each "
    "transcript's `error`; `arena check PATH` runs it on the oracle's and a do-nothing agent's states)",
    EpisodeOutcome.SETUP_ERROR: "fix the instance generator (instances.generator in task.md) or environment/ so that "
    "every instance sets up (`arena check PATH` shows the generator's error)",
}
NAMES = {EpisodeOutcome.VERIFIER_ERROR: "a verifier error", EpisodeOutcome.SETUP_ERROR: "an instance setup error"}


@dataclass
class ErrorWindow:
    """The outcomes of the last WINDOW rollouts; says why the run must stop once more than MAX_SHARE of a full
    window ended in the same kind of error (verifier or setup). Every window counts, the first one included."""

    size: int = WINDOW
    share: float = MAX_SHARE
    seen: int = 0
    totals: dict[EpisodeOutcome, int] = field(default_factory=lambda: dict.fromkeys(FIXES, 0))
    _recent: deque = field(default_factory=deque)

    def add(self, outcome: EpisodeOutcome) -> str | None:
        """One more rollout's outcome; the reason to stop (with the fix), or None."""
        self.seen += 1
        if outcome in self.totals:
            self.totals[outcome] += 1
        self._recent.append(outcome)
        if len(self._recent) > self.size:
            self._recent.popleft()
        if len(self._recent) < self.size:
            return None
        for kind, fix in FIXES.items():
            count = sum(o == kind for o in self._recent)
            if count > self.share * self.size:
                first = self.seen - self.size + 1
                return (
                    f"{count} of {self.size} consecutive rollouts (rollouts {first}-{self.seen} of this run) "
                    f"ended in {NAMES[kind]}: {fix}"
                )
        return None
