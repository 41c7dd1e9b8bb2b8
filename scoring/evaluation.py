"""Held-out evaluation: the base model and the trained model (base + LoRA adapter) play every selected suite item
through the same chat harness as training (agents.chat), K samples each with fixed seeds.

- Each episode's outcome is appended to `episodes.jsonl` in the output folder as it finishes, so an interrupted run
  resumes without redoing finished episodes; no record is written until every episode of both arms is in.
- The base arm's episodes are cached by (suite and its version, the items, base model revision, sampling settings,
  harness version, K, the type the model runs in) under the score cache, and reused by every later submission
  scored the same way.
- An episode whose verifier errors (or whose instance cannot be set up) is played again with the same seed, up to
  RETRIES more times. If it still errors: in the trained arm it scores 0 (a model that breaks the verifier on the
  items it would fail gains nothing over one that fails them); in the base arm the item cannot be scored fairly, so
  it is excluded from both arms and the run is incomplete (never ranked). Each arm's retried and unresolved episodes
  are counted in the record. A failing backend (an endpoint that times out, garbage answers) stops the run: the
  episodes so far are kept for `--resume`, and nothing is published.
- A profile that scores a subset of the suite (quick) names its own suite in the record ("sample-quick"), so its
  numbers are compared only with runs of the same subset and the record is complete for what it claims.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.backends import ChatBackend, Sampling
from agents.chat import ChatSettings, run_chat_episode
from agents.render import RenderLimits
from agents.tools import ToolSettings
from sandbox.outcomes import EpisodeOutcome
from sandbox.sandbox import Sandbox
from scoring.record import ArmErrors, PairedItem
from scoring.suite import Suite, SuiteItem

HARNESS_VERSION = "agents-chat-1"  # bump when the prompts, tools or tool-result text change
CACHE_VARIABLE = "ARENA_SCORE_CACHE"
CONCURRENCY = 2  # episodes played at once: one generates while the other's sandbox starts or verifies
RETRIES = 2  # an episode whose verifier errored is played again with the same seed up to this many times
BASE_ERROR = "base_error"  # why an item is excluded: its base arm still errored after every retry


@dataclass(frozen=True)
class Profile:
    """How much of the suite is played, and how long each episode may run."""

    name: str
    items_per_domain: int | None  # None: every item
    samples: int
    max_new_tokens: int
    max_episode_tokens: int
    temperature: float
    command_timeout_s: float
    output_chars: int


PROFILES = {
    "smoke": Profile("smoke", 1, 1, 24, 48, 0.7, 20, 600),  # one item a domain, a few tokens: the whole loop in CI
    "quick": Profile("quick", 2, 1, 48, 96, 0.7, 20, 600),
    "full": Profile("full", None, 4, 1024, 8192, 0.7, 60, 4000),
}


@dataclass(frozen=True)
class Outcome:
    """One episode of one arm: the reward, or why it was not judged."""

    arm: str
    item: str
    sample: int
    reward: float | None
    outcome: str
    error: str | None = None
    attempts: int = 1  # plays of this episode (more than one: the verifier errored and it was played again)


class EvaluationFailed(RuntimeError):
    """The run cannot finish (the backend failed); finished episodes are kept for --resume."""


def selected_items(suite: Suite, profile: Profile) -> list[SuiteItem]:
    """The profile's items: all of them, or the first N per domain in the manifest's order."""
    if profile.items_per_domain is None:
        return list(suite.items)
    taken: dict[str, int] = {}
    chosen = []
    for item in suite.items:
        if taken.get(item.domain, 0) < profile.items_per_domain:
            chosen.append(item)
            taken[item.domain] = taken.get(item.domain, 0) + 1
    return chosen


def sample_seed(item: str, sample: int) -> int:
    """A fixed seed per (item, sample): the same in both arms and in every run."""
    return int(hashlib.sha256(f"{item}:{sample}".encode()).hexdigest()[:8], 16)


def chat_settings(profile: Profile, seed: int) -> ChatSettings:
    """The harness settings of a profile, with the episode's seed."""
    return ChatSettings(Sampling(max_new_tokens=profile.max_new_tokens, temperature=profile.temperature, seed=seed),
                        ToolSettings(profile.command_timeout_s, RenderLimits(profile.output_chars)),
                        max_episode_tokens=profile.max_episode_tokens)


