"""The environment TRL's GRPOTrainer drives: one `ArenaEnvironment` per rollout over a sandbox session.

TRL calls `reset(**row)` one rollout at a time and the tools (the public methods `EpisodeTools` defines) as the
model calls them. So that nothing waits needlessly: each instance is generated once and committed (an initial state
shared by the G rollouts of its group, and by later steps), `reset` returns the prompt at once while the container
starts in the background, and the reward function verifies the whole generation batch concurrently. A verifier error
is no reward (None: TRL leaves that rollout out of the advantage), never 0 or 1.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from agents.render import scene_text
from agents.tools import EpisodeTools, ToolSettings, bind, call_counts, sandbox_seconds
from sandbox.episode import Sandbox
from sandbox.instances import SetupError, scenes_for
from sandbox.outcomes import InitialState
from sandbox.session import EpisodeSession
from taskpkg.model import TaskPackage
from training.metrics import EpisodeRecord, RunLog

KEPT_INITIAL_STATES = 64


class RolloutPool:
    """What every environment of one run shares: the sandbox, the package, committed instances and a thread pool."""

    def __init__(self, sandbox: Sandbox, package: TaskPackage, tools: ToolSettings, concurrency: int) -> None:
        self.sandbox = sandbox
        self.package = package
        self.tools = tools
        self.executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="arena-rollout")
        self._states: OrderedDict[int, Future[InitialState]] = OrderedDict()
        self._lock = threading.Lock()
        self.sessions: list[EpisodeSession] = []
        self.waited: Callable[[float], None] = lambda seconds: None  # where waits for containers are counted

    def initial_state(self, instance: int) -> InitialState:
        """The committed instance (made on first use; the oldest are released past KEPT_INITIAL_STATES)."""
        with self._lock:
            future = self._states.get(instance)
            mine = future is None
            if mine:
                future = self._states[instance] = Future()
            self._states.move_to_end(instance)
            evicted = []
            while len(self._states) > KEPT_INITIAL_STATES:
                evicted.append(self._states.popitem(last=False)[1])
        for old in evicted:
            self._release(old)
        assert future is not None
        if mine:
            try:
                future.set_result(self.sandbox.initial_state(self.package, instance))
            except BaseException as exc:
                future.set_exception(exc)
        return future.result()

    def open(self, instance: int) -> EpisodeSession:
        """A new session starting from the instance's committed state."""
        session = self.sandbox.open_episode(self.package, instance, "model", start_from=self.initial_state(instance))
        with self._lock:
            self.sessions.append(session)
        return session

    def close(self) -> None:
        """Close every session and release every committed instance."""
        with self._lock:
            sessions, self.sessions = self.sessions, []
            states, self._states = list(self._states.values()), OrderedDict()
        for session in sessions:
            session.close()
        for future in states:
            self._release(future)
        self.executor.shutdown(wait=True, cancel_futures=True)

    def _release(self, future: Future[InitialState]) -> None:
        if future.done() and future.exception() is None:
            self.sandbox.release(future.result())


class ArenaEnvironment(EpisodeTools):
    """One rollout: `reset(instance=...)` gives the first scene's prompt; the tools act on the episode."""

    def __init__(self, pool: RolloutPool) -> None:
        super().__init__(pool.tools)
        self._pool = pool
        self._started: Future | None = None
        self._episode: EpisodeSession | None = None
        self._problem: str | None = None

    def reset(self, instance: int, **_: object) -> str:
        """Start a rollout on `instance` (the dataset's column); returns the first scene's prompt."""
        if self._episode is not None:
            self._episode.close()  # a rollout TRL abandoned
        self._problem = None
        try:
            state = self._pool.initial_state(int(instance))
            first = scenes_for(self._pool.package, state.prompt_values)[0]
        except SetupError as exc:
            self._problem = f"the instance could not be set up: {exc}"
            self._episode, self._started = None, None
            bind(self, None)
            return self._problem
        self._episode = self._pool.open(int(instance))
        self._started = self._pool.executor.submit(self._episode.start)
        bind(self, self._episode)
        return scene_text(first)

    def _live_session(self) -> EpisodeSession | None:
        if self._started is not None:
            started = time.perf_counter()
            self._started.result()  # the container is up before the first tool call acts
            self._pool.waited(time.perf_counter() - started)
            self._started = None
        return super()._live_session()


def finish(environment: ArenaEnvironment) -> EpisodeRecord:
    """Verify a rollout's final state (once); its record (setup_error when it never started)."""
    episode = environment._episode
    calls, invalid = call_counts(environment)
    if episode is None:
        return EpisodeRecord.of(None, calls, invalid)
    if environment._started is not None:
        environment._started.result()
    environment._episode = None
    return EpisodeRecord.of(episode.finish(), calls, invalid, sandbox_seconds(environment))


def reward_of(record: EpisodeRecord) -> float | None:
    """The reward TRL sees: the verifier's on a scored state, 0 for a broken limit, None when nothing was judged."""
    if record.outcome == "scored":
        return record.reward
    return 0.0 if record.outcome == "limit_exceeded" else None


def make_reward_function(pool: RolloutPool, log: RunLog) -> Callable:
    """TRL's reward function over a generation batch: every rollout verified at once, each in a fresh container."""

    def verified(environments: list[ArenaEnvironment], **_: object) -> list[float | None]:
        started = time.perf_counter()
        done = list(pool.executor.map(finish, environments))
        log.waited(time.perf_counter() - started)
        log.record(done)
        return [reward_of(record) for record in done]

    verified.__name__ = "verifier"
    return verified
