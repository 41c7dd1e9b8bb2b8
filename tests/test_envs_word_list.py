"""Host-run checks of the word-list environment, the first look's learnable package.

For a spread of seeds: the oracle scores 1.0, a word changed, dropped, added or swapped earns the share of lines still
right (so below 1), another instance's answer and a one-line answer earn 0. Runs generator, oracle and verifier as
subprocesses without Docker (tests/support/host_episode.py); the properties every bundled environment shares are in
test_environment_properties.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.host_episode import generate, load_generator, solved, variant, verify

pytestmark = pytest.mark.slow  # the environment run on the host over many instances

PACKAGE = Path(__file__).resolve().parent.parent / "environments" / "word-list"
SEEDS = [0, 1, 7, 42, 313, 999]


def share(instance: int, workspace: Path) -> float:
    """The verifier's reward for the workspace; fails the test on a verifier error or a reward outside [0, 1]."""
    episode = verify(PACKAGE, instance, workspace)
    assert episode.reward is not None, f"verifier error: {episode.verifier_stderr[-2000:]}"
    reward = episode.reward["reward"]
    assert 0.0 <= reward <= 1.0, episode.reward
    return float(reward)


def answer_with(workspace: Path, tmp_path: Path, name: str, lines: list[str]) -> Path:
    """A copy of the solved workspace whose answer.txt holds lines."""
    forged = variant(workspace, tmp_path, name)
    (forged / "answer.txt").write_text("".join(f"{line}\n" for line in lines))
    return forged


@pytest.mark.parametrize("seed", SEEDS)
def test_partial_answers_earn_the_share_of_right_lines(seed: int, tmp_path: Path) -> None:
    words = load_generator(PACKAGE).words_for(seed)
    n = len(words)
    assert 3 <= n <= 4 and len(set(words)) == n
    workspace = solved(PACKAGE, seed, tmp_path)
    assert share(seed, workspace) == 1.0
    cases = {
        "capitalised": ([w.capitalize() for w in words], 1.0),
        "first_only": (words[:1], round(1 / n, 4)),
        "dropped": (words[:-1], round((n - 1) / n, 4)),
        "added": ([*words, "zebra"], round(n / (n + 1), 4)),
        "changed": ([*words[:-1], "zebra"], round((n - 1) / n, 4)),
        "swapped": ([words[1], words[0], *words[2:]], round((n - 2) / n, 4)),
        "one_line": ([" ".join(words)], 0.0),
        "numbered": ([f"{i}. {w}" for i, w in enumerate(words, 1)], 0.0),
    }
    got = {name: share(seed, answer_with(workspace, tmp_path, name, lines)) for name, (lines, _) in cases.items()}
    assert got == {name: want for name, (_, want) in cases.items()}


def test_another_instances_answer_earns_nothing(tmp_path: Path) -> None:
    words_for = load_generator(PACKAGE).words_for
    workspace = tmp_path / "ws"
    prompt = generate(PACKAGE, 3, workspace)
    assert prompt == {"words": "\n".join(words_for(3))}
    others = [i for i in range(40) if words_for(i) != words_for(3)]
    assert len(others) == 39
    for other in others:
        assert share(3, answer_with(workspace, tmp_path, f"other-{other}", words_for(other))) == 0.0, other
