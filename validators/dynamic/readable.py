"""The readable-answers check (ARENA711): nothing the agent can read outside the prompt's files gives the answer away.

On each sampled instance the probe, as the agent user, first runs the oracle to learn which files make the answer
(every file it changed, anywhere the agent may write: their names, and for JSON and CSV their keys and header), then
puts every one of them back as it was. It then reads every
file it can outside /proc, /sys, /dev and its own files:

- answer candidates: a file of the same name as one of the oracle's, JSON with (at least) the same keys, or CSV with
  the same header, that is not the task's own (a path the prompt names, or a visible file in a folder holding one:
  the inputs the agent is given; hidden files there are candidates). The best one per answer file is copied into
  place, and the frozen state is verified: it must score no more than doing nothing.
- near-copies of the hidden sources (verifier, oracle, generator, verifier data): text whose lines and 8-token
  shingles match one (half of its shingles or more). An exact copy in the image is ARENA706's, and is left to it.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from agents.scripted import ScriptedAgent, oracle_agent
from sandbox.layout import WORKSPACE
from sandbox.outcomes import EpisodeResult
from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules.dynamic import ARENA711
from taskpkg.shared_files import shared_data_files
from validators.registry import Needs, check

SHINGLE_TOKENS = 8
MIN_LINE_CHARS = 16
MIN_SHINGLES = 12
NEAR_COPY_SHARE = 0.5
MAX_SOURCE_CHARS = 200_000
_TOKEN = re.compile(r"\w+|[^\w\s]")
_NAMED = re.compile(r"(?:/[\w.-]+)*/?[\w.-]+\.(?:json|csv|txt|md|ya?ml|xml|log|tsv|ini|html?|py|sh|sql|db)\b")

_READ = r'''import hashlib, json, os, re, shutil, stat, subprocess, time
spec = json.load(open("/arena/read/spec.json"))
started = time.time()
WORKSPACE, BACKUP = spec["workspace"], "/tmp/.arena-read-backup"  # the oracle runs in WORKSPACE
TOKEN = re.compile(r"\w+|[^\w\s]")
SKIP = ("/proc", "/sys", "/dev", "/arena/read", "/arena/oracle", BACKUP)


def files(root):
    for parent, folders, names in os.walk(root):
        folders[:] = [f for f in folders if os.path.join(parent, f) not in SKIP]
        for name in names:
            yield os.path.join(parent, name)


def changeable():
    """Size and time of every file the agent may change: one it may write, or in a folder it may write."""
    found = {}
    for parent, folders, names in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(parent, f) not in SKIP]
        open_folder = os.access(parent, os.W_OK)
        for name in names:
            path = os.path.join(parent, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (open_folder or os.access(path, os.W_OK)):
                found[path] = (info.st_size, info.st_mtime_ns)
    return found


def shape(path):
    """What an answer file looks like: its name, JSON keys or CSV header."""
    found = {"path": path, "name": os.path.basename(path), "keys": [], "header": ""}
    try:
        text = open(path, encoding="utf-8").read(1 << 20)
    except (OSError, ValueError):
        return found
    try:
        value = json.loads(text)
        value = value[0] if isinstance(value, list) and value else value
        found["keys"] = sorted(value) if isinstance(value, dict) else []
    except ValueError:
        first = text.split("\n", 1)[0].strip()
        found["header"] = first if "," in first else ""
    return found


before = changeable()
os.makedirs(BACKUP)
saved = {}
for index, path in enumerate(sorted(before)):
    try:
        shutil.copy2(path, os.path.join(BACKUP, str(index)))
        saved[path] = os.path.join(BACKUP, str(index))
    except OSError:
        pass
subprocess.run(spec["oracle"], shell=True, cwd=WORKSPACE, timeout=spec["timeout"], capture_output=True)
after = changeable()
changed = sorted(p for p, seen in after.items() if before.get(p) != seen and "/__pycache__/" not in p)
outputs = [shape(p) for p in changed]
for path in set(after) - set(before):
    os.unlink(path)
for path in (set(changed) | (set(before) - set(after))) & set(saved):
    shutil.copy2(saved[path], path)
shutil.rmtree(BACKUP)

owners = {}
for index, source in enumerate(spec["hidden"]):
    for line in source["lines"]:
        owners.setdefault(line, set()).add(index)
shingles = [set(source["shingles"]) for source in spec["hidden"]]
named = set(spec["named"]) | {o["path"] for o in outputs}
inputs = sorted({os.path.dirname(p) for p in named} - {"/"})


def given(path):
    """Whether a file is the task's own: a path the prompt names, or a visible file in a folder holding one."""
    if path in named:
        return True
    for folder in inputs:
        if path.startswith(folder + "/"):
            return not any(part.startswith(".") for part in path[len(folder) + 1:].split("/"))
    return False


