"""The in-container half of sandbox.batch_verification (run as root with `python3 -I -S`; standard library only).

One container verifies several submissions on the same state. `save` (before an agent acts in a container kept for
verifications) packs the folders a verifier or agent may write (the workspace, the temporary folders, the homes) as
they are. The verifying steps then run the verifier's loader on FOLDER/request, as a verification container's first
process would: `first` (a fresh container) saves first; `reset` (each later verification) kills every process but
the container's own, checks that nothing outside those folders changed since the last step (exit 3 if it did: this
container is done), removes them, the verifier's and output folders, /dev/shm's files and the EXTRA paths (an agent's
own files under /arena), and unpacks them again exactly as saved (owners, modes, times, links); `kill` only kills
every process but the container's own (an agent's, to verify its final state where it is), and `stop` does only that,
verifying nothing. Saving and resetting then
unpack the submission, if one was sent, over /workspace (a file in its way is replaced, as the engine's own archive
upload replaces it) and mark the time. `reset-only` and `restore-only` put the state back and mark the time without
verifying: another trusted agent acts on the instance as made next.

    python3 -I -S batch_reset.py save|first|reset|restore|reset-only|restore-only|kill|stop FOLDER TIMEOUT [EXTRA...]

`restore` is `reset` where the host has checked the container's own layer for changes elsewhere instead.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tarfile

KEPT = ("workspace", "tmp", "var/tmp", "root", "home")
REMOVED = ("arena/verifier", "arena/output")
SKIPPED = ("/proc", "/sys", "/dev")
FOREIGN = 3  # reset's exit status when the last verification wrote outside what is put back
TIMED_OUT = "ARENA-BATCH timed-out"
EXTRA = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}


def parent(pid):
    """The parent of a process (0 when unknown or outside the container)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def kill_strays():
    """Kill every process but the container's init, its first child (the keep-alive) and this command's own chain."""
    mine, pid = set(), os.getpid()
    while pid > 0 and pid not in mine:
        mine.add(pid)
        pid = parent(pid)
    pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    keep_alive = next((p for p in pids if p != 1 and parent(p) == 1), None)
    for pid in pids:
        if pid != 1 and pid != keep_alive and pid not in mine:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def remove(path):
    """Remove a file, link or folder (gone already is fine)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def unpack_over(archive_path):
    """Unpack an archive at /, with its numeric owners; anything but a folder in a member's way goes first."""
    with tarfile.open(archive_path) as archive:
        for member in archive:
            target = "/" + member.name
            if os.path.lexists(target) and not (member.isdir() and os.path.isdir(target)):
                remove(target)
            archive.extract(member, "/", numeric_owner=True, **EXTRA)


def restored(folder, extra=()):
    """The paths reset puts back or removes (and this script's own folder)."""
    return {"/" + name for name in KEPT + REMOVED} | {folder, *extra}


def wrote_elsewhere(folder, extra):
    """What changed outside the restored paths since the marker (its status time, or a folder's entries for the
    folders that hold restored paths), /proc, /sys, /dev and the engine's mounts (/etc/hosts and the like, never part
    of a frozen state) aside; empty when nothing did."""
    since = os.lstat(os.path.join(folder, "marker")).st_ctime_ns
    skipped = restored(folder, extra) | set(SKIPPED)
    with open(os.path.join(folder, "parents")) as listing:
        if listing.read() != parents_listing(folder, extra):
            return "an entry of " + " ".join(sorted({os.path.dirname(p) for p in restored(folder, extra)}))
    root = os.lstat("/").st_dev
    for parent, folders, names in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(parent, f) not in skipped]
        for name in names:
            try:
                info = os.lstat(os.path.join(parent, name))
            except OSError:
                continue
            if info.st_ctime_ns >= since and info.st_dev == root:  # other file systems: the engine's own mounts
                return os.path.join(parent, name)
    return ""


def parents_listing(folder, extra):
    """The entries of every folder that holds a restored path (a deletion there changes nothing else)."""
    paths = restored(folder, extra)
    holders = sorted({os.path.dirname(path) for path in paths})
    return "\n".join(f"{holder}: {[e for e in sorted(os.listdir(holder)) if os.path.join(holder, e) not in paths]}"
                     for holder in holders if os.path.isdir(holder))


def save(pristine):
    """Pack the kept folders as they are."""
    with tarfile.open(pristine, "w") as archive:
        for name in KEPT:
            if os.path.lexists("/" + name):
                archive.add("/" + name, arcname=name)


def reset(folder, pristine, extra, checked):
    """Kill what is left, check nothing changed elsewhere (exit FOREIGN if it did; `checked`: the host did, in the
    container's own layer), put the kept folders back."""
    kill_strays()
    changed = "" if checked else wrote_elsewhere(folder, extra)
    if changed:
        sys.stderr.write(f"changed since the last step: {changed}\n")
        sys.exit(FOREIGN)
    for path in ["/" + name for name in KEPT + REMOVED] + extra:
        remove(path)
    for entry in os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []:
        remove(os.path.join("/dev/shm", entry))
    with tarfile.open(pristine) as archive:
        archive.extractall("/", numeric_owner=True, **EXTRA)


def verify(folder, timeout):
    """Run the verifier's loader on the request in FOLDER, as the container's first process would (stdin the request,
    this process's environment); print its stdout and the tail of its stderr, and a line if it ran out of time."""
    with open(os.path.join(folder, "request"), "rb") as request:
        loader = subprocess.Popen(["python3", "-I", "-S", os.path.join(folder, "verifier_loader.py")], stdin=request,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd="/")
    try:
        out, err = loader.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(loader.pid, signal.SIGKILL)
        out, err = loader.communicate()
        out += f"\n{TIMED_OUT}\n".encode()
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err[-8192:])


def main():
    """A step (save, first, reset, restore, kill, stop); all but save and stop run the loader last."""
    step, folder, timeout, extra = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    os.umask(0o077)
    os.chmod(folder, 0o700)  # the saved folders hold root's home: never the agent's to read
    pristine, submission = os.path.join(folder, "pristine.tar"), os.path.join(folder, "submission.tar")
    if step in ("stop", "kill"):
        kill_strays()
    else:
        if step in ("save", "first"):
            save(pristine)
        else:
            reset(folder, pristine, extra, checked=step.startswith("restore"))
        if os.path.exists(submission):
            unpack_over(submission)
            os.unlink(submission)
        with open(os.path.join(folder, "parents"), "w") as listing:
            listing.write(parents_listing(folder, extra))
        with open(os.path.join(folder, "marker"), "w"):
            pass
    if step not in ("save", "stop", "reset-only", "restore-only"):
        verify(folder, timeout)
        kill_strays()  # nothing the verifier left runs on until the next step


if __name__ == "__main__":
    main()
