"""The verifier.py written for an imported task: it runs the task's original test script and converts its reward."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

from interop.source_task import FORMAT_NAMES

DATA_DIR = "verifier_data"
TAIL_CHARS = 4000


@dataclass(frozen=True)
class ShimSpec:
    """Where the source format puts its tests and runs them, and what the generated verifier must know."""

    source_format: str
    mount: str
    links: tuple[str, ...]
    test_script: str
    workdir: str
    timeout_s: int
    env: dict[str, str] = field(default_factory=dict)
    placements: tuple[tuple[str, str], ...] = ()
    reward_from: str = "reward-file"


def shim_text(spec: ShimSpec) -> str:
    """The verifier.py source for spec (standard library only, Python 3.8+)."""
    name = FORMAT_NAMES.get(spec.source_format, spec.source_format)
    placed = (" Files the source's verifier image held elsewhere are put there too (PLACEMENTS)."
              if spec.placements else "")
    reward = ("Its exit status is the reward, as the format has it: 0 scores 1, anything else 0 (a timeout is a "
              "verifier error)." if spec.reward_from == "exit-status" else
              "It writes its reward to /logs/verifier/reward.json (which wins) or reward.txt; that reward becomes the "
              "arena's reward JSON, with the script's exit status as details. A missing, unreadable, non-finite or "
              "out-of-range (outside [0, 1]) reward is a verifier error: nothing is written to ARENA_OUTPUT and the "
              "exit status is 1.")
    about_output = ("The tail of the script's output goes to stderr, which the arena keeps with the verifier's "
                    "output; it is not part of the details, whose timings would make two verifications differ.")
    about = (f"The original test files are in {DATA_DIR}/ beside this file (the arena copies them in at verification "
             f"time only). They are put where {name} puts them ({spec.mount}), replacing anything the agent left "
             f"there, and {spec.test_script} runs as {name} runs it: by its shebang (sh when it has none), as root, "
             f"in {spec.workdir}.{placed} {reward} {about_output}")
    pairs = [f"({json.dumps(s)}, {json.dumps(d)})" for s, d in spec.placements]
    return _TEMPLATE.format(
        name=name, about=textwrap.fill(about, 116), fmt=json.dumps(spec.source_format), mount=json.dumps(spec.mount),
        links=_tuple_text([json.dumps(link) for link in spec.links]),
        script=json.dumps(spec.test_script), workdir=json.dumps(spec.workdir), timeout=spec.timeout_s,
        env=json.dumps(spec.env), data=json.dumps(DATA_DIR), tail=TAIL_CHARS, reward_from=json.dumps(spec.reward_from),
        placements=_tuple_text(pairs),
    )


def _tuple_text(items: list[str]) -> str:
    """A tuple literal as ruff's formatter writes it: on one line when it fits, else one item a line."""
    one_line = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"  # () when empty
    if len(one_line) <= 100:
        return one_line
    return "(\n" + "".join(f"    {item},\n" for item in items) + ")"


