"""A FUSE filesystem with the write rules of an object-store mount (S3/GCS/R2 through FUSE): a file is written once,
from its start to its end, or replaced whole; nothing is appended, written in the middle or renamed as a folder.

    python -m tests.support.object_store_fs BACKING MOUNTPOINT REFUSALS_LOG

Every call it refuses is appended to REFUSALS_LOG (`operation path`) so a test can say what was refused. Files are
kept in BACKING. Rules, as object-store mounts enforce them:
- write only to a new or emptied file (O_TRUNC empties it); O_APPEND, or writing to a file that still holds
  bytes, is refused;
- a write only at the file's current end (sequential upload);
- truncate only to zero (a whole replacement);
- rename a file, or an empty folder; a folder with anything in it is refused (its objects would each be copied).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import fuse


class ObjectStoreFS(fuse.Operations):
    """Passthrough to a backing folder under object-store write rules."""

    def __init__(self, backing: str, refusals: str) -> None:
        self.backing, self.refusals = backing, refusals
        self.open_files: dict[int, tuple[str, bool]] = {}  # handle -> (path, emptied: may be written)

    def _path(self, path: str) -> str:
        return os.path.join(self.backing, path.lstrip("/"))

    def _refuse(self, operation: str, path: str) -> fuse.FuseOSError:
        with open(self.refusals, "a", encoding="utf-8") as log:
            log.write(f"{operation} {path}\n")
        return fuse.FuseOSError(errno.EOPNOTSUPP)

    def getattr(self, path: str, fh: int | None = None) -> dict:
        st = os.lstat(self._path(path))
        return {key: getattr(st, key) for key in ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
                                                  "st_nlink", "st_size", "st_uid")}

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._path(path))]

    def mkdir(self, path: str, mode: int) -> None:
        os.mkdir(self._path(path), mode)

    def rmdir(self, path: str) -> None:
        os.rmdir(self._path(path))

    def unlink(self, path: str) -> None:
        os.unlink(self._path(path))

    def chmod(self, path: str, mode: int) -> None:
        os.chmod(self._path(path), mode)

    def utimens(self, path: str, times: tuple | None = None) -> None:
        os.utime(self._path(path), times)

    def statfs(self, path: str) -> dict:
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                                                  "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def rename(self, old: str, new: str) -> None:
        source = self._path(old)
        if os.path.isdir(source) and os.listdir(source):
            raise self._refuse("rename-folder", old)
        os.rename(source, self._path(new))

    def create(self, path: str, mode: int, fi: object = None) -> int:
        fh = os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        self.open_files[fh] = (path, True)
        return fh

    def open(self, path: str, flags: int) -> int:
        if flags & os.O_APPEND:
            raise self._refuse("append", path)
        fh = os.open(self._path(path), flags)
        self.open_files[fh] = (path, os.fstat(fh).st_size == 0)  # the kernel truncates after opening (O_TRUNC)
        return fh

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        if not self.open_files.get(fh, (path, False))[1]:
            raise self._refuse("rewrite", path)  # an object is replaced whole, never added to or patched
        if offset != os.fstat(fh).st_size:
            raise self._refuse("write-at-offset", path)
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> None:
        if length != 0:
            raise self._refuse("truncate", path)
        os.truncate(self._path(path), 0)
        for handle, (name, _) in list(self.open_files.items()):
            if name == path:
                self.open_files[handle] = (name, True)

    def flush(self, path: str, fh: int) -> None:
        return None

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        os.fsync(fh)

    def release(self, path: str, fh: int) -> None:
        self.open_files.pop(fh, None)
        os.close(fh)


def main(argv: list[str]) -> None:
    backing, mountpoint, refusals = argv
    Path(refusals).touch()
    fuse.FUSE(ObjectStoreFS(backing, refusals), mountpoint, foreground=True, nothreads=True, default_permissions=True)


if __name__ == "__main__":
    main(sys.argv[1:])
