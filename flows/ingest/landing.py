"""Open what the landing holds: a local file once, by a descriptor checked against what the
listing saw (`open_landing`: no link followed, no FIFO or device read, no other file swapped
in), or an object of an `s3://` landing (`RemoteFile`, streamed from its store). `Input` is one
entry of the listing and how to open it (flows/ingest/listing.py lists them)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from flows.ingest.names import file_text
from flows.storage.store import Store


class RemoteFile:
    """An object of an `s3://` landing, with the few `Path` methods the ingest uses."""

    def __init__(self, store: Store, path: str, size: int, mtime: float):
        self.store, self.key, self.size = store, path, size
        self.mtime_ns = int(mtime * 1e9)
        self.name = path.rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return self.store.uri(self.key)

    __repr__ = __str__

    @property
    def suffixes(self) -> list[str]:
        return Path(self.name).suffixes

    def stat(self) -> _Stat:
        return _Stat(self.size, self.mtime_ns)

    def open(self, mode: str = "rb") -> IO[bytes]:
        if mode != "rb":
            raise ValueError(f"{self}: a landing object is only read (mode 'rb', not {mode!r})")
        return self.store.open(self.key)

    def read_bytes(self) -> bytes:
        return self.store.read_bytes(self.key)


@dataclass(frozen=True)
class _Stat:
    st_size: int
    st_mtime_ns: int


def open_input(path: Path | RemoteFile | LandingFile):
    """A binary file object of an input (local, opened landing file, or remote)."""
    return path.open("rb") if not isinstance(path, Path) else open(path, "rb")


OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
FOLDER_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class Landing:
    """A folder files are opened from (relative to its descriptor, opened once)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.fd: int | None = None

    def dir_fd(self) -> int:
        if self.fd is None:
            self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    __del__ = close


class Changed(Exception):
    """A landing entry that is not the file listed when it is opened (never read)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.status = f"error: changed after the listing ({what}); not read"


class LandingFile:
    """A landing file opened once (links not followed, not blocking) and checked on its
    descriptor; every read of it goes through that descriptor, at its own offset."""

    def __init__(self, fd: int, stat: os.stat_result):
        self.fd, self.stat = fd, stat

    def open(self, mode: str = "rb") -> _Reader:
        return _Reader(self.fd)

    def read_bytes(self) -> bytes:
        with self.open() as handle:
            return handle.read()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class _Reader:
    """A file object over a shared descriptor, reading from its own offset (`pread`)."""

    def __init__(self, fd: int):
        self.fd, self.at = fd, 0

    def readinto(self, view) -> int:
        read = os.preadv(self.fd, [view], self.at)
        self.at += read
        return read

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            parts = []
            while part := self.read(1 << 24):
                parts.append(part)
            return b"".join(parts)
        data = os.pread(self.fd, size, self.at)
        self.at += len(data)
        return data

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        pass


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink"))  # fmt: skip


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_landing(item: Input) -> LandingFile:
    """Open a listed local file once: relative to its landing folder's descriptor, no link
    followed on the way (`O_NOFOLLOW` on every part), without blocking (a FIFO or device
    swapped in opens at once), then checked on the descriptor: a regular file, the device
    and inode listed. Raises `Changed` (its `status`) or the `OSError` of the open."""
    at = item.landing.dir_fd()
    folders = []
    try:
        for part in item.parts[:-1]:
            try:
                at = os.open(part, FOLDER_FLAGS, dir_fd=at)
            except NotADirectoryError:  # a link (never followed) or a file now
                seen = os.stat(part, dir_fd=at, follow_symlinks=False)
                raise Changed(
                    "a symlink now"
                    if stat.S_ISLNK(seen.st_mode)
                    else "a folder on its way is not one now"
                ) from None
            folders.append(at)
        fd = os.open(item.parts[-1], OPEN_FLAGS, dir_fd=at)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Changed("a symlink now") from None
        if err.errno == errno.ENOTDIR:
            raise Changed("a folder on its way is not one now") from None
        raise
    finally:
        for folder in folders:
            os.close(folder)
    found = os.fstat(fd)
    listed = item.stat
    problem = None
    if not stat.S_ISREG(found.st_mode):
        problem = _kind(found.st_mode) + " now"
    elif (found.st_dev, found.st_ino) != (listed.st_dev, listed.st_ino):
        problem = "another file now"
    if problem is not None:
        os.close(fd)
        raise Changed(problem)
    return LandingFile(fd, found)


@dataclass
class Input:
    """A file found in the given paths; `skip` is its log status when it is not read.

    A local file has the landing folder it is opened from (`landing`), its path there
    (`parts`: a symlink inside the folder is opened as its target), and what the listing
    saw of it (`stat`: links not followed for one not read; its target's for a link)."""

    path: Path | RemoteFile
    skip: str | None = None
    stat: os.stat_result | None = None
    landing: Landing | None = None
    parts: tuple[str, ...] = ()
    opened: LandingFile | None = None

    @property
    def file(self) -> str:
        return file_text(self.path)

    def open(self) -> LandingFile | RemoteFile:
        """The file to read (opened once, kept until `close`)."""
        if isinstance(self.path, RemoteFile):
            return self.path
        if self.opened is None:
            self.opened = open_landing(self)
        return self.opened

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
            self.opened = None
