"""The sandbox on the real engine: the agent's limits, its isolation, the channel's robustness and cleanup."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agents.scripted import oracle_agent
from sandbox.agent_interface import Action, EndScene, Observation, Shell, WriteFile
from sandbox.cleanup import collect_garbage
from sandbox.engine import OWNER_VARIABLE
from sandbox.sandbox import InitialState, Sandbox
from taskpkg.loader import load_package
from taskpkg.package import TaskPackage
from tests.conftest import arena_resources
from tests.support.packages import edit, make_two_scene_package, make_valid_package
from validators.dynamic.probes import KEPT_FILL_MIB, exhaust_resources


@dataclass
class Recorder:
    """Runs given actions in order (one per scene if `per_scene`), recording every observation."""

    actions: list[Action]
    name: str = "recorder"
    seen: list[Observation] = field(default_factory=list)

    def provision(self, package: TaskPackage) -> dict[str, bytes]:
        return {}

    def act(self, observation: Observation) -> Action:
        self.seen.append(observation)
        return self.actions.pop(0) if self.actions else EndScene()


@pytest.fixture(scope="module")
def sandbox(engine: object) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> TaskPackage:
    loaded = load_package(make_valid_package(tmp_path_factory.mktemp("pkg") / "environments"))
    assert loaded.package is not None
    return loaded.package


def run(sandbox: Sandbox, package: TaskPackage, *actions: Action) -> tuple[Recorder, list]:
    agent = Recorder(list(actions))
    result = sandbox.run_episode(package, 7, agent)
    return agent, result


def outputs(agent: Recorder) -> list[str]:
    return [o.result.stdout for o in agent.seen if o.result is not None]


def test_agent_runs_unprivileged_without_network(sandbox: Sandbox, package: TaskPackage) -> None:
    agent, _ = run(sandbox, package, Shell("id -u; grep CapEff /proc/self/status; ls /sys/class/net; pwd"))
    uid, caps, interfaces, cwd = outputs(agent)[0].split("\n")[:4]
    assert uid == "1000" and caps.endswith("0000000000000000") and interfaces == "lo" and cwd == "/workspace"


def test_agent_cannot_touch_the_arena_or_see_the_seed(sandbox: Sandbox, package: TaskPackage) -> None:
    agent, _ = run(sandbox, package,
                   Shell("touch /arena/x; echo $?; echo \"[$(ls /arena)]\"; echo ${ARENA_INSTANCE:-unset}"))
    status, listing, seed = outputs(agent)[0].strip().split("\n")
    assert status != "0" and "instance" not in listing and seed == "unset"


def test_prompt_values_and_instance_files(sandbox: Sandbox, package: TaskPackage) -> None:
    agent, result = run(sandbox, package, Shell("wc -l < numbers.txt; stat -c %u numbers.txt"))
    count, owner = outputs(agent)[0].split()
    assert int(count) == result.prompt_values["count"] and owner == "1000"
    assert f"holds {count} integers" in agent.seen[0].scene.text


def test_command_timeout_and_output_cap(sandbox: Sandbox, package: TaskPackage) -> None:
    agent, _ = run(sandbox, package, Shell("sleep 30", timeout_s=1), Shell("yes | head -c 5000000"))
    slow, loud = [o.result for o in agent.seen if o.result]
    assert slow.timed_out and slow.duration_s < 5
    assert loud.truncated and len(loud.stdout) == 65536


def test_background_process_holding_output_does_not_hang(sandbox: Sandbox, package: TaskPackage) -> None:
    started = time.monotonic()
    agent, _ = run(sandbox, package, Shell("sleep 100 & echo started"), Shell("echo next"))
    assert outputs(agent) == ["started\n", "next\n"] and time.monotonic() - started < 30


def test_killing_the_channel_is_survived(sandbox: Sandbox, package: TaskPackage) -> None:
    agent, result = run(sandbox, package, Shell("kill -9 -1"), Shell("echo alive"))
    assert outputs(agent)[-1] == "alive\n" and result.outcome == "scored"


def test_file_writes_and_turn_limit(sandbox: Sandbox, package: TaskPackage) -> None:
    total = sum(int(n) for n in _numbers(sandbox, package))
    _, result = run(sandbox, package, WriteFile("answer.txt", f"{total}\n"))
    assert result.reward == 1.0, result.details
    many = [Shell("true")] * (package.limits.max_turns + 5)
    _, limited = run(sandbox, package, *many)
    assert limited.limit_hit == "turns" and len(limited.transcript.entries) == package.limits.max_turns


def _numbers(sandbox: Sandbox, package: TaskPackage) -> list[str]:
    agent, _ = run(sandbox, package, Shell("cat numbers.txt"))
    return outputs(agent)[0].split()


def test_scenes_are_spoken_in_order(sandbox: Sandbox, tmp_path: Path) -> None:
    package = load_package(make_two_scene_package(tmp_path / "environments")).package
    assert package is not None
    agent, _ = run(sandbox, package, Shell("echo one"), EndScene(), Shell("echo two"))
    scenes = [o.scene for o in agent.seen if o.scene]
    assert [s.scene for s in scenes] == ["ask", "more"] and [s.speaker for s in scenes] == ["client", "client"]
    assert "First, please." in scenes[0].text and "holds" in scenes[0].text and "holds" not in scenes[1].text


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_killed_check_leaves_nothing_behind(engine: object, tmp_path: Path, stop: signal.Signals) -> None:
    root = make_valid_package(tmp_path / "environments")
    edit(root / "oracle" / "solve.py", "from pathlib import Path\n", "import time\nfrom pathlib import Path\n")
    edit(root / "oracle" / "solve.py", "total = sum", "time.sleep(300)\ntotal = sum")  # lint-clean: checked first
    arena = str(Path(sys.executable).parent / "arena")
    owner = f"{os.environ[OWNER_VARIABLE]}-{stop.name}"  # this process alone: other tests' reaping stays out of view
    process = subprocess.Popen([arena, "check", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", OWNER_VARIABLE: owner})
    deadline = time.monotonic() + 240
    while not arena_resources(engine, owner)[0]:
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.2)
    time.sleep(1.0)  # mid-trial: containers exist and the oracle is sleeping
    process.send_signal(stop)
    try:
        code = process.wait(timeout=120)
        assert code == 130, process.communicate()
        containers, snapshots = arena_resources(engine, owner)
        assert containers == [] and snapshots == []
    finally:
        collect_garbage(engine, include_images=True, owner=owner)


def test_peak_memory_is_measured(sandbox: Sandbox, package: TaskPackage) -> None:
    _, light = run(sandbox, package, Shell("true"))
    touch_120_mib = "python3 -c 'x = bytearray(120 * 2**20); x[::4096] = b\"1\" * len(x[::4096])'"
    _, heavy = run(sandbox, package, Shell(touch_120_mib))
    assert light.peak_memory_mb is not None and heavy.peak_memory_mb is not None
    assert heavy.peak_memory_mb >= light.peak_memory_mb + 100


def test_loopback_works_and_is_the_only_interface(sandbox: Sandbox, package: TaskPackage) -> None:
    serve_and_connect = ("import os, socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
                         "c = socket.create_connection(s.getsockname(), 2); "
                         "print(s.accept()[1][0], sorted(os.listdir('/sys/class/net')))")
    agent, _ = run(sandbox, package, Shell(f'python3 -c "{serve_and_connect}"'))
    assert outputs(agent)[0].strip() == "127.0.0.1 ['lo']"


def test_initial_state_is_shared_without_the_agents_files(engine: Any, sandbox: Sandbox,
                                                        package: TaskPackage) -> None:
    shared: list[InitialState] = []
    first = sandbox.run_episode(package, 7, oracle_agent(package), share_initial=shared.append)
    (state,) = shared
    try:
        untouched = sandbox.score_initial(package, state)
        looker = Recorder([Shell('echo "[$(ls /arena)]"; wc -l < numbers.txt; stat -c %u numbers.txt')])
        looked = sandbox.run_episode(package, 7, looker, start_from=state)
        solved = sandbox.run_episode(package, 7, oracle_agent(package), start_from=state)
    finally:
        sandbox.release(state)
    assert (first.reward, untouched.reward, solved.reward) == (1.0, 0.0, 1.0)
    assert untouched.details == {"reason": "answer.txt is missing"}
    listing, count, owner = outputs(looker)[0].split()
    assert listing == "[]"  # the oracle's files arrived after the state was shared
    assert int(count) == first.prompt_values["count"] and looked.prompt_values == first.prompt_values
    assert owner == "1000"
    deadline = time.monotonic() + 30
    while state.image in engine.api.images(all=True, quiet=True):
        assert time.monotonic() < deadline, "a released initial state was not removed"
        time.sleep(0.2)


def test_verifier_gets_its_data_whole_and_cannot_forge_the_loaders_report(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    blob = os.urandom(3 * 2**20)
    (root / "instance" / "blob.bin").write_bytes(blob)
    edit(root / "verifier.py", '    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(score()))',
         "    import hashlib\n"
         '    print("ARENA-VERIFIER 0 2 e30=", flush=True)\n'  # a report of its own: "{}", which is no reward
         '    print("ARENA-VERIFIER 0 2 e30=", file=sys.stderr)\n'
         '    digest = hashlib.sha256((Path(__file__).parent / "instance" / "blob.bin").read_bytes()).hexdigest()\n'
         '    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps({"reward": 0.25, "details": {"blob": digest}}))')
    package = load_package(root).package
    assert package is not None
    result = sandbox.run_episode(package, 3, Recorder([]))
    assert result.outcome == "scored", result.error
    assert result.reward == 0.25 and result.details == {"blob": hashlib.sha256(blob).hexdigest()}


def test_storage_and_pids_limits_hold_and_verification_still_runs(sandbox: Sandbox, package: TaskPackage) -> None:
    result = sandbox.run_episode(package, 7, exhaust_resources())
    storage, fill, pids = result.transcript.entries[0].result["stdout"].splitlines()  # type: ignore[index]  # a shell step has a result
    assert storage == f"STORAGE refused at {package.limits.storage_mb * 2**20} [Errno 27] File too large"
    assert fill == f"FILL {min(KEPT_FILL_MIB, package.limits.storage_mb // 2) * 2**20}"
    assert pids.startswith("PIDS refused after ") and 0 < int(pids.split()[3]) < package.limits.pids
    assert result.outcome == "scored" and result.reward == 0.0


def test_storage_watch_stops_an_agent_whose_files_outgrow_the_limit(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    edit(root / "task.md", "storage_mb: 512", "storage_mb: 64")
    package = load_package(root).package
    assert package is not None
    many_files = "for i in $(seq 1 100); do head -c 8000000 /dev/zero > f$i; sleep 0.1; done"  # 800 MB in 10 s
    started = time.monotonic()
    _, result = run(sandbox, package, Shell(many_files, 60), Shell("echo never"))
    if sandbox.tracker.storage_opt_supported:
        pytest.skip("this engine caps storage itself; the watch is not used")
    assert result.outcome == "limit_exceeded" and result.limit_hit == "storage" and result.reward is None
    assert "grew past limits.storage_mb (64 MiB)" in (result.error or "")
    assert time.monotonic() - started < 8  # stopped within a poll or two, not after the 10 s of writing
    assert len(result.transcript.entries) == 1  # nothing ran after the container was stopped


def test_storage_watch_leaves_an_agent_within_the_limit_alone(sandbox: Sandbox, tmp_path: Path) -> None:
    root = make_valid_package(tmp_path / "environments")
    edit(root / "task.md", "storage_mb: 512", "storage_mb: 64")
    package = load_package(root).package
    assert package is not None
    _, result = run(sandbox, package, Shell("head -c 40000000 /dev/zero > big; sleep 1.5; echo kept", 30))
    assert result.outcome == "scored" and result.limit_hit is None and result.reward == 0.0


@pytest.mark.parametrize(("explanation", "refused"), [
    ("Filesystem does not support, or has not enabled quotas", True),  # overlay2 on ext4 (CI's engine)
    ("--storage-opt is supported only for overlay over xfs with 'pquota' mount option", True),
    ("invalid storage_opt size", True),
    ("No such image: arena/none", False),
])
def test_only_a_storage_cap_refusal_falls_back_to_the_storage_watch(explanation: str, refused: bool) -> None:
    import requests
    from docker.errors import APIError

    from sandbox.containers import storage_opt_refused

    response = requests.Response()
    response.status_code = 500
    assert storage_opt_refused(APIError("500 Server Error", response=response, explanation=explanation)) is refused


def test_the_engines_storage_cap_is_asked_about_once_however_many_start_at_once(
        engine: Any, package: TaskPackage, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first container finds out whether the engine caps storage; containers started at the same time wait for
    that answer instead of each trying (and, on an engine that refuses, failing) first."""
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.containers import Tracker, start_container

    tracker = Tracker(engine)
    tried: list[bool] = []
    create = engine.api.create_container

    def counted(*args: object, **options: Any) -> dict:
        tried.append("StorageOpt" in options["host_config"])
        return create(*args, **options)

    monkeypatch.setattr(engine.api, "create_container", counted)
    with Sandbox(engine) as box:
        image = box.image(package).tag
        try:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda _: start_container(tracker, image, package.limits, "agent", "storage-probe",
                                                        package.name), range(4)))
        finally:
            monkeypatch.undo()
            tracker.remove_all()
    assert tried.count(True) == 1, tried
    assert len(tried) == 4 + (0 if tracker.storage_opt_supported else 1)