_TEMPLATE = '''"""Verifier written by `arena import` for a {name} task:
it runs the task's test script, unchanged.

{about}
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import string
import subprocess
import sys
from pathlib import Path

SOURCE_FORMAT = {fmt}
MOUNT = {mount}
LINKS = {links}
TEST_SCRIPT = {script}
WORKDIR = {workdir}
TIMEOUT_S = {timeout}
EXTRA_ENV = {env}
DATA_DIR = {data}
# (path in the tests folder, where the source's verifier image had it): put there at verification time as well.
PLACEMENTS = {placements}
# "reward-file": the script writes /logs/verifier/reward.json or reward.txt; "exit-status": 0 scores 1, else 0.
REWARD_FROM = {reward_from}
LOGS = Path("/logs/verifier")
TAIL_CHARS = {tail}
MAX_REWARD_BYTES = 1024 * 1024
MAX_OTHER_REWARDS = 50


class VerifierError(Exception):
    """The test script gave no usable reward."""


def clear(path: str) -> None:
    """Remove whatever is at path (the agent could have planted files or links there)."""
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def place(source: str, target: str) -> None:
    """Put a test file (or folder, merged into what is there) where the source's verifier image had it."""
    merge = os.path.isdir(source) and os.path.isdir(target) and not os.path.islink(target)
    if os.path.lexists(target) and not merge:
        clear(target)
    os.makedirs(os.path.dirname(target) or "/", exist_ok=True)
    if os.path.isdir(source):
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copyfile(source, target)


def install_tests() -> Path:
    """Copy the original test files to where the source format mounts them."""
    for path in (MOUNT, *LINKS):
        clear(path)
    shutil.copytree(str(Path(__file__).resolve().parent / DATA_DIR), MOUNT, symlinks=True)
    for link in LINKS:
        os.makedirs(os.path.dirname(link) or "/", exist_ok=True)
        os.symlink(MOUNT, link)
    for source, target in PLACEMENTS:
        place(os.path.join(MOUNT, source), target)
    clear(str(LOGS))
    LOGS.mkdir(parents=True)
    script = Path(MOUNT) / TEST_SCRIPT
    script.chmod(0o755)
    return script


def run(script: Path) -> tuple[int, str]:
    """Run the test script in its own process group; return its exit status and the tail of its output."""
    command = [str(script)] if script.read_bytes()[:2] == b"#!" else ["sh", str(script)]
    env = dict(os.environ)
    env.setdefault("HOME", "/root")
    for key, value in EXTRA_ENV.items():
        env[key] = string.Template(value).safe_substitute(env)
    log = LOGS / "test-stdout.txt"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=WORKDIR if os.path.isdir(WORKDIR) else "/",
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status = None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if status is None:
        raise VerifierError(TEST_SCRIPT + " ran longer than " + str(TIMEOUT_S) + " s")
    with log.open("rb") as output:
        output.seek(max(0, log.stat().st_size - TAIL_CHARS * 4))
        tail = output.read().decode("utf-8", "replace")[-TAIL_CHARS:]
    return status, tail


def number(value: object, where: str) -> float:
    """A reward value: a finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise VerifierError(where + " is not a number: " + repr(value)[:80])
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise VerifierError(where + " is " + repr(value) + ", outside [0, 1]")
    return float(value)


def shown(value: object) -> object:
    """A value for details: finite numbers as they are, anything else as short text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return repr(value)[:80]


def read_reward() -> tuple[float, str, dict]:
    """The reward from reward.json (which wins) or reward.txt, its file, and any other rewards reported."""
    as_json, as_text = LOGS / "reward.json", LOGS / "reward.txt"
    if as_json.is_file():
        try:
            data = json.loads(as_json.read_bytes()[:MAX_REWARD_BYTES].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise VerifierError("reward.json is not valid JSON: " + str(exc)[:200]) from None
        if not isinstance(data, dict):
            return number(data, "reward.json"), "reward.json", {{}}
        key = "reward" if "reward" in data else (next(iter(data)) if len(data) == 1 else None)
        if key is None:
            names = ", ".join(map(str, data))[:200]
            raise VerifierError("reward.json has several values and no 'reward' key: " + names)
        others = {{str(k): shown(v) for k, v in list(data.items())[:MAX_OTHER_REWARDS] if k != key}}
        return number(data[key], "reward.json's " + repr(key)), "reward.json", others
    if as_text.is_file():
        text = as_text.read_bytes()[:MAX_REWARD_BYTES].decode("utf-8", "replace").strip()
        try:
            value = float(text)
        except ValueError:
            raise VerifierError("reward.txt does not hold a number: " + repr(text[:80])) from None
        return number(value, "reward.txt"), "reward.txt", {{}}
    raise VerifierError("the test script wrote neither /logs/verifier/reward.json nor reward.txt")


def main() -> int:
    try:
        status, tail = run(install_tests())
    except (VerifierError, OSError) as exc:
        print("verifier error:", exc, file=sys.stderr)
        return 1
    print(tail, file=sys.stderr)
    try:
        if REWARD_FROM == "exit-status":
            reward, source, others = (1.0 if status == 0 else 0.0), "exit status", {{}}
        else:
            reward, source, others = read_reward()
    except (VerifierError, OSError) as exc:
        print("verifier error:", exc, file=sys.stderr)
        return 1
    details = {{"source_format": SOURCE_FORMAT, "reward_file": source, "exit_code": status}}
    if others:
        details["other_rewards"] = others
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps({{"reward": reward, "details": details}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
