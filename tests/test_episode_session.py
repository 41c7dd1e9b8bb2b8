"""The step-wise episode session on the real engine: scenes, limits, invalid actions, initial states, cleanup."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.agent_interface import EndScene, InvalidAction, Shell, WriteFile
from sandbox.engine import LABEL_SANDBOX
from sandbox.episode_session import EpisodeOver
from sandbox.sandbox import Sandbox
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from tests.conftest import arena_resources
from tests.support.packages import edit, make_two_scene_package, make_valid_package


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


@pytest.fixture(scope="module")
def two_scenes(tmp_path_factory: pytest.TempPathFactory) -> TaskPackage:
    package = load_package(make_two_scene_package(tmp_path_factory.mktemp("scenes") / "environments")).package
    assert package is not None
    return package


def test_steps_walk_the_scenes_then_the_episode_is_over(sandbox: Sandbox, two_scenes: TaskPackage) -> None:
    with sandbox.open_episode(two_scenes, 3, "stepper") as session:
        first = session.start()
        assert first is not None and first.scene is not None and first.scene.scene == "ask"
        observed = session.step(Shell("echo one"))
        assert observed.result is not None and observed.result.stdout == "one\n" and observed.scene is None
        second = session.step(EndScene())
        assert second.scene is not None and second.scene.scene == "more" and not session.done
        session.step(EndScene())
        assert session.done
        with pytest.raises(EpisodeOver):
            session.step(Shell("echo too late"))
        result = session.finish()
    assert result.outcome == "scored" and result.reward == 0.0
    assert [e.action["type"] for e in result.transcript.entries] == ["Shell"]


def test_invalid_actions_cost_turns_and_are_kept(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    edit(root / "task.md", "max_turns: 40", "max_turns: 2")
    package = load_package(root).package
    assert package is not None
    with sandbox.open_episode(package, 0, "stepper") as session:
        session.start()
        bad = session.step(InvalidAction('{"name": "rm"}', "there is no tool named rm"))
        assert bad.error == "there is no tool named rm" and bad.turns_left == 1 and not session.done
        session.step(Shell("true"))
        assert session.done  # two turns spent: one invalid, one shell
        result = session.finish()
    assert result.limit_hit == "turns"
    assert result.transcript.entries[0].action == {"type": "InvalidAction", "attempted": '{"name": "rm"}',
                                                   "problem": "there is no tool named rm"}


def test_scene_turn_budget_moves_to_the_next_scene(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_two_scene_package(tmp_path / "environments")
    edit(root / "task.md", "section: Request}", "section: Request, max_turns: 1}")
    package = load_package(root).package
    assert package is not None
    with sandbox.open_episode(package, 0, "stepper") as session:
        session.start()
        moved = session.step(Shell("echo only"))
        assert moved.result is not None and moved.result.stdout == "only\n"  # the last result, with the next scene
        assert moved.scene is not None and moved.scene.scene == "more"
        session.close()


def test_an_initial_state_starts_episodes_without_the_generator(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    package = load_package(root).package
    assert package is not None
    state = sandbox.initial_state(package, 5)
    try:
        edit(root / "instance" / "generate.py", "    print(json.dumps(", "    (workspace / 'ran-again').touch()\n"
             "    print(json.dumps(")  # it would leave a mark if it ran again
        with sandbox.open_episode(package, 5, "stepper", start_from=state) as session:
            first = session.start()
            assert first is not None and session.prompt_values == state.prompt_values
            listing = session.step(Shell("cat numbers.txt | wc -l; ls -A /workspace"))
            assert listing.result is not None
            count, files = listing.result.stdout.split("\n")[:2]
            assert int(count) == state.prompt_values["count"] and files == "numbers.txt"
            total = session.step(Shell("python3 -c \"print(sum(int(n) for n in open('numbers.txt')))\""))
            assert total.result is not None
            session.step(WriteFile("answer.txt", total.result.stdout))
            result = session.finish()
        assert result.reward == 1.0, result.details
    finally:
        sandbox.release(state)


def test_a_closed_session_leaves_nothing_and_is_not_verified(engine: object, tmp_path: Path) -> None:
    package = load_package(make_valid_package(tmp_path / "environments")).package
    assert package is not None
    with Sandbox(engine) as box:
        session = box.open_episode(package, 1, "stepper")
        session.start()
        session.step(Shell("echo hello > note.txt"))
        session.close()
        assert session.done and session.result.reward is None
        session.close()  # idempotent
        assert session.finish().reward is None  # finishing a closed session verifies nothing
        box.tracker.remove_all()
        containers, snapshots = arena_resources(engine)
        assert not [c for c in containers if c.labels.get(LABEL_SANDBOX) == box.sandbox_id]
        assert not [i for i in snapshots if (i.get("Labels") or {}).get(LABEL_SANDBOX) == box.sandbox_id]
