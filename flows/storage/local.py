"""A warehouse in a local folder: the `Store` (flows/storage/store.py) of a path.

The pointer is the symlink `current`, replaced in one `rename` (atomic on POSIX); runs are
serialised by an exclusive `flock` on `.lock`; files being built are staged in `_staging/`, on
the same file system, so that putting them in place is a rename.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
import time
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

from flows.errors import UserError
from flows.storage.store import (
    LOCK,
    POINTER,
    STAGING,
    Conflict,
    Entry,
    StoreError,
    describe_os_error,
    safe_path,
    sha256_of,
)

if typing.TYPE_CHECKING:
    import duckdb

T = typing.TypeVar("T")


class LocalStore:
    """A warehouse in a local folder."""

    kind = "local"
    gc_grace_s = 0.0  # runs hold the lock: an unlisted file belongs to no run in flight

    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser().resolve()
        self.url = str(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({self.url})"

    # ------------------------------------------------------------------ paths
    def local(self, path: str) -> Path:
        """The file system path of a stored object (checked to stay inside the root)."""
        full = self.root / safe_path(path)
        # a symlink planted inside the warehouse must not lead out of it
        parent = full.parent.resolve()
        if parent != self.root and self.root not in parent.parents:
            raise ValueError(f"path leaves the warehouse: {path!r}")
        return full

    def uri(self, path: str) -> str:
        return str(self.local(path))

    @property
    def polars_options(self) -> dict | None:
        return None

    def exists(self) -> bool:
        return self.root.is_dir()

    def has(self, path: str) -> bool:
        return self.local(path).exists()

    def is_legacy(self) -> bool:
        """A warehouse of manifest format 1 (a plain `manifest.json` at the root)."""
        legacy = self.root / "manifest.json"
        return legacy.is_file() and not legacy.is_symlink()

    # ------------------------------------------------------------------ DuckDB
    def view_path(self, path: str) -> str:
        """How a views database names a stored file: its absolute path, so the database
        answers in any client from any folder (`duplirank relink` after a move)."""
        return str(self.root / safe_path(path))

    def readable_paths(self, path: str) -> list[str]:
        """Every spelling of a stored file a confined DuckDB connection must be allowed (the
        relative one: views databases of an older duplirank)."""
        return [safe_path(path), str(self.root / path)]

    def prepare_duckdb(self, con: duckdb.DuckDBPyConnection) -> None:
        """Make a DuckDB connection able to read the warehouse's files as the views name them:
        absolute paths need nothing; the relative paths of an older views database are found
        through `file_search_path` (which cannot hold a comma)."""
        if "," not in str(self.root):
            con.execute("set file_search_path = $root", {"root": str(self.root)})

    def fetch(self, path: str) -> Path:
        """A local file holding the stored object (here: the object itself)."""
        return self.local(path)

    def forget_fetched(self, path: str) -> None:
        """Drop the local copy `fetch` keeps of a stored object rewritten in place (none here)."""

    # ------------------------------------------------------------------ checksums
    def sha256(self, path: str) -> str:
        """The sha256 of a stored file's bytes (FileNotFoundError if it is missing)."""
        return sha256_of(self.local(path))

    def check(self, path: str, sha256: str, size: int, deep: bool = False) -> str | None:
        """None if the stored file has these bytes, else `missing` or `damaged`."""
        try:
            local = self.local(path)
            if local.stat().st_size != size:
                return "damaged"
            return None if sha256_of(local) == sha256 else "damaged"
        except FileNotFoundError:
            return "missing"

    # ------------------------------------------------------------------ reading
    def read_bytes(self, path: str) -> bytes:
        return self.local(path).read_bytes()

    def open(self, path: str) -> typing.IO[bytes]:
        return open(self.local(path), "rb")

    def list(self, prefix: str) -> Iterator[Entry]:
        """Regular files under a folder (symlinks are not followed)."""
        base = self.local(prefix) if prefix else self.root
        if not base.is_dir():
            return
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
            for name in files:
                full = os.path.join(folder, name)
                st = os.lstat(full)
                if not os.path.isfile(full) or os.path.islink(full):
                    continue
                yield Entry(os.path.relpath(full, self.root), st.st_size, st.st_mtime)

    def folders(self, prefix: str) -> list[str]:
        base = self.local(prefix)
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink())

    # ------------------------------------------------------------------ writing
    def staging(self) -> Path:
        """A private folder for files being built (same file system as the root, so that
        `publish_file` is a rename)."""
        base = self.root / STAGING
        self.guarded(lambda: base.mkdir(parents=True, exist_ok=True), "create a folder")
        return Path(self.guarded(lambda: tempfile.mkdtemp(dir=base), "create a folder"))

    def publish_file(
        self, path: str, source: Path, read_only: bool = True, sha256: str | None = None
    ) -> None:
        """Move a finished file into place under `path` (never overwrites: names are new)."""
        target = self.local(path)

        def move() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            if read_only:
                os.chmod(source, 0o444)
            os.replace(source, target)

        self.guarded(move, f"write {path}")

    def write_bytes(self, path: str, data: bytes, read_only: bool = True) -> None:
        """Write a new object atomically (a temp file renamed into place)."""
        target = self.local(path)

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                if read_only:
                    os.chmod(tmp, 0o444)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise

        self.guarded(write, f"write {path}")

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.local(path).unlink()

    def delete_tree(self, path: str) -> None:
        shutil.rmtree(self.local(path), ignore_errors=True)

    def prune_empty_folders(self, prefix: str) -> None:
        base = self.local(prefix)
        if not base.is_dir():
            return
        for folder, _, _ in sorted(os.walk(base), key=lambda w: -len(w[0])):
            if folder != str(base):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)  # only succeeds when empty

    def in_flight(self, prefix: str) -> bool:
        """Whether the files under `prefix` may be a run's in progress elsewhere: never here
        (runs hold the lock)."""
        return False

    # ------------------------------------------------------------------ pointer
    def read_pointer(self) -> str | None:
        """The current publication folder (`_publications/…`), or None.

        A copy made by a tool that follows symlinks (Python's `copytree`, `rsync -rL`) holds
        `current` as a real folder with the publication inside: it is read as it is, and the
        next publication puts a symlink back."""
        link = self.root / POINTER
        if link.is_symlink():
            return os.readlink(link)
        if link.is_dir():
            return POINTER
        return None

    def swap_pointer(self, target: str, expected: str | None) -> None:
        """Point `current` at `target` in one rename, if it still points at `expected`.

        Runs on a local folder hold the lock, so the check is a safeguard, not the protocol."""
        safe_path(target)
        if self.read_pointer() != expected:
            raise Conflict(
                f"warehouse {self.url} was published by another run while this one ran; "
                "nothing of this run was published: run it again"
            )
        tmp = self.root / f".{POINTER}.{os.getpid()}.tmp"

        def swap() -> None:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.symlink(target, tmp)
            copied = self.root / POINTER
            if copied.is_dir() and not copied.is_symlink():  # a dereferenced copy (above)
                aside = self.root / f".{POINTER}.{os.getpid()}.old"
                os.rename(copied, aside)
                os.replace(tmp, copied)
                shutil.rmtree(aside, ignore_errors=True)
            else:
                os.replace(tmp, self.root / POINTER)
            _fsync_dir(self.root)

        self.guarded(swap, "publish")

    def ensure_link(self, name: str, target: str) -> None:
        """A convenience symlink at the root (e.g. `duplirank.duckdb -> current/…`)."""
        link = self.root / name
        if link.is_symlink() and os.readlink(link) == target:
            return
        tmp = self.root / f".{name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        self.guarded(lambda: (os.symlink(target, tmp), os.replace(tmp, link)), f"link {name}")

    # ------------------------------------------------------------------ locking
    @contextlib.contextmanager
    def lock(self, wait_s: float) -> Iterator[None]:
        """One writer at a time: an exclusive `flock`; a second run waits `wait_s` seconds."""
        self.guarded(lambda: self.root.mkdir(parents=True, exist_ok=True), "create the warehouse")
        handle = self.guarded(lambda: open(self.root / LOCK, "a+"), "lock the warehouse")
        with handle:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        handle.seek(0)
                        holder = handle.read().strip() or "another process"
                        raise UserError(
                            f"warehouse {self.url} is locked by a running job ({holder}); "
                            "try again when it has finished"
                        ) from None
                    time.sleep(0.2)
            with contextlib.suppress(OSError):
                handle.seek(0)
                handle.truncate()
                handle.write(f"pid {os.getpid()}")
                handle.flush()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ faults
    def guarded(self, action: Callable[[], T], what: str) -> T:
        """`action()`, a full disk, a read-only file system or a refused permission raised as
        one line (StoreError)."""
        try:
            return action()
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreError(f"warehouse {self.url}: {describe_os_error(err, what)}") from err
            raise


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def process_running(pid: int) -> bool:
    """Whether process `pid` is running (another user's counts as running): a folder a process
    left is removed only once that process is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True
