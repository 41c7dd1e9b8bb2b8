"""The model agent's chat loop over real episodes: malformed output, scenes, limits, backends (the real small model
locally and behind a local OpenAI-compatible server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.backends import BackendError, Sampling
from agents.backends.openai import API_KEY_VARIABLE, OpenAIBackend
from agents.chat import ChatSettings, ChatStats, run_chat_episode
from agents.tools import EPISODE_OVER
from sandbox.sandbox import Sandbox
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from tests.support.model_server import Faults, ReplayBackend, serve
from tests.support.packages import make_two_scene_package, make_valid_package


def call(name: str, **arguments: object) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> TaskPackage:
    loaded = load_package(make_valid_package(tmp_path_factory.mktemp("pkg") / "environments")).package
    assert loaded is not None
    return loaded


def test_bad_calls_are_shown_to_the_model_and_cost_turns(sandbox: Sandbox, package: TaskPackage) -> None:
    sum_command = "python3 -c \"print(sum(int(n) for n in open('numbers.txt')))\" > answer.txt"
    backend = ReplayBackend([
        '<tool_call>{"name": "shell", "arguments": {"command": "ls"</tool_call>',  # bad JSON
        call("rm_rf", path="/"),  # no such tool
        call("shell", cmd="ls"),  # wrong argument name
        call("shell", command=sum_command) + call("end_scene"),
    ])
    stats = ChatStats()
    result = run_chat_episode(sandbox.open_episode(package, 2, "model"), backend,
                              ChatSettings(Sampling(max_new_tokens=64)), stats)
    assert result.outcome == "scored" and result.reward == 1.0, result.details
    told = [m["content"] for m in result.conversation if m["role"] in ("user", "tool")][1:]
    assert "JSON inside <tool_call> is invalid" in told[0]
    assert "there is no tool named 'rm_rf'" in told[1] and "shell takes command (missing command; unknown cmd)" in \
        told[2]
    assert [e.action["type"] for e in result.transcript.entries] == ["InvalidAction"] * 3 + ["Shell"]
    assert stats.replies == 4 and stats.tool_calls == 5 and stats.invalid_calls == 3
    assert "turns left: " in told[3]


def test_scenes_arrive_as_the_answer_to_end_scene(sandbox: Sandbox, tmp_path: Path) -> None:
    package = load_package(make_two_scene_package(tmp_path / "environments")).package
    assert package is not None
    backend = ReplayBackend([call("end_scene"), call("end_scene"), call("shell", command="echo late")])
    result = run_chat_episode(sandbox.open_episode(package, 0, "model"), backend, ChatSettings())
    tool_results = [m["content"] for m in result.conversation if m["role"] == "tool"]
    assert "And then this." in tool_results[0]
    assert "The task is complete" in tool_results[1] and EPISODE_OVER in tool_results[1]
    assert backend.replies == [call("shell", command="echo late")]  # the episode ended: no third reply was asked
    assert result.conversation[1]["content"].startswith("[client]\n") and "First, please." in \
        result.conversation[1]["content"]


def test_a_reply_without_a_call_ends_the_episode_and_the_token_budget_holds(sandbox: Sandbox,
                                                                             package: TaskPackage) -> None:
    done = run_chat_episode(sandbox.open_episode(package, 0, "model"), ReplayBackend(["I am finished."]),
                            ChatSettings())
    assert done.outcome == "scored" and done.limit_hit is None and len(done.conversation) == 3
    chatty = ReplayBackend([call("shell", command="true")] * 10)
    budget = run_chat_episode(sandbox.open_episode(package, 0, "model"), chatty,
                              ChatSettings(max_episode_tokens=30))
    assert budget.limit_hit == "tokens" and len(budget.transcript.entries) < 10


def test_an_endpoint_that_fails_is_retried_then_reported(sandbox: Sandbox, package: TaskPackage,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_VARIABLE, "test-key")
    faults = Faults(unavailable=2)
    with serve(ReplayBackend([call("shell", command="echo hi"), "ok"]), faults=faults) as url:
        result = run_chat_episode(sandbox.open_episode(package, 0, "model"), OpenAIBackend(url), ChatSettings())
    assert result.outcome == "scored" and result.transcript.entries[0].result["stdout"] == "hi\n"
    assert faults.requests[0]["auth"] == "Bearer test-key" and faults.requests[-1]["model"] == "served-model"
    assert "return" not in faults.requests[-1]["tools"][0]["function"]
    with serve(ReplayBackend([]), faults=Faults(garbage=True)) as url:
        broken = run_chat_episode(sandbox.open_episode(package, 0, "model"), OpenAIBackend(url), ChatSettings())
    assert broken.outcome == "agent_error" and "not JSON" in (broken.error or "")
    with pytest.raises(BackendError, match="refused"):
        OpenAIBackend("http://127.0.0.1:9/v1", model="x", timeout_s=2).reply([], [], Sampling())


@pytest.mark.slow
def test_the_real_small_model_runs_an_episode_locally_and_behind_an_endpoint(sandbox: Sandbox,
                                                                             package: TaskPackage) -> None:
    from agents.backends.local import LocalBackend
    from agents.models import small_model

    local = LocalBackend(small_model().path)
    settings = ChatSettings(Sampling(max_new_tokens=24, seed=3), max_episode_tokens=24)
    direct = run_chat_episode(sandbox.open_episode(package, 0, "model"), local, settings)
    assert direct.outcome == "scored" and direct.conversation[-1]["role"] in ("assistant", "tool", "user")
    first_reply = next(m for m in direct.conversation if m["role"] == "assistant")
    local._caches.clear()  # both from a full encoding: a kept cache's reply can differ in bfloat16 (local_dtype)
    with serve(local, model="smollm2") as url:
        served = run_chat_episode(sandbox.open_episode(package, 0, "model"), OpenAIBackend(url), settings)
    assert served.outcome == "scored"
    served_reply = next(m for m in served.conversation if m["role"] == "assistant")
    assert served_reply["content"] == first_reply["content"]  # same model, same seed, same text through HTTP
