"""The verifier, run as the arena runs it but traced (sent as `python3 -I -c <this source> VERIFIER`; stdlib only).

Used by the steering check (validators/dynamic/steering.py) on a frozen final state, never for a score. It runs
verifier.py in this process (as `__main__`, with the same `-I` interpreter) under an audit hook that records every
import path entry, every program or script started and every code file executed; the verifier's own reward goes to a
file of its own. Then it looks, in the frozen state, at which of those the agent user (uid 1000) could have written
(by owner, group and mode bits, along the whole path), lists which of the probe's plants ran (each leaves a file
in /arena), and writes one reward file: the verifier's reward, with the findings as details.
"""

import json
import os
import runpy
import stat
import sys

AGENT_UID = 1000
MARKS = "/arena"  # each plant that ran leaves /arena/planted-<kind>-<name> holding where it was
INNER_OUTPUT = "/arena/output/verifier-reward.json"
MAX_ITEMS = 40
CODE_SUFFIXES = (".py", ".sh", ".bash", ".pl", ".rb", ".js")


def agent_groups():
    """The agent user's groups: its own (1000) and those /etc/group lists its name in."""
    groups, name = {AGENT_UID}, None
    try:
        with open("/etc/passwd") as handle:
            for line in handle:
                parts = line.split(":")
                if len(parts) > 3 and parts[2] == str(AGENT_UID):
                    name = parts[0]
        with open("/etc/group") as handle:
            for line in handle:
                parts = line.rstrip("\n").split(":")
                if name and len(parts) > 3 and name in parts[3].split(",") and parts[2].isdigit():
                    groups.add(int(parts[2]))
    except OSError:
        pass
    return groups


GROUPS = agent_groups()


def allows(info, bits):
    """Whether the agent user has every permission in `bits` (4 read, 2 write, 1 search) on a file."""
    if info.st_uid == AGENT_UID:
        shift = 6
    elif info.st_gid in GROUPS:
        shift = 3
    else:
        shift = 0
    return (info.st_mode >> shift) & bits == bits


def reachable(folder):
    """Whether the agent user can search every folder from / down to `folder`."""
    path = "/"
    for part in [p for p in folder.split("/") if p]:
        try:
            if not allows(os.stat(path), 1):
                return False
        except OSError:
            return False
        path = os.path.join(path, part)
    try:
        return allows(os.stat(path), 1)
    except OSError:
        return False


def may_add_to(folder):
    """Whether the agent user may create entries in an existing folder."""
    try:
        return stat.S_ISDIR(os.stat(folder).st_mode) and allows(os.stat(folder), 3) and reachable(folder)
    except OSError:
        return False


def agent_can_change(path):
    """Whether the agent could have written `path`: the file itself, a replacement in its folder, or (missing) a
    new one under the nearest folder that exists."""
    path = os.path.abspath(path)
    existing = path
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if existing != path:
        return may_add_to(existing)
    folder = os.path.dirname(path)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
        return may_add_to(path)
    if may_add_to(folder) and (not os.stat(folder).st_mode & stat.S_ISVTX or info.st_uid == AGENT_UID):
        return True
    return not stat.S_ISLNK(info.st_mode) and allows(info, 2) and reachable(folder)


