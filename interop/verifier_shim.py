"""The verifier.py written for an imported task: it runs the task's original test script and converts its reward."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

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
    fetches: tuple[str, ...] = ()


def shim_text(spec: ShimSpec) -> str:
    """The verifier.py source for spec (standard library only, Python 3.8+)."""
    name = {"harbor": "Harbor", "benchflow": "BenchFlow"}.get(spec.source_format, spec.source_format)
    about = (f"The original test files are in {DATA_DIR}/ beside this file (the arena copies them in at verification "
             f"time only). They are put where {name} puts them ({spec.mount}), replacing anything the agent left "
             f"there, and {spec.test_script} runs as {name} runs it: by its shebang (sh when it has none), as root, "
             f"in {spec.workdir}. It writes its reward to /logs/verifier/reward.json (which wins) or reward.txt; "
             "that reward becomes the arena's reward JSON, with the script's exit status and the tail of its output "
             "as details. A missing, unreadable, non-finite or out-of-range (outside [0, 1]) reward is a verifier "
             "error: nothing is written to ARENA_OUTPUT and the exit status is 1.")
    fetches = "".join(f"    {json.dumps(line)},\n" for line in spec.fetches)
    links = "(" + "".join(f"{json.dumps(link)}, " for link in spec.links).rstrip() + ")"
    return _TEMPLATE.format(
        name=name, about=textwrap.fill(about, 116), fmt=json.dumps(spec.source_format), mount=json.dumps(spec.mount),
        links=links, script=json.dumps(spec.test_script), workdir=json.dumps(spec.workdir), timeout=spec.timeout_s,
        env=json.dumps(spec.env), data=json.dumps(DATA_DIR), tail=TAIL_CHARS,
        fetches=f"(\n{fetches})" if fetches else "()",
    )


_TEMPLATE = '''"""Verifier written by `arena import` for a {name} task: it runs the task's test script, unchanged.

{about}
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
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
LOGS = Path("/logs/verifier")
TAIL_CHARS = {tail}
MAX_REWARD_BYTES = 1024 * 1024
MAX_OTHER_REWARDS = 50
# Lines of the original tests that install or download at verification time. The arena verifies without a
# network, so these fail there: install what they fetch in environment/Dockerfile instead (see the import notes).
FETCHES = {fetches}


class VerifierError(Exception):
    """The test script gave no usable reward."""


def clear(path: str) -> None:
    """Remove whatever is at path (the agent could have planted files or links there)."""
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def install_tests() -> Path:
    """Copy the original test files to where the source format mounts them."""
    for path in (MOUNT, *LINKS):
        clear(path)
    shutil.copytree(str(Path(__file__).resolve().parent / DATA_DIR), MOUNT, symlinks=True)
    for link in LINKS:
        os.makedirs(os.path.dirname(link) or "/", exist_ok=True)
        os.symlink(MOUNT, link)
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
    env.update(EXTRA_ENV)
    if FETCHES:
        print("warning: the test script installs or downloads at verification time:", *FETCHES, sep="\\n  ",
              file=sys.stderr)
    log = LOGS / "test-stdout.txt"
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=WORKDIR if os.path.isdir(WORKDIR) else "/", env=env,
                                   stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
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
        reward, source, others = read_reward()
    except (VerifierError, OSError) as exc:
        print("verifier error:", exc, file=sys.stderr)
        return 1
    details = {{"source_format": SOURCE_FORMAT, "reward_file": source, "exit_code": status, "output_tail": tail}}
    if others:
        details["other_rewards"] = others
    Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps({{"reward": reward, "details": details}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
