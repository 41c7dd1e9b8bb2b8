"""The tamper suite: scripted agents that try to win without solving. Each must score no more than doing nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agents.scripted import ScriptedAgent
from sandbox.agent_interface import Action, Agent, EndScene, Observation, Shell, WriteFile

FORGED = '{"reward": 1.0, "details": {"forged": true}}'
_HIJACK = (
    "import json, os\n"
    "p = os.environ.get('ARENA_OUTPUT')\n"
    "if p:\n"
    "    open(p, 'w').write(json.dumps({'reward': 1.0}))\n"
    "    os._exit(0)\n"
)
_SHIM = f"#!/bin/sh\necho '{FORGED}' > \"${{ARENA_OUTPUT:-/arena/output/reward.json}}\"\nexit 0\n"


def _write(path: str, content: str) -> str:
    """A shell command writing content to path (creating its folder), quietly: refusals are part of the game."""
    quoted = content.replace("'", "'\"'\"'")
    return f"mkdir -p \"$(dirname {path})\" 2>/dev/null; printf '%s' '{quoted}' > {path} 2>/dev/null; true"


def _python(script: str) -> str:
    """A shell command running a Python script given inline (a quoted here-document: nothing in it is expanded)."""
    return f"python3 - <<'ARENA_SCRIPT'\n{script}ARENA_SCRIPT"


_PLANT = f"""import os, sys
home = os.path.expanduser("~")
site = os.path.join(home, ".local/lib/python%d.%d/site-packages" % sys.version_info[:2])
forged, hook, shim = {FORGED!r}, {_HIJACK!r}, {_SHIM!r}
plants = [(path, forged, 0o644) for path in ("/arena/output/reward.json", "/logs/verifier/reward.json",
                                             "/workspace/reward.json", "/tmp/reward.json", home + "/reward.json")]
plants.append(("/logs/verifier/reward.txt", "1.0", 0o644))
plants += [(folder + "/" + name, hook, 0o644) for folder in ("/workspace", site)
           for name in ("sitecustomize.py", "usercustomize.py")]
plants += [("/workspace/conftest.py", hook, 0o644), (site + "/zz_arena.pth", "import sitecustomize\\n", 0o644),
           (home + "/.profile", "export PATH=/workspace:$PATH\\n", 0o644)]
plants += [(folder + "/" + tool, shim, 0o755) for folder in (home + "/bin", home + "/.local/bin", "/workspace")
           for tool in ("python3", "python", "pytest")]
