"""Where a warehouse's bytes live: a local folder (`LocalStore`) or an S3-compatible object
store (`S3Store`, flows/storage/s3.py), behind one interface chosen from the location by
`open_store`. Every read and write of the warehouse goes through a store; nothing else builds
paths.

Paths inside a store are relative, `/`-separated, and checked by `safe_path`: no absolute
path, no `..`, no empty segment — so no path read from metadata can point outside the root.

The *pointer* names the current publication (`warehouse.py`). On a local folder it is the
symlink `current`, replaced in one `rename` (atomic on POSIX), and runs are serialised by an
exclusive `flock` on `.lock`. On object storage it is the object `current.json`, replaced by a
conditional PUT (flows/storage/s3.py).
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flows.errors import UserError

if typing.TYPE_CHECKING:
    import duckdb

    from flows.storage.options import StorageOptions

POINTER = "current"
LOCK = ".lock"
STAGING = "_staging"


class StoreError(UserError):
    """A fault of the storage itself (full disk, read-only, permission): one line, rc 2."""


class Conflict(UserError):
    """Another run published while this one was running."""


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the root
    size: int
    mtime: float  # seconds since the epoch


def safe_path(path: str) -> str:
    """`path` if it is a plain relative path inside the root, else ValueError."""
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        raise ValueError(f"not a relative path: {path!r}")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\x00" in path:
        raise ValueError(f"path leaves the warehouse: {path!r}")
    return path


def is_url(location: object) -> bool:
    """True for a location given as a URL (`s3://bucket/prefix`), False for a local path."""
    return isinstance(location, str) and "://" in location


_DEFAULT_OPTIONS: list = [None]  # the storage settings of this process (`configure`)


def configure(options: StorageOptions | None) -> None:
    """The storage settings used when a caller gives none (`load_settings` sets them: one
    process, one set of settings), so every reader of a `s3://` location gets the same."""
    _DEFAULT_OPTIONS[0] = options


def open_store(location: Path | str, options: StorageOptions | None = None):
    """The store of a warehouse location: a local folder, or `s3://bucket/prefix` (any
    S3-compatible store; endpoint and credentials from `options`, else the `AWS_*` variables)."""
    if not is_url(location):
        return LocalStore(location)
    scheme = str(location).split("://", 1)[0].lower()
    if scheme in ("s3", "s3a"):
        from flows.storage.s3 import S3Store

        return S3Store(str(location), options or _DEFAULT_OPTIONS[0])
    raise UserError(
        f"warehouse {location}: unsupported location (a local folder or s3://bucket/prefix)"
    )


def describe_os_error(err: OSError, what: str) -> str:
    """One line for a storage fault a user can act on."""
    reasons = {
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
    }
    reason = reasons.get(err.errno, err.strerror or str(err))
    return f"cannot {what}: {reason}"


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
        self._guard(lambda: base.mkdir(parents=True, exist_ok=True), "create a folder")
        return Path(self._guard(lambda: tempfile.mkdtemp(dir=base), "create a folder"))

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

        self._guard(move, f"write {path}")

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

        self._guard(write, f"write {path}")

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

        self._guard(swap, "publish")

    def ensure_link(self, name: str, target: str) -> None:
        """A convenience symlink at the root (e.g. `duplirank.duckdb -> current/…`)."""
        link = self.root / name
        if link.is_symlink() and os.readlink(link) == target:
            return
        tmp = self.root / f".{name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        self._guard(lambda: (os.symlink(target, tmp), os.replace(tmp, link)), f"link {name}")

    # ------------------------------------------------------------------ locking
    @contextlib.contextmanager
    def lock(self, wait_s: float) -> Iterator[None]:
        """One writer at a time: an exclusive `flock`; a second run waits `wait_s` seconds."""
        self._guard(lambda: self.root.mkdir(parents=True, exist_ok=True), "create the warehouse")
        handle = self._guard(lambda: open(self.root / LOCK, "a+"), "lock the warehouse")
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
    def _guard(self, action, what: str):
        try:
            return action()
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreError(f"warehouse {self.url}: {describe_os_error(err, what)}") from err
            raise


def sha256_of(path: Path) -> str:
    """The sha256 of a local file, read in blocks of 4 MiB."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
