"""Where a warehouse's bytes live: the `Store` interface, and what every store shares.

Two stores implement `Store`: a local folder (`LocalStore`, flows/storage/local.py) and an
S3-compatible object store (`S3Store`, flows/storage/s3.py); `open_store`
(flows/storage/locations.py) picks one from a warehouse's location. Every read and write of
the warehouse goes through a store; nothing else builds paths. A store whose files are not on
this machine also offers `Mirror` (a local folder copied to it object by object, e.g. the
results site): a capability of its own, not part of `Store`, because a local folder has
nothing to mirror (the site is built in place).

Paths inside a store are relative, `/`-separated, and checked by `safe_path`: no absolute
path, no `..`, no empty segment — so no path read from metadata can point outside the root.

The *pointer* names the current publication (flows/storage/published.py). On a local folder
it is the symlink `current`, replaced in one `rename` (atomic on POSIX), and runs are
serialised by an exclusive `flock` on `.lock`. On object storage it is the object
`current.json`, replaced by a conditional PUT (flows/storage/s3.py).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, Protocol, TypeVar, runtime_checkable

from flows.errors import UserError

if TYPE_CHECKING:
    import duckdb

POINTER = "current"
LOCK = ".lock"
STAGING = "_staging"

T = TypeVar("T")


class StoreError(UserError):
    """A fault of the storage itself (full disk, read-only, permission): one line, rc 2."""


class Conflict(UserError):
    """Another run published while this one was running."""


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the root
    size: int
    mtime: float  # seconds since the epoch


@runtime_checkable
class Store(Protocol):
    """What the warehouse and its readers call on a store (local folder or object storage)."""

    kind: Literal["local", "s3"]
    url: str  # the warehouse's location as the user names it
    root: Path | None  # the local folder; None on object storage
    gc_grace_s: float  # an unlisted file younger than this may be a run's in flight

    # ------------------------------------------------------------------ paths
    def uri(self, path: str) -> str:
        """What Polars and DuckDB read a stored file by (a file path or an `s3://` URI)."""
        ...

    @property
    def polars_options(self) -> dict | None:
        """`storage_options` for Polars' readers (None: a local file needs none)."""
        ...

    def exists(self) -> bool: ...

    def has(self, path: str) -> bool: ...

    def is_legacy(self) -> bool:
        """A warehouse of manifest format 1 (a plain `manifest.json` at the root)."""
        ...

    # ------------------------------------------------------------------ DuckDB
    def view_path(self, path: str) -> str:
        """How a views database names a stored file."""
        ...

    def readable_paths(self, path: str) -> list[str]:
        """Every spelling of a stored file a confined DuckDB connection must be allowed."""
        ...

    def prepare_duckdb(self, con: duckdb.DuckDBPyConnection) -> None:
        """Make a DuckDB connection able to read the files as the views name them."""
        ...

    def fetch(self, path: str) -> Path:
        """A local file holding the stored object."""
        ...

    def forget_fetched(self, path: str) -> None:
        """Drop the local copy `fetch` keeps of a stored object rewritten in place."""
        ...

    # ------------------------------------------------------------------ checksums
    def check(self, path: str, sha256: str, size: int, deep: bool = False) -> str | None:
        """None if the stored file has these bytes, else `missing` or `damaged`."""
        ...

    # ------------------------------------------------------------------ reading
    def read_bytes(self, path: str) -> bytes: ...

    def open(self, path: str) -> IO[bytes]:
        """A binary file object reading a stored object from its start (read in blocks)."""
        ...

    def list(self, prefix: str) -> Iterator[Entry]:
        """Every file under a folder, with its size and time of last modification."""
        ...

    def folders(self, prefix: str) -> list[str]:
        """The names of the folders right under `prefix`, sorted."""
        ...

    # ------------------------------------------------------------------ writing
    def staging(self) -> Path:
        """A private local folder for files being built (moved in by `publish_file`)."""
        ...

    def publish_file(
        self, path: str, source: Path, read_only: bool = True, sha256: str | None = None
    ) -> None:
        """Move a finished local file into place under `path` (names are new)."""
        ...

    def write_bytes(self, path: str, data: bytes, read_only: bool = True) -> None:
        """Write a new object atomically."""
        ...

    def delete(self, path: str) -> None: ...

    def delete_tree(self, path: str) -> None: ...

    def prune_empty_folders(self, prefix: str) -> None: ...

    def in_flight(self, prefix: str) -> bool:
        """Whether the files under `prefix` may be a run's in progress elsewhere."""
        ...

    def guarded(self, action: Callable[[], T], what: str) -> T:
        """`action()` (a write to this store or to its staging folder), its storage faults
        (full disk, permission, unreachable endpoint) raised as one line: StoreError."""
        ...

    # ------------------------------------------------------------------ pointer
    def read_pointer(self) -> str | None:
        """The current publication folder (`_publications/…`), or None."""
        ...

    def swap_pointer(self, target: str, expected: str | None) -> None:
        """Point at `target` if the pointer still is `expected`, else Conflict."""
        ...

    def ensure_link(self, name: str, target: str) -> None:
        """A convenience link at the root (none on object storage)."""
        ...

    # ------------------------------------------------------------------ locking
    def lock(self, wait_s: float) -> contextlib.AbstractContextManager[None]:
        """One writer at a time, where the store can lock (object storage relies on the
        conditional swap of the pointer instead)."""
        ...


@runtime_checkable
class Mirror(Protocol):
    """A store whose files are not on this machine: a folder built locally (in a cache folder
    kept between runs) is copied to it object by object. `S3Store` has it; `LocalStore` has
    not (what it would mirror is built in place)."""

    def cache_folder(self, name: str) -> Path:
        """A local folder of this machine for this warehouse (kept between runs)."""
        ...

    def mirror(self, local: Path, prefix: str, index: str = "_pages.json") -> tuple[int, int]:
        """Make the objects under `prefix` the files of `local`; returns (uploaded, deleted)."""
        ...


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


def sha256_of(path: Path) -> str:
    """The sha256 of a local file, read in blocks of 4 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()