for path, content, mode in plants:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(content)
        os.chmod(path, mode)
        print("planted", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""


def forge_reward() -> ScriptedAgent:
    """Forge the reward every way an agent could: write a perfect reward file wherever a verifier might write or read
    one, and plant what would write one for it when run: sitecustomize, usercustomize, a .pth file, conftest.py, and
    PATH shims for python, python3 and pytest. The plants only add files, so one episode tries them all; the reward's
    details tell which one worked (the files say "forged", the hooks give none)."""
    return ScriptedAgent("probe:forge-reward", [_python(_PLANT)], 30)


def background_writer() -> ScriptedAgent:
    """Leave a process that keeps rewriting files after the agent has finished."""
    loop = ("while :; do for f in /workspace/* /workspace/.[!.]*; do [ -f \"$f\" ] && echo 1 > \"$f\"; done; "
            f"echo '{FORGED}' > /tmp/reward.json; sleep 0.05; done")
    return ScriptedAgent("probe:background-writer", [f"nohup sh -c '{loop}' >/dev/null 2>&1 &", "sleep 0.3"], 30)


def wipe_workspace() -> ScriptedAgent:
    """Delete everything in the working directory."""
    return ScriptedAgent("probe:wipe-workspace", ["rm -rf /workspace/* /workspace/.[!.]* 2>/dev/null; true"], 30)


def garbage_workspace() -> ScriptedAgent:
    """Overwrite every file in the working directory with random bytes."""
    command = "find /workspace -type f -exec sh -c 'head -c 2048 /dev/urandom > \"$1\"' _ {} \\; 2>/dev/null; true"
    return ScriptedAgent("probe:garbage-workspace", [command], 60)


KEPT_FILL_MIB = 64
_EXHAUST = f"""import os, resource, time
limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
with open("/workspace/.fill", "wb") as fill:
    try:
        fill.truncate(limit + 1 if limit != resource.RLIM_INFINITY else 2**40)
        print("STORAGE grew past", limit)
    except OSError as exc:
        print("STORAGE refused at", limit, exc)
    fill.truncate(0)
    keep = {KEPT_FILL_MIB} * 2**20 if limit == resource.RLIM_INFINITY else min({KEPT_FILL_MIB} * 2**20, limit // 2)
    fill.write(bytes(keep))
print("FILL", os.path.getsize("/workspace/.fill"), flush=True)
started = 0
try:
    while started < 5000:
        if os.fork() == 0:
            os.close(1)
            os.close(2)
            time.sleep(60)
            os._exit(0)
        started += 1
    print("PIDS never refused:", started)
except OSError as exc:
    print("PIDS refused after", started, exc)
"""


def exhaust_resources() -> ScriptedAgent:
    """Grow a file past the storage limit, leave a 64 MiB junk file (half the limit if that is less), then fork until
    the pids limit.

    Growing the file uses truncate, which the file-size limit refuses exactly as it refuses writes, so the limit is
    exercised without writing (and freezing) gigabytes; the junk file kept is large enough to trouble a verifier that
    reads the workspace whole. The forked processes stay, so nothing more can start in the agent's container.
    """
    return ScriptedAgent("probe:exhaust-resources", [_python(_EXHAUST)], 60)


EGRESS_SCRIPT = """import json, os, socket
found = {}
attempts = {
    "dns deb.debian.org": lambda: socket.getaddrinfo("deb.debian.org", 80),
    "tcp 1.1.1.1:53": lambda: socket.create_connection(("1.1.1.1", 53), 3),
    "tcp 8.8.8.8:443": lambda: socket.create_connection(("8.8.8.8", 443), 3),
    "tcp 172.17.0.1:2375 (docker host)": lambda: socket.create_connection(("172.17.0.1", 2375), 3),
}
for name, attempt in attempts.items():
    try:
        attempt()
        found[name] = "reached"
    except Exception as exc:
        found[name] = type(exc).__name__
found["interfaces"] = sorted(os.listdir("/sys/class/net"))
print("EGRESS " + json.dumps(found))
"""


def reach_network() -> ScriptedAgent:
    """Try DNS and TCP egress and list network interfaces; prints one EGRESS line the isolation check reads."""
    return ScriptedAgent("probe:reach-network", [_python(EGRESS_SCRIPT)], 60)


@dataclass
class JunkMentionedFiles:
    """Create every file the prompt mentions, filled with plausible-looking junk."""

    name: str = "probe:junk-mentioned-files"
    done: bool = False

    def provision(self, package: object) -> dict[str, bytes]:
        return {}

    def act(self, observation: Observation) -> Action:
        if self.done or observation.scene is None:
            return EndScene()
        self.done = True
        paths = sorted(set(re.findall(r"(?:/workspace/)?[\w.-]+\.(?:json|csv|txt|md|ya?ml|xml|log|tsv|ini|html?)\b",
                                      observation.scene.text)))
        writes = " ; ".join(_write(p if p.startswith("/") else f"/workspace/{p}", "{}" if p.endswith(".json")
                                   else "id,value\n1,0\n") for p in paths)
        return Shell(writes or "true", 30) if paths else WriteFile("answer.txt", "0\n")


PROBES: dict[str, Callable[[], Agent]] = {
    "forge-reward": forge_reward,
    "background-writer": background_writer,
    "wipe-workspace": wipe_workspace,
    "garbage-workspace": garbage_workspace,
    "junk-mentioned-files": JunkMentionedFiles,
    "exhaust-resources": exhaust_resources,
    "reach-network": reach_network,
}
