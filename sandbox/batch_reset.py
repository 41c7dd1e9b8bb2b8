"""The in-container half of sandbox.batch_verification (run as root with `python3 -I -S`; standard library only).

One container verifies several submissions on the same frozen state. Before the first verification `save` packs the
folders a verifier may write (the workspace, the temporary folders, root's home) as they are; before each later one
`reset` kills every process but the container's own, checks that the last verification wrote nothing anywhere else
(exit 3 if it did: that container is done), removes those folders and the verifier's and output folders, and unpacks
them again exactly as saved (owners, modes, times, links). Either then unpacks the submission, if one was sent, over
/workspace (a file in its way is replaced, as the engine's own archive upload replaces it) and marks the time the next
verification starts.

    python3 -I -S batch_reset.py save|reset FOLDER
"""

import contextlib
import os
import shutil
import signal
import sys
import tarfile

KEPT = ("workspace", "tmp", "var/tmp", "root")
REMOVED = ("arena/verifier", "arena/output")
SKIPPED = ("/proc", "/sys", "/dev")
FOREIGN = 3  # reset's exit status when the last verification wrote outside what is put back
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


def restored(folder):
    """The paths reset puts back or removes (and this script's own folder)."""
    return {"/" + name for name in KEPT + REMOVED} | {folder}


def wrote_elsewhere(folder):
    """Whether anything outside the restored paths changed since the marker (its status time, or a folder's entries
    for the folders that hold restored paths), /proc, /sys and /dev aside."""
    since = os.lstat(os.path.join(folder, "marker")).st_ctime_ns
    skipped = restored(folder) | set(SKIPPED)
    with open(os.path.join(folder, "parents")) as listing:
        if listing.read() != parents_listing(folder):
            return True
    for parent, folders, names in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(parent, f) not in skipped]
        for name in names:
            try:
                if os.lstat(os.path.join(parent, name)).st_ctime_ns >= since:
                    return True
            except OSError:
                pass
    return False


def parents_listing(folder):
    """The entries of every folder that holds a restored path (a deletion there changes nothing else)."""
    paths = restored(folder)
    holders = sorted({os.path.dirname(path) for path in paths})
    return "\n".join(f"{holder}: {[e for e in sorted(os.listdir(holder)) if os.path.join(holder, e) not in paths]}"
                     for holder in holders if os.path.isdir(holder))


def main():
    """save or reset, then the submission and the marker."""
    step, folder = sys.argv[1], sys.argv[2]
    pristine, submission = os.path.join(folder, "pristine.tar"), os.path.join(folder, "submission.tar")
    if step == "save":
        with tarfile.open(pristine, "w") as archive:
            for name in KEPT:
                if os.path.lexists("/" + name):
                    archive.add("/" + name, arcname=name)
    else:
        kill_strays()
        if wrote_elsewhere(folder):
            sys.exit(FOREIGN)
        for name in KEPT + REMOVED:
            remove("/" + name)
        for entry in os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []:
            remove(os.path.join("/dev/shm", entry))
        with tarfile.open(pristine) as archive:
            archive.extractall("/", numeric_owner=True, **EXTRA)
    if os.path.exists(submission):
        unpack_over(submission)
        os.unlink(submission)
    with open(os.path.join(folder, "parents"), "w") as listing:
        listing.write(parents_listing(folder))
    with open(os.path.join(folder, "marker"), "w"):
        pass


if __name__ == "__main__":
    main()
