"""The environment TRL's GRPOTrainer drives: one `ArenaEnvironment` per rollout over a sandbox session.

TRL calls `reset(**row)` one rollout at a time and the tools (the public methods `EpisodeTools` defines) as the
model calls them. So that nothing waits needlessly: each instance is generated once and committed (an initial state
shared by the G rollouts of its group, and by later steps), `reset` returns the prompt at once while the container
starts in the background, and the reward function verifies the whole generation batch concurrently. A verifier error
is no reward (None: TRL leaves that rollout out of the advantage), never 0 or 1. Each rollout's record keeps the
model's turns (TRL's prompt and completion messages) beside what the sandbox carried out.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from agents.render import scene_text
from agents.tools import (
    TOOL_NAMES,
    EpisodeTools,
    ToolSettings,
    argument_problem,
    bind,
    call_counts,
    reject_call,
    sandbox_seconds,
)
from sandbox.episode_session import EpisodeSession
from sandbox.instances import SetupError, scenes_for
from sandbox.outcomes import InitialState
from sandbox.sandbox import Sandbox
from taskpkg.package import TaskPackage
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


def _guarded(name: str) -> Callable:
    """The tool `name` as TRL calls it, with the model's arguments as keywords: a missing or unknown argument costs a
    turn and the model is told what was wrong (as in scoring's chat loop), instead of raising inside TRL's loop. The
    wrapper keeps the method's signature and docstring, so the schema TRL derives is unchanged."""
    method = getattr(EpisodeTools, name)
    names = list(inspect.signature(method).parameters)[1:]

    @functools.wraps(method)
    def guarded(self: ArenaEnvironment, *args: object, **kwargs: object) -> str:
        arguments = {**dict(zip(names, args, strict=False)), **kwargs}
        problem = (argument_problem(name, arguments) if len(args) <= len(names) else
                   f"{name} takes {len(names)} argument(s), {len(args)} were given")
        self._made += 1  # every call TRL makes counts, one after the episode ended included (TRL counts it too)
        if problem:
            return reject_call(self, name, arguments, problem)
        return method(self, **arguments)

    return guarded


class ArenaEnvironment(EpisodeTools):
    """One rollout: `reset(instance=...)` gives the first scene's prompt; the tools act on the episode. The agent's
    clock starts at its first action, not at reset (the rest of the batch is generated in between)."""

    shell = _guarded("shell")
    write_file = _guarded("write_file")
    end_scene = _guarded("end_scene")

    def __init__(self, pool: RolloutPool) -> None:
        super().__init__(pool.tools)
        self._pool = pool
        self._started: Future | None = None
        self._episode: EpisodeSession | None = None
        self._problem: str | None = None
        self._made = 0

    def reset(self, instance: int, **_: object) -> str:
        """Start a rollout on `instance` (the dataset's column); returns the first scene's prompt."""
        if self._episode is not None:
            self._episode.close()  # a rollout TRL abandoned
        self._problem, self._made = None, 0
        try:
            state = self._pool.initial_state(int(instance))
            first = scenes_for(self._pool.package, state.prompt_values)[0]
        except SetupError as exc:
            self._problem = f"the instance could not be set up: {exc}"
            self._episode, self._started = None, None
            bind(self, None)
            return self._problem
        self._episode = self._pool.open(int(instance))
        self._started = self._pool.executor.submit(self._episode.start, False)
        bind(self, self._episode)
        return scene_text(first)

    def _wait_started(self) -> None:
        """Wait for the container to be up; a start that raised ends the rollout as a setup error."""
        if self._started is None:
            return
        started, future = time.perf_counter(), self._started
        self._started = None
        try:
            future.result()
        except Exception as exc:  # the engine failed to start the container: this rollout cannot be judged
            self._problem = f"the episode's container did not start: {exc}"
            if self._episode is not None:
                self._episode.close()
            self._episode = None
            bind(self, None)
        finally:
            self._pool.waited(time.perf_counter() - started)

    def _live_session(self) -> EpisodeSession | None:
        self._wait_started()  # the container is up before the first tool call acts
        return super()._live_session()


def tools_unknown(conversation: list[dict]) -> int:
    """Calls TRL answered itself because no tool has that name (they never reach the environment)."""
    return sum(m.get("role") == "tool" and m.get("name") not in TOOL_NAMES for m in conversation)


def finish(environment: ArenaEnvironment, conversation: list | None = None) -> EpisodeRecord:
    """Verify a rollout's final state (once); its record with the model's turns (setup_error when it never
    started). Its tool calls are every call the model made, as TRL counts them (tools/call_frequency)."""
    environment._wait_started()
    episode = environment._episode
    unknown = tools_unknown(conversation or [])
    calls, invalid = environment._made + unknown, call_counts(environment)[1] + unknown
    if episode is None:
        return replace(EpisodeRecord.of(None, calls, invalid, error=environment._problem or "never started"),
                       conversation=list(conversation or []))
    environment._episode = None
    result = episode.finish()
    if conversation:
        result.conversation = list(conversation)
    return EpisodeRecord.of(result, calls, invalid, sandbox_seconds(environment))


def reward_of(record: EpisodeRecord) -> float | None:
    """The reward TRL sees: what the episode's outcome is worth (EpisodeOutcome.worth, as in scoring and the
    pre-flight)."""
    return record.outcome.worth(record.reward)


def make_reward_function(pool: RolloutPool, log: RunLog) -> Callable:
    """TRL's reward function over a generation batch: every rollout verified at once, each in a fresh container."""

    def verified(environments: list[ArenaEnvironment], prompts: list | None = None, completions: list | None = None,
                 **_: object) -> list[float | None]:
        started = time.perf_counter()
        conversations = [list(p) + list(c) if isinstance(p, list) and isinstance(c, list) else []
                         for p, c in zip(prompts or [None] * len(environments),
                                         completions or [None] * len(environments), strict=True)]
        done = list(pool.executor.map(finish, environments, conversations))
        log.waited(time.perf_counter() - started)
        rewards = [reward_of(record) for record in done]
        log.record(done, rewards)
        return rewards

    verified.__name__ = "verifier"
    return verified