def base_cache_key(suite: Suite, items: Sequence[SuiteItem], base_revision: str, profile: Profile,
                   dtype: str) -> str:
    """What the base arm's results depend on (`dtype`: the type the model runs in, which changes its replies)."""
    identity = {"suite": suite.name, "version": suite.version, "items": [i.id for i in items],
                "base_revision": base_revision, "profile": asdict(profile), "harness": HARNESS_VERSION,
                "dtype": dtype}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def score_cache() -> Path:
    """Where base-arm episodes are cached: $ARENA_SCORE_CACHE, else $XDG_CACHE_HOME/posttrain-arena/scores."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "posttrain-arena" / "scores"


class EpisodeLog:
    """Append-only JSON lines of finished episodes, read back to resume."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def done(self) -> dict[tuple[str, str, int], Outcome]:
        """Finished episodes by (arm, item, sample); a torn last line (a kill mid-write) is ignored."""
        found: dict[tuple[str, str, int], Outcome] = {}
        if not self.path.is_file():
            return found
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                outcome = Outcome(**json.loads(line))
            except (json.JSONDecodeError, TypeError):
                continue
            found[(outcome.arm, outcome.item, outcome.sample)] = outcome
        return found

    def add(self, outcome: Outcome) -> None:
        """Append one episode, flushed to disk."""
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(outcome)) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def play_arm(sandbox: Sandbox, suite: Suite, items: Sequence[SuiteItem], arm: str, backend: ChatBackend,
             profile: Profile, log: EpisodeLog, concurrency: int = CONCURRENCY,
             on_episode: Callable[[Outcome], None] | None = None) -> dict[tuple[str, int], Outcome]:
    """Every (item, sample) of one arm not already judged in the log (an episode that errored is tried again), run
    concurrently with retries; returns all of the arm's outcomes."""
    done = {(o.item, o.sample): o for (a, _, _), o in log.done().items() if a == arm and o.reward is not None}
    todo = [(item, k) for item in items for k in range(profile.samples) if (item.id, k) not in done]
    packages = {item.package: suite.packages[str(item.path.resolve())] for item in items}

    def once(item: SuiteItem, k: int, attempt: int) -> Outcome:
        session = sandbox.open_episode(packages[item.package], item.instance, f"{arm}:{backend.name}")
        result = run_chat_episode(session, backend, chat_settings(profile, sample_seed(item.id, k)))
        if result.outcome == EpisodeOutcome.AGENT_ERROR:  # the harness broke, not the model: the run stops
            raise EvaluationFailed(f"{arm} arm, item {item.id}: {result.error}")
        return Outcome(arm, item.id, k, result.outcome.worth(result.reward), result.outcome,
                       None if result.outcome.judged else (result.error or "")[:300], attempt)

    def play(job: tuple[SuiteItem, int]) -> Outcome:
        outcome = with_retries(lambda attempt: once(*job, attempt))
        log.add(outcome)
        if on_episode:
            on_episode(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for outcome in pool.map(play, todo):
            done[(outcome.item, outcome.sample)] = outcome
    return done


def arm_errors(outcomes: dict[tuple[str, int], Outcome]) -> ArmErrors:
    """An arm's episodes whose verifier (or setup) errored at least once, and those still unjudged after retries."""
    return ArmErrors(sum(1 for o in outcomes.values() if o.attempts > 1 or o.reward is None),
                     sum(1 for o in outcomes.values() if o.reward is None))


def with_retries(play_once: Callable[[int], Outcome], retries: int = RETRIES) -> Outcome:
    """play_once(attempt) until its verifier stops erroring, at most 1 + retries times; the last outcome."""
    outcome = play_once(1)
    while outcome.reward is None and outcome.attempts <= retries:
        outcome = play_once(outcome.attempts + 1)
    return outcome


def paired_items(items: Sequence[SuiteItem], samples: int, base: dict[tuple[str, int], Outcome],
                 trained: dict[tuple[str, int], Outcome]) -> list[PairedItem]:
    """Both arms per item (after retries): a trained episode still unjudged scores 0; an item with a base episode
    still unjudged is excluded from both arms (BASE_ERROR), which makes the run incomplete."""
    paired = []
    for item in items:
        if any(base[(item.id, k)].reward is None for k in range(samples)):
            paired.append(PairedItem(item.id, item.domain, item.cluster_id, error=BASE_ERROR))
            continue
        paired.append(PairedItem(item.id, item.domain, item.cluster_id,
                                 tuple(base[(item.id, k)].reward or 0.0 for k in range(samples)),
                                 tuple(trained[(item.id, k)].reward or 0.0 for k in range(samples))))
    return paired
