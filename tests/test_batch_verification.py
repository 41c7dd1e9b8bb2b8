"""Several verifications in one container (sandbox.batch_verification) give what fresh containers give: what a
verifier leaves in the folders put back is gone before the next one, and a write anywhere else sends the rest to a
fresh container."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.scripted import oracle_agent
from sandbox.batch_verification import verify_batch
from sandbox.engine import LABEL_KIND
from sandbox.reward import Reward
from sandbox.sandbox import Sandbox
from sandbox.workspace_files import WorkspaceFile
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from tests.support.packages import make_valid_package
from validators.dynamic import READ_PROBE, STEER_PROBE, run_dynamic_checks

# Scores 1 only where it has not run before in this container (it leaves a mark at SEEN), and says whether the
# submission's file is in the workspace.
VERIFIER = '''import json, os
SEEN = "{seen}"
first = not os.path.exists(SEEN)
os.makedirs(os.path.dirname(SEEN), exist_ok=True)
with open(SEEN, "a") as mark:
    mark.write("seen\\n")
answer = os.path.exists("/workspace/answer.txt")
with open(os.environ["ARENA_OUTPUT"], "w") as out:
    json.dump({{"reward": 1.0 if first else 0.0, "details": {{"answer": answer}}}}, out)
'''


def marking_package(parent: Path, seen: str) -> TaskPackage:
    root = make_valid_package(parent)
    (root / "verifier.py").write_text(VERIFIER.format(seen=seen))
    loaded = load_package(root)
    assert loaded.package is not None
    return loaded.package


SUBMISSIONS = [None, {"answer.txt": WorkspaceFile(b"42\n")}, None, {"answer.txt": WorkspaceFile(b"7\n")}]


@pytest.mark.parametrize(("seen", "containers"), [("/tmp/arena-seen/mark", 1), ("/root/.cache/mark", 1),
                                                  ("/opt/arena-seen/mark", len(SUBMISSIONS))])
def test_every_verification_sees_the_state_as_frozen(sandbox: Sandbox, tmp_path: Path, seen: str,
                                                     containers: int) -> None:
    package = marking_package(tmp_path, seen)
    state = sandbox.initial_state(package, 3)
    made: list[str] = []
    try:
        done = verify_batch(sandbox.tracker, sandbox.sandbox_id, state.image, package, 3, made, SUBMISSIONS)
    finally:
        sandbox.tracker.discard(made, [])
        sandbox.release(state)
    verdicts = [one.verdict for one in done]
    assert all(isinstance(v, Reward) for v in verdicts), verdicts
    assert [(v.value, v.details) for v in verdicts if isinstance(v, Reward)] == [
        (1.0, {"answer": False}), (1.0, {"answer": True}), (1.0, {"answer": False}), (1.0, {"answer": True})]
    assert len(made) == containers  # a mark in a folder put back costs nothing; one elsewhere, a fresh container each


def test_the_oracles_container_verifies_in_place_then_the_instance_as_made(sandbox: Sandbox, tmp_path: Path) -> None:
    package = marking_package(tmp_path, "/tmp/arena-seen/mark")
    (Path(package.root) / "verifier.py").write_text(
        VERIFIER.format(seen="/tmp/arena-seen/mark").replace('answer = os.path.exists("/workspace/answer.txt")',
                                                              'answer = sorted(os.listdir("/workspace"))'))
    package = load_package(Path(package.root)).package
    assert package is not None
    kept: list = []
    shared: list = []
    oracle = sandbox.run_episode(package, 4, oracle_agent(package), share_initial=shared.append, keep_files=True,
                                 keep_for=kept.append)
    (state,) = shared
    made: list[str] = []
    try:
        done = verify_batch(sandbox.tracker, sandbox.sandbox_id, state.image, package, 4, made, [None, None], kept[0])
    finally:
        sandbox.tracker.discard(made, [])
        sandbox.release(state)
    assert oracle.reward == 1.0 and len(kept) == 1
    made_files = sorted(oracle.initial_files or {})
    assert [one.verdict for one in done] == [Reward(1.0, {"answer": made_files})] * 2  # the oracle's work undone
    assert made == []  # no container but the oracle's own


@pytest.mark.parametrize("start_from_state", [False, True])
def test_a_trusted_episode_is_set_up_stopped_and_verified_through_one_root_server(
        sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_from_state: bool) -> None:
    """Each command server is an exec (a runc process and a Python start in the container): a trusted agent's episode
    verified in place starts two, the root server setup used (kept to stop and verify it) and the agent's own."""
    package = marking_package(tmp_path, "/tmp/arena-seen/mark")
    state = sandbox.initial_state(package, 2) if start_from_state else None
    users: list[str] = []
    exec_create = sandbox.client.api.exec_create

    def counted(container: str, command: list[str], **options: object) -> dict:
        if "the sandbox's command channel" in command[-1][:200]:
            users.append(str(options.get("user")))
        return exec_create(container, command, **options)

    monkeypatch.setattr(sandbox.client.api, "exec_create", counted)
    try:
        result = sandbox.run_episode(package, 2, oracle_agent(package), start_from=state, verify_in_place=True)
    finally:
        monkeypatch.undo()
        if state is not None:
            sandbox.release(state)
    assert result.reward == 1.0, result.error
    assert sorted(users) == ["0", "1000:1000"], users


@pytest.mark.parametrize(("seen", "own_containers"), [("/tmp/arena-seen/mark", 0), ("/opt/arena-seen/mark", 6)])
def test_the_trusted_probes_act_in_the_oracles_container_unless_it_changed_elsewhere(
        sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seen: str, own_containers: int) -> None:
    """The reading and steering probes (three instances each) act in the oracle's container on their instance, put
    back as made; where the oracle's verification wrote outside what is put back, each starts a container of its
    own from the instance as committed. Either way every probe's final state is verified."""
    package = marking_package(tmp_path, seen)
    kinds: list[str] = []
    create = sandbox.client.api.create_container

    def counted(*args: object, **options: object) -> dict:
        made = create(*args, **options)  # (a refused first try, with a storage size, is not a container)
        kinds.append(str(dict(options.get("labels") or {}).get(LABEL_KIND)))
        return made

    monkeypatch.setattr(sandbox.client.api, "create_container", counted)
    try:
        result = run_dynamic_checks(package, sandbox, instances=3, probes=(READ_PROBE, STEER_PROBE))
    finally:
        monkeypatch.undo()
    trusted = [t for t in result.trials if t["agent"] in ("probe:read-answers", "probe:steer-verifier")]
    assert len(trusted) == 6 and all(t["reward"] is not None for t in trusted), trusted
    oracles = sum(t["agent"] == "oracle" for t in result.trials)  # three, and the determinism trial's
    assert kinds.count("agent") == oracles + own_containers, kinds