def packaged():
    """Files the image's Debian packages installed, as dpkg lists them: none of them is the author's text."""
    found = set()
    folder = "/var/lib/dpkg/info"
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.endswith(".list"):
            try:
                found.update(open(os.path.join(folder, name), encoding="utf-8", errors="replace").read().split("\n"))
            except OSError:
                pass
    return found


debian = packaged()
output_names = {o["name"] for o in outputs}
candidates, copies = {}, []
for path in files("/"):
    try:
        info = os.lstat(path)
    except OSError:
        continue
    # Newer than the probe's start: written during it (what the oracle made is gone, what it changed put back with
    # its old time). No margin below the start: an instance committed to a snapshot keeps whole-second times, so a
    # file the generator wrote in the second before the probe started reads as older than the start, not newer.
    if not stat.S_ISREG(info.st_mode) or info.st_size > (1 << 20) or info.st_mtime >= started:
        continue
    if path in debian and info.st_mtime <= spec["since"] and os.path.basename(path) not in output_names:
        continue  # unchanged since the image was built, by a Debian package (JSON and CSV from them: none are answers)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        continue  # not readable by the agent
    # Made at instance time: its inode changed after the image was made. The change time, not the modification time:
    # a snapshot keeps whole-second modification times (a file the generator wrote in the second the image was made
    # reads as older than the image) and a generator can set them, while the change time is when the instance's layer
    # was unpacked, to the nanosecond, and no process in the container can set it.
    instance_time = info.st_ctime > spec["since"]
    if not given(path):
        for output in outputs:
            rank = None
            if os.path.basename(path) == output["name"]:
                rank = 0
            elif output["keys"] and data.lstrip()[:1] in (b"{", b"["):
                try:
                    value = json.loads(data)
                    value = value[0] if isinstance(value, list) and value else value
                    rank = 1 if isinstance(value, dict) and set(output["keys"]) <= set(value) else None
                except ValueError:
                    pass
            elif output["header"] and data.split(b"\n", 1)[0].strip() == output["header"].encode():
                rank = 1
            if rank is not None:
                best = candidates.get(output["path"])
                key = (rank, path.startswith("/usr/"), len(path))
                if best is None or key < best[0]:
                    candidates[output["path"]] = (key, path, instance_time)
    if b"\0" in data[:4096] or len(data) < 32:
        continue
    text = data.decode("utf-8", "replace")
    lines = {"".join(line.split()): line.strip() for line in text.splitlines()}
    hits = {}
    for key, line in lines.items():
        for index in owners.get(key, ()):
            hits.setdefault(index, []).append(line)
    for index, matched in hits.items():
        source = spec["hidden"][index]
        if len(matched) < max(3, 0.2 * len(source["lines"])):
            continue
        exact = hashlib.sha256(data).hexdigest() == source["sha256"]
        if exact and not instance_time:
            continue  # an exact copy in the image: ARENA706's finding
        tokens = TOKEN.findall(text)
        k = spec["k"]
        mine = {" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1)}
        share = len(mine & shingles[index]) / max(1, len(shingles[index]))
        if share >= spec["share"]:
            copies.append({"path": path, "source": source["path"], "share": round(share, 3),
                           "example": max(matched, key=len)[:80], "instance_time": instance_time})
tried = {}
for output, (_, path, instance_time) in sorted(candidates.items()):
    shutil.copyfile(path, output)
    tried[output] = {"path": path, "instance_time": instance_time}
print("READ " + json.dumps({"outputs": [o["path"] for o in outputs], "tried": tried, "copies": copies[:20],
                            "seconds": round(time.time() - started, 2)}))
'''


def named_paths(package: TaskPackage) -> list[str]:
    """Absolute paths of the files the prompt names (relative names are in the workspace)."""
    found = set()
    for match in _NAMED.findall(package.body):
        path = PurePosixPath(match)
        found.add(str(path) if path.is_absolute() else f"{WORKSPACE}/{path.name}")
    return sorted(found)


def tokens_of(text: str) -> list[str]:
    """The tokens near-copies are compared by: words and single punctuation marks (spacing ignored)."""
    return _TOKEN.findall(text)


def fingerprints(package: TaskPackage) -> list[dict[str, Any]]:
    """Per hidden text file (shared verifier data excepted): its normalised lines, token shingles and digest."""
    shared = shared_data_files(package)
    found, seen = [], set()
    for relative in package.hidden_paths():
        root = package.root / relative
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
        for path in paths:
            name = path.relative_to(package.root).as_posix()
            if name in seen or name in shared or path.is_symlink() or "__pycache__" in path.parts:
                continue
            seen.add(name)
            data = path.read_bytes()
            if b"\0" in data[:4096]:
                continue
            text = data.decode("utf-8", "replace")[:MAX_SOURCE_CHARS]
            tokens = tokens_of(text)
            shingles = {" ".join(tokens[i:i + SHINGLE_TOKENS]) for i in range(len(tokens) - SHINGLE_TOKENS + 1)}
            lines = {"".join(line.split()) for line in text.splitlines()}  # spacing ignored, cheap to compare
            if len(shingles) >= MIN_SHINGLES:
                found.append({"path": name, "sha256": hashlib.sha256(data).hexdigest(), "shingles": sorted(shingles),
                              "lines": sorted(line for line in lines if len(line) >= MIN_LINE_CHARS)})
    return found


def read_agent(package: TaskPackage, image_created: float) -> ScriptedAgent:
    """The probe's agent: the oracle's files and the script above, with what it needs to know."""
    oracle = oracle_agent(package)
    spec = {"workspace": WORKSPACE, "oracle": oracle.commands[0], "timeout": package.limits.oracle_timeout_s,
            "named": named_paths(package), "hidden": fingerprints(package), "since": image_created,
            "k": SHINGLE_TOKENS, "share": NEAR_COPY_SHARE}
    files = {**oracle.files, "read/spec.json": json.dumps(spec).encode(), "read/read.py": _READ.encode()}
    return ScriptedAgent("probe:read-answers", ["python3 /arena/read/read.py"],
                         package.limits.oracle_timeout_s + 120, files)


def image_created(attributes: dict[str, Any]) -> float:
    """The image's creation time (seconds since the epoch): files newer than it were made at instance time."""
    text = str(attributes.get("Created", ""))
    try:
        return datetime.fromisoformat(re.sub(r"(\.\d{6})\d*", r"\1", text.replace("Z", "+00:00"))).timestamp()
    except ValueError:
        return 0.0


@check(ARENA711, needs=Needs.ENGINE)
def judge_reading(package: TaskPackage, result: EpisodeResult, floor: float) -> list[Diagnostic]:
    """ARENA711 for an answer candidate that scored above the floor, and for each near-copy of a hidden file."""
    report = _report(result)
    found = []
    tried = report.get("tried") or {}
    if tried and result.reward is not None and result.reward > floor:
        at_instance_time = any(t.get("instance_time") for t in tried.values())
        file = package.generator if at_instance_time else "environment/Dockerfile"
        copied = "; ".join(f"{t['path']} → {output}" for output, t in sorted(tried.items()))
        found.append(ARENA711.found(file, case="answer", copied=copied, reward=result.reward, floor=floor))
    for copy in report.get("copies") or []:
        where = "made at instance time" if copy.get("instance_time") else "in the image"
        found.append(ARENA711.found(copy["source"], case="copy", path=copy["path"], source=copy["source"],
                                    share=float(copy["share"]), example=copy["example"], where=where,
                                    tokens=SHINGLE_TOKENS))
    return found


def _report(result: EpisodeResult) -> dict[str, Any]:
    for entry in reversed(result.transcript.entries):
        for line in (entry.result or {}).get("stdout", "").splitlines():
            if line.startswith("READ "):
                try:
                    report: dict[str, Any] = json.loads(line[len("READ "):])
                    return report
                except ValueError:
                    return {}
    return {}