class Trace:
    """What the verifier looked at and ran."""

    def __init__(self):
        self.base_path = [os.path.abspath(p or ".") for p in sys.path]
        self.import_path = list(self.base_path)
        self.program_path = [p for p in os.environ.get("PATH", "").split(":") if p]
        self.runs = []  # (what, path)
        self.active = True

    def hook(self, event, args):
        """The audit hook."""
        if not self.active:
            return
        try:
            if event == "import":
                for entry in args[2] or ():
                    if isinstance(entry, str) and os.path.abspath(entry or ".") not in self.import_path:
                        self.import_path.append(os.path.abspath(entry or "."))
            elif event == "subprocess.Popen":
                self.started(args[1], args[2], args[3])
            elif event in ("os.exec", "os.posix_spawn"):
                self.started(args[1], None, args[2])
            elif event == "os.spawn":
                self.started(args[2], None, args[3])
            elif event == "os.system":
                self.started(str(args[0]).split(), None, None)
            elif event == "exec":
                name = getattr(args[0], "co_filename", "")
                if name.startswith("/") and os.path.isfile(name) and name != sys.argv[0]:
                    self.runs.append(("executed code", name))
        except Exception:  # a trace that cannot read an event's arguments must never change the verifier's run
            pass

    def started(self, argv, cwd, env):
        """A program started: the program found on PATH and every argument that names a file."""
        if isinstance(argv, (str, bytes)):
            argv = [argv]
        argv = [a.decode() if isinstance(a, bytes) else str(a) for a in argv or ()]
        if not argv:
            return
        search = (env or {}).get("PATH") if isinstance(env, dict) else None
        if search:
            for entry in search.split(":"):
                if entry and entry not in self.program_path:
                    self.program_path.append(entry)
        base = cwd.decode() if isinstance(cwd, bytes) else (cwd or os.getcwd())
        program = argv[0] if argv[0].startswith("/") or "/" not in argv[0] else os.path.join(str(base), argv[0])
        self.runs.append(("program", self.find(program, search or os.environ.get("PATH", ""))))
        for argument in argv[1:]:
            path = os.path.join(str(base), argument)
            if argument.endswith(CODE_SUFFIXES) and os.path.isfile(path):
                self.runs.append(("script", os.path.abspath(path)))

    @staticmethod
    def find(program, search):
        """Where a program name resolves on a PATH (the name itself when it has a slash or is not found)."""
        if "/" in program:
            return os.path.abspath(program)
        for entry in search.split(":"):
            candidate = os.path.join(entry or ".", program)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return program

    def writable(self):
        """(kind, path, set by) of everything the verifier relied on that the agent user could have written."""
        items = [("PATH entry", p, "image") for p in self.program_path]
        items += [("import path entry", p, "image" if p in self.base_path else "verifier") for p in self.import_path]
        items.append(("interpreter", self.find("python3", ":".join(self.program_path)), "image"))
        for name, module in sorted(sys.modules.items()):
            origin = getattr(module, "__file__", None)
            if isinstance(origin, str) and origin.startswith("/") and origin != sys.argv[0]:
                items.append(("module " + name, origin, "image"))
        items += [(kind, path, "verifier") for kind, path in self.runs if path.startswith("/")]
        seen, found = set(), []
        for kind, path, by in items:
            if path not in seen:
                seen.add(path)
                if agent_can_change(path):
                    found.append({"kind": kind, "path": path, "by": by})
        return found, len(seen)


def planted_marks():
    """[{what, where}] for every plant that ran."""
    found = []
    for name in sorted(os.listdir(MARKS)) if os.path.isdir(MARKS) else []:
        if name.startswith("planted-"):
            try:
                with open(os.path.join(MARKS, name)) as handle:
                    where = handle.read(300).strip()
            except OSError:
                where = ""
            kind, _, what = name[len("planted-"):].partition("-")
            found.append({"what": f"{kind} {what}".strip(), "where": where})
    return found


def main():
    """Run the verifier traced and report."""
    verifier = sys.argv[1]
    output = os.environ.get("ARENA_OUTPUT", "/arena/output/reward.json")
    os.environ["ARENA_OUTPUT"] = INNER_OUTPUT
    trace = Trace()
    sys.argv = [verifier]
    sys.addaudithook(trace.hook)
    status, problem = 0, ""
    try:
        runpy.run_path(verifier, run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the verifier's own crash is reported, not raised
        status, problem = 1, f"{type(exc).__name__}: {exc}"[:300]
    trace.active = False
    found, checked = trace.writable()
    planted = planted_marks()
    reward = 0.0
    try:
        with open(INNER_OUTPUT) as handle:
            value = json.load(handle).get("reward")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            reward = float(value)
    except (OSError, ValueError, AttributeError):
        pass
    steer = {"writable": found[:MAX_ITEMS], "checked": checked, "planted": planted[:MAX_ITEMS],
             "import_path": trace.import_path[:MAX_ITEMS], "program_path": trace.program_path[:MAX_ITEMS],
             "status": status, "problem": problem}
    with open(output, "w") as handle:
        json.dump({"reward": reward, "details": {"steer": steer}}, handle)


if __name__ == "__main__":
    main()
