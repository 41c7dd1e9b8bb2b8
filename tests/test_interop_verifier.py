"""The verifier.py written by `arena import`, run as the arena runs it (in a minibox: private root, no network).

The original test script must decide the reward exactly as in its own format: the oracle scores 1, doing nothing 0,
reward.json wins over reward.txt, and anything that is not a reward in [0, 1] is a verifier error (exit 1, nothing
written), never a score.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from interop import import_task
from tests.fixtures.interop.episodes import apply_dockerfile, harbor_episode, native_episode, verify_native
from tests.fixtures.interop.minibox import Minibox, available

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interop"
OPTIONS = {"room-plan": {"github": "ada-l"}, "rota-plan": {"github": "nick-example", "license": "MIT"}}
SOLVABLE = ["harbor/invoice-total", "harbor/room-plan", "harbor/claim-review", "benchflow/dose-check",
            "benchflow/rota-plan", "benchflow/refund-triage"]

pytestmark = pytest.mark.skipif(available() is not None, reason=f"no minibox here: {available()}")


def imported(tmp_path: Path, fixture: str) -> Path:
    name = fixture.split("/")[1]
    return import_task(FIXTURES / fixture, tmp_path / "packages", **OPTIONS.get(name, {})).package_path


@pytest.mark.parametrize("fixture", SOLVABLE)
def test_oracle_scores_one_and_doing_nothing_scores_zero(tmp_path: Path, fixture: str) -> None:
    package = imported(tmp_path, fixture)
    solved = native_episode(Minibox(tmp_path / "solved"), package)
    assert solved.reward == 1.0, solved.output
    assert solved.details["exit_code"] == 0 and solved.details["source_format"] == fixture.split("/")[0]
    idle = native_episode(Minibox(tmp_path / "idle"), package, solve=False)
    assert idle.reward == 0.0, idle.output


@pytest.mark.parametrize("fixture", [f for f in SOLVABLE if f.startswith("harbor/")])
def test_the_fixtures_score_the_same_under_harbor_itself(tmp_path: Path, fixture: str) -> None:
    assert harbor_episode(Minibox(tmp_path / "solved"), FIXTURES / fixture).reward == 1.0
    assert harbor_episode(Minibox(tmp_path / "idle"), FIXTURES / fixture, solve=False).reward == 0.0


def test_reward_json_wins_over_reward_txt(tmp_path: Path) -> None:
    package = imported(tmp_path, "harbor/room-plan")
    box = Minibox(tmp_path / "box")
    apply_dockerfile(box, package / "environment")
    box.path("/app/rooms.json").write_text(json.dumps({"m1": 1, "m2": 2, "m3": 1, "m4": 1, "m5": 1}))
    outcome = verify_native(box, package)
    assert outcome.reward == 0.5, outcome.output
    assert box.path("/logs/verifier/reward.txt").read_text() == "0\n", "reward.txt said 0; reward.json won"
    assert outcome.details["reward_file"] == "reward.json" and outcome.details["other_rewards"] == {"checks_passed": 2}


def write_reward(tmp_path: Path, script: str) -> tuple[Minibox, Path]:
    """An imported package whose test script is replaced by script."""
    package = imported(tmp_path, "harbor/invoice-total")
    (package / "verifier_data" / "test.sh").write_text("#!/bin/sh\n" + script)
    box = Minibox(tmp_path / "box")
    apply_dockerfile(box, package / "environment")
    return box, package


@pytest.mark.parametrize(("script", "why"), [
    ("echo 1.5 > /logs/verifier/reward.txt", "reward.txt is 1.5, outside [0, 1]"),
    ("echo -0.1 > /logs/verifier/reward.txt", "outside [0, 1]"),
    ("echo nan > /logs/verifier/reward.txt", "reward.txt is nan"),
    ("echo lots > /logs/verifier/reward.txt", "reward.txt does not hold a number"),
    ("echo '{\"reward\": 2}' > /logs/verifier/reward.json", "reward.json's 'reward' is 2, outside [0, 1]"),
    ("echo '{\"a\": 1, \"b\": 0}' > /logs/verifier/reward.json", "several values and no 'reward' key"),
    ("echo '{\"reward\": true}' > /logs/verifier/reward.json", "is not a number"),
    ("echo '{nope' > /logs/verifier/reward.json; echo 1 > /logs/verifier/reward.txt", "reward.json is not valid JSON"),
    ("exit 0", "wrote neither /logs/verifier/reward.json nor reward.txt"),
])
def test_anything_but_a_reward_in_range_is_a_verifier_error(tmp_path: Path, script: str, why: str) -> None:
    box, package = write_reward(tmp_path, script)
    outcome = verify_native(box, package)
    assert outcome.reward is None and outcome.returncode == 1
    assert why in outcome.output and "verifier error" in outcome.output
    assert not box.path("/arena/output/reward.json").exists(), "nothing valid may be written"


@pytest.mark.parametrize(("script", "reward"), [
    ("echo 0.25 > /logs/verifier/reward.txt; exit 3", 0.25),
    ("echo 0.75 > /logs/verifier/reward.json", 0.75),
    ("echo '{\"score\": 1}' > /logs/verifier/reward.json", 1.0),
])
def test_a_reward_file_is_used_whatever_the_exit_status(tmp_path: Path, script: str, reward: float) -> None:
    box, package = write_reward(tmp_path, script)
    outcome = verify_native(box, package)
    assert outcome.reward == reward
    assert outcome.details["exit_code"] == (3 if "exit 3" in script else 0)


def test_files_the_agent_planted_cannot_forge_the_reward(tmp_path: Path) -> None:
    package = imported(tmp_path, "harbor/invoice-total")
    box = Minibox(tmp_path / "box")
    apply_dockerfile(box, package / "environment")
    box.path("/tests").mkdir()
    box.path("/tests/check_total.py").write_text("import sys\nsys.exit(0)\n")
    box.path("/tests/expected.json").write_text('{"total": ""}')
    box.path("/logs/verifier").mkdir(parents=True)
    box.path("/logs/verifier/reward.json").write_text('{"reward": 1}')
    outcome = verify_native(box, package)
    assert outcome.reward == 0.0, outcome.output


def test_a_script_without_shebang_runs_with_sh_in_the_workdir(tmp_path: Path) -> None:
    box, package = write_reward(tmp_path, "")
    (package / "verifier_data" / "test.sh").write_text("pwd > /tmp/where\necho 1 > /logs/verifier/reward.txt\n")
    assert verify_native(box, package).reward == 1.0, "executed directly, a file without #! fails; sh runs it"
    assert box.path("/tmp/where").read_text().strip() == "/app"


def test_a_script_that_runs_too_long_is_stopped_with_its_children(tmp_path: Path) -> None:
    box, package = write_reward(tmp_path, "sleep 300 &\nsleep 300\n")
    verifier = package / "verifier.py"
    verifier.write_text(re.sub(r"(?m)^TIMEOUT_S = \d+$", "TIMEOUT_S = 1", verifier.read_text()))
    started = time.monotonic()
    outcome = verify_native(box, package)
    assert time.monotonic() - started < 30
    assert outcome.reward is None and "ran longer than 1 s" in outcome.output


def test_details_carry_the_exit_status_and_the_output_tail_goes_to_stderr(tmp_path: Path) -> None:
    box, package = write_reward(tmp_path, "yes line | head -n 100000\necho 1 > /logs/verifier/reward.txt\n")
    outcome = verify_native(box, package)
    assert outcome.reward == 1.0
    written = json.loads(box.path("/arena/output/reward.json").read_text())
    assert set(written) == {"reward", "details"} and set(written["details"]) == {"source_format", "reward_file",
                                                                                 "exit_code"}
    assert outcome.output.count("line\n") == 4000 // len("line\n"), "a bounded tail of the output, on stderr"


def test_the_same_final_state_verifies_to_the_same_details(tmp_path: Path) -> None:
    """Timings in the test script's output (pytest's "passed in 0.02s") never reach the details."""
    box, package = write_reward(tmp_path, "date +%N\necho 1 > /logs/verifier/reward.txt\n")
    first, again = verify_native(box, package), verify_native(box, package)
    assert first.details == again.details and first.output != again.output
