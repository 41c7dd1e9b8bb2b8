"""The guards of a training run and its evidence of an update: the windowed error stops, setup errors counted,
tool argument errors that cost a turn, the agent's clock started at its first action, and the per-step and end-of-run
evidence (groups with signal, LoRA tensors moved) that decides `no_effective_update`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from agents.tools import TOOL_SCHEMAS, ToolSettings
from sandbox.sandbox import Sandbox
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from taskpkg.run_manifest import RunStatus, TrainingManifest
from tests.support.packages import edit, make_valid_package
from training.environment import ArenaEnvironment, RolloutPool, make_reward_function
from training.evidence import closing_block, no_update_reason, update_evidence
from training.guards import WINDOW, ErrorWindow
from training.metrics import EpisodeRecord, RunLog, reward_spread


def record(outcome: str, reward: float | None = None) -> EpisodeRecord:
    return EpisodeRecord(0, outcome, reward, 1, 0, 0.0, 0.0, 0.0, None)


# -- the windowed stops ----------------------------------------------------------------------------------------------


def test_more_than_half_of_the_first_eight_rollouts_failing_stops_at_the_eighth() -> None:
    window = ErrorWindow()
    outcomes = ["verifier_error"] * 5 + ["scored"] * 3
    reasons = [window.add(o) for o in outcomes]
    assert reasons[:7] == [None] * 7  # the window is not full before the eighth rollout
    assert reasons[7] is not None and reasons[7].startswith(
        "5 of 8 consecutive rollouts (rollouts 1-8 of this run) ended in a verifier error: fix verifier.py"
    )


def test_a_verifier_failing_40_percent_of_the_time_is_stopped_by_a_later_window() -> None:
    outcomes = (["scored"] * 12 + ["verifier_error"] * 8) * 20  # 40% of every 20 rollouts fail, in a burst
    shares = [outcomes[:n].count("verifier_error") / n for n in range(WINDOW, len(outcomes) + 1)]
    assert max(shares) <= 0.4  # the old rule (share of every rollout so far) would train on forever
    window = ErrorWindow()
    stopped_at = next(i for i, o in enumerate(outcomes, 1) if window.add(o))
    assert stopped_at == 17  # rollouts 10-17: five verifier errors in eight


def test_a_healthy_run_is_never_stopped() -> None:
    window = ErrorWindow()
    pattern = ["scored", "scored", "verifier_error", "setup_error", "scored", "limit_exceeded", "scored", "scored"]
    assert all(window.add(o) is None for o in pattern * 50)
    assert window.totals == {"verifier_error": 50, "setup_error": 50} and window.seen == 400


def test_setup_errors_are_counted_per_step_and_stop_the_run(tmp_path: Path) -> None:
    log = RunLog(tmp_path, 1, 0, group_size=4)
    log.record([record("setup_error")] * 4, [None] * 4)
    line = log.write_step(1, {})
    assert line["setup_errors"] == 4 and line["judged"] == 0 and log.stopped_because is None
    log.record([record("setup_error")] * 3 + [record("scored", 1.0)], [None] * 3 + [1.0])
    log.write_step(2, {})
    assert log.stopped_because is not None and "7 of 8 consecutive rollouts" in log.stopped_because
    assert "an instance setup error: fix the instance generator" in log.stopped_because
    assert [json.loads(x)["setup_errors"] for x in (tmp_path / "metrics.jsonl").read_text().splitlines()] == [4, 3]


# -- per-step and end-of-run evidence -------------------------------------------------------------------------------


def test_groups_with_signal_are_those_whose_judged_rewards_differ() -> None:
    spread = reward_spread([1.0, 1.0, None, 1.0, 0.0, 0.5, 0.5, None, None, None, None, None], 4)
    assert spread == {
        "judged": 6,
        "reward_mean": round(4.0 / 6, 4),
        "reward_min": 0.0,
        "reward_max": 1.0,
        "groups": 3,
        "groups_with_signal": 1,
    }


def test_a_run_with_equal_rewards_everywhere_has_no_effective_update(tmp_path: Path) -> None:
    log = RunLog(tmp_path, 1, 1, group_size=4)
    for step in (1, 2):
        log.record([record("scored", 0.5)] * 4, [0.5] * 4)
        log.write_step(step, {"loss": 0.0, "grad_norm": 0.0, "tools/call_frequency": 1.0})
    lora = {
        "lora_b_tensors": 8,
        "lora_b_changed": 0,
        "lora_a_tensors": 8,
        "lora_a_changed": 0,
        "max_change": 0.0,
        "weights_finite": True,
    }
    evidence = update_evidence(log.lines, lora)
    assert not evidence["effective"] and evidence["groups"] == 2 and evidence["groups_with_signal"] == 0
    assert evidence["missing"] == [
        "no group of rollouts had rewards that differed (every advantage was 0)",
        "no optimizer step had a non-zero gradient",
        "none of the 8 LoRA-B tensors changed",
    ]
    assert no_update_reason(evidence).startswith("no effective update: no group of rollouts")
    block = closing_block(TrainingManifest(status=RunStatus.NO_EFFECTIVE_UPDATE, reason=no_update_reason(evidence),
                                           update_evidence=evidence))
    assert "rewards: 8 judged, from 0.500 to 0.500 (mean 0.500)" in block
    assert "groups with signal: 0 of 2 (0%)" in block and "verdict: no_effective_update: no effective update" in block


def test_a_run_that_moved_has_evidence_and_a_nan_loss_does_not_count(tmp_path: Path) -> None:
    log = RunLog(tmp_path, 1, 0, group_size=2)
    log.record([record("scored", 1.0), record("scored", 0.0)], [1.0, 0.0])
    log.signal(37)
    log.write_step(1, {"loss": 0.12, "grad_norm": 0.8})
    lora = {"lora_b_tensors": 4, "lora_b_changed": 4, "max_change": 0.003, "weights_finite": True}
    moved = update_evidence(log.lines, lora)
    assert moved["effective"] and moved["signal_tokens"] == 37 and moved["steps_with_gradient"] == 1
    assert "verdict: trained" in closing_block(TrainingManifest(status=RunStatus.COMPLETED, update_evidence=moved))
    log.record([record("scored", 1.0), record("scored", 0.0)], [1.0, 0.0])
    log.write_step(2, {"loss": float("nan"), "grad_norm": float("nan")})
    assert log.loss_not_finite
    assert "the loss was not finite at step 2" in update_evidence(log.lines, lora)["missing"]


@pytest.mark.slow
def test_lora_change_counts_the_b_tensors_that_moved() -> None:
    import torch

    from training.evidence import lora_change, lora_snapshot

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lora_A = torch.nn.Parameter(torch.ones(2, 3))
            self.lora_B = torch.nn.Parameter(torch.zeros(3, 2))
            self.other_lora_B = torch.nn.Parameter(torch.zeros(3, 2))
            self.frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)

    model = Tiny()
    before = lora_snapshot(model)
    assert set(before) == {"lora_A", "lora_B", "other_lora_B"}
    assert lora_change(before, model) == {
        "lora_b_tensors": 2,
        "lora_b_changed": 0,
        "lora_a_tensors": 1,
        "lora_a_changed": 0,
        "max_change": 0.0,
        "weights_finite": True,
    }
    with torch.no_grad():
        model.lora_B[0, 0] = 0.25
    change = lora_change(before, model)
    assert change["lora_b_changed"] == 1 and change["max_change"] == 0.25 and change["weights_finite"]
    with torch.no_grad():
        model.other_lora_B[1, 1] = float("nan")
    assert not lora_change(before, model)["weights_finite"]


def test_a_job_whose_training_had_no_effective_update_stops_before_scoring(tmp_path: Path) -> None:
    from launch.job_run import JobPaths, JobRun, _train_completed
    from launch.spec import JobSpec

    paths = JobPaths(tmp_path / "echo-word", tmp_path / "job", "unused")
    paths.train.mkdir(parents=True)
    (paths.train / "adapter").mkdir()
    (paths.train / "adapter" / "adapter_config.json").write_text("{}")  # even with an adapter folder left over
    reason = update_evidence([], {"lora_b_tensors": 16, "lora_b_changed": 0})
    manifest = {"status": "no_effective_update", "reason": no_update_reason(reason)}
    (paths.train / "manifest.json").write_text(json.dumps(manifest))
    assert not _train_completed(paths.train)  # a restarted job does not take it for a finished training phase
    job = JobRun(JobSpec("echo-word", "0" * 40, "cpu-small"), paths, lambda line: None, env={})
    failed = job._failure("train", 1)
    assert failed.status == "stopped" and failed.exit_code == 1
    assert failed.reason.startswith(
        "training had no effective update, so it was not scored: no effective update: "
        "no group of rollouts had rewards that differed"
    )


# -- the environment TRL drives, on the real engine -------------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox(engine: docker.DockerClient) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


def package_with(tmp_path: Path, *edits: tuple[str, str, str]) -> TaskPackage:
    root = make_valid_package(tmp_path / "environments")
    for relative, old, new in edits:
        edit(root / relative, old, new)
    package = load_package(root).package
    assert package is not None
    return package


def test_the_guarded_tools_show_trl_the_same_schema(engine: object) -> None:
    from transformers.utils import get_json_schema

    derived = [get_json_schema(getattr(ArenaEnvironment, name)) for name in ("shell", "write_file", "end_scene")]
    assert list(TOOL_SCHEMAS) == derived


def test_tool_argument_errors_cost_a_turn_and_the_model_is_told(sandbox: Sandbox, tmp_path: Path) -> None:
    package = package_with(tmp_path, ("task.md", "max_turns: 40", "max_turns: 4"))
    pool = RolloutPool(sandbox, package, ToolSettings(), 2)
    try:
        environment = ArenaEnvironment(pool)
        environment.reset(instance=3)
        wrong_name = environment.shell(cmd="ls")  # as TRL calls it: the model's arguments as keywords
        assert wrong_name.startswith("error: invalid tool call: shell takes command (missing command; unknown cmd)")
        assert "turns left: 3" in wrong_name  # it cost a turn
        missing = environment.write_file(path="answer.txt")
        assert "write_file takes content, path (missing content)" in missing
        extra = environment.end_scene(reason="done")
        assert "end_scene takes no arguments (unknown reason)" in extra
        assert "exit code 0" in environment.shell(command="echo fine")
        log = RunLog(tmp_path, 1, 1, group_size=1)
        rewards = make_reward_function(pool, log)(
            [environment],
            prompts=[[{"role": "user", "content": "go"}]],
            completions=[[{"role": "assistant", "content": "done"}]],
        )
    finally:
        pool.close()
    assert rewards == [0.0]
    line = log.write_step(1, {})
    assert line["tool_calls_mean"] == 4 and line["invalid_calls_mean"] == 3
    kept = json.loads((tmp_path / "transcripts" / "step-00001-0.json").read_text())
    assert kept["conversation"] == [{"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]
    assert [e["action"]["type"] for e in kept["transcript"]] == ["InvalidAction"] * 3 + ["Shell"]
    assert kept["agent_s"] > 0 and kept["outcome"] == "scored"


@pytest.mark.slow
def test_the_agent_clock_starts_at_its_first_action_not_at_reset(sandbox: Sandbox, tmp_path: Path) -> None:
    package = package_with(
        tmp_path,
        ("task.md", "agent_timeout_s: 900", "agent_timeout_s: 2"),
        ("task.md", "oracle_timeout_s: 120", "oracle_timeout_s: 2"),
    )
    pool = RolloutPool(sandbox, package, ToolSettings(), 2)
    try:
        environment = ArenaEnvironment(pool)
        environment.reset(instance=1)
        time.sleep(3)  # the rest of the batch is generated: longer than the agent's whole time budget
        first = environment.shell(command="echo acted")
        assert "acted" in first and "time limit" not in first
        time.sleep(2.2)
        late = environment.shell(command="echo late")
        assert "the episode's time limit was reached" in late  # the clock runs from the first action
    finally:
        pool.close()


def test_a_generator_that_fails_is_a_counted_setup_error(sandbox: Sandbox, tmp_path: Path) -> None:
    package = package_with(
        tmp_path,
        (
            "instance/generate.py",
            "    numbers = build_instance",
            "    raise SystemExit('no instance today')\n    numbers = build_instance",
        ),
    )
    pool = RolloutPool(sandbox, package, ToolSettings(), 2)
    log = RunLog(tmp_path, 1, 0, group_size=4)
    verify = make_reward_function(pool, log)
    try:
        for step in (1, 2):
            environments = [ArenaEnvironment(pool) for _ in range(4)]
            prompts = [environment.reset(instance=5) for environment in environments]
            assert all(p.startswith("the instance could not be set up") for p in prompts)
            assert environments[0].shell(command="ls") == "The episode is over; no further tool calls are carried out."
            assert verify(environments) == [None] * 4
            line = log.write_step(step, {})
            assert line["setup_errors"] == 4 and line["groups_with_signal"] == 0
    finally:
        pool.close()
    assert log.stopped_because is not None and log.stopped_because.startswith("8 of 8 consecutive rollouts")
