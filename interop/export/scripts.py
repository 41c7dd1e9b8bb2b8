"""Shell scripts of an exported Harbor task: tests/test.sh and the solution wrappers."""

from __future__ import annotations

import shlex

MARK = "Written by `arena export`"
FIXED_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NOOP_SOLUTION = f"""#!/bin/sh
# {MARK}: the arena oracle runs once, after the last scene (see the last step's solution).
exit 0
"""

_CONVERT = r'''import json, math, sys
from pathlib import Path

def fail(why):
    print("arena verifier error: " + why, file=sys.stderr)
    sys.exit(1)

status = int(sys.argv[1])
output = Path("/arena/output/reward.json")
if status != 0:
    fail("verifier.py exited with status %d" % status)
if not output.is_file():
    fail("verifier.py wrote no reward")
raw = output.read_bytes()
if len(raw) > 70 * 1024:
    fail("the reward JSON is larger than 64 KiB of details allow")
try:
    data = json.loads(raw.decode("utf-8"), parse_constant=lambda name: fail("the reward JSON holds " + name))
except ValueError as exc:
    fail("the reward JSON is invalid: %s" % exc)
if not isinstance(data, dict) or "reward" not in data or set(data) - {"reward", "details"}:
    fail("the reward JSON must be an object with 'reward' and optionally 'details'")
reward = data["reward"]
if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward) \
        or not 0 <= reward <= 1:
    fail("the reward %r is not a number in [0, 1]" % (reward,))
Path("/logs/verifier/reward.json").write_text(json.dumps({"reward": reward}))
Path("/logs/verifier/arena-details.json").write_text(json.dumps(data.get("details", {})))
'''


def test_script(data_paths: tuple[str, ...]) -> str:
    """tests/test.sh: run the arena verifier on instance 0 as the arena would, and convert its reward."""
    paths = [shlex.quote(d.rstrip("/")) for d in data_paths]
    copies = "".join(f'mkdir -p "$(dirname /arena/verifier/{p})" && cp -R "$bundle"/{p} /arena/verifier/{p}\n'
                     for p in paths)
    return f"""#!/bin/sh
# {MARK}: runs the arena verifier (tests/arena/verifier.py) on the final state of instance 0 the way the arena
# does (verifier.py and its data in /arena/verifier, ARENA_* set, a fixed PATH, as root), then turns its reward JSON
# into /logs/verifier/reward.json. A verifier error (non-zero exit, no or invalid reward) writes no reward.
set -u
bundle="$(cd "$(dirname "$0")" && pwd)/arena"
mkdir -p /logs/verifier
rm -rf /arena/verifier /arena/output
mkdir -p /arena/verifier /arena/output
cp "$bundle/verifier.py" /arena/verifier/verifier.py
{copies}cd /arena/verifier
env -i PATH={FIXED_PATH} ARENA_INSTANCE=0 ARENA_WORKSPACE=/workspace ARENA_OUTPUT=/arena/output/reward.json \\
    python3 -I /arena/verifier/verifier.py
status=$?
python3 -I - "$status" <<'CONVERT'
{_CONVERT}CONVERT
result=$?
cd /
rm -rf /arena/verifier /arena/output
exit $result
"""


def solve_wrapper(entry: str) -> str:
    """solution/solve.sh for a package whose oracle entrypoint is another script."""
    runner = "python3" if entry.endswith(".py") else "sh"
    return f"""#!/bin/sh
# {MARK}: the arena oracle's entrypoint is {entry}; Harbor runs solve.sh.
exec {runner} "$(dirname "$0")/{entry}" "$@"
"""
