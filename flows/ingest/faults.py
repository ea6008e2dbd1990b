"""Resource failures of an ingest run: one line for the user, whichever library met them.

A full disk, an exhausted quota or memory, a read-only or permission-denied folder reach the
ingest as an `OSError` (Python), a Polars `ComputeError` naming `(os error 28)`, a DuckDB
`IOException` or `OutOfMemoryException`, a `MemoryError`; a thread that cannot be started
(memory, or the limit on processes, ran out) as a `RuntimeError` or a Rust panic (pyo3's
`PanicException`, which is no `Exception`). `resource_reason` says what ran out;
`resource_failure` names it in one line (the run then stops with exit code 2 and removes what
it staged); any other error is left as it is. A landing file that cannot be read (permission
denied on it, an I/O error) is no resource failure: it is a status of that file
(`flows.ingest.run`).
"""

from __future__ import annotations

import contextlib
import errno
import re
from collections.abc import Iterator

from flows.errors import UserError

RESOURCE_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENOMEM: "out of memory",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}
# errors of the run's own resources, never of one delivery: raised through a file's reading
RUN_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM, errno.EROFS)
_OS_ERROR = re.compile(r"\(os error (\d+)\)|errno[ =:]*(\d+)", re.IGNORECASE)
THREADS = "no thread could be started (out of memory, or of processes)"
_THREAD_WORDS = ("can't start new thread", "could not spawn thread", "failed to spawn thread")
_WORDS = (
    ("no space left on device", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT),
    ("read-only file system", errno.EROFS),
    ("permission denied", errno.EACCES),
    ("out of memory", errno.ENOMEM),
    ("cannot allocate memory", errno.ENOMEM),
    ("memory allocation", errno.ENOMEM),
)


class ResourceError(UserError):
    """The ingest ran out of a resource (disk, memory) or was refused access: one line."""


def resource_errno(err: BaseException) -> int | None:
    """The errno of a resource failure (any library's way of saying it), else None."""
    if isinstance(err, MemoryError) or type(err).__name__ in (
        "ArrowMemoryError",
        "OutOfMemoryException",
    ):
        return errno.ENOMEM
    if isinstance(err, OSError) and err.errno in RESOURCE_ERRNOS:
        return err.errno
    if isinstance(err, (OSError, UserError)):  # an OSError of another kind; already a line
        return None
    text = str(err)
    for match in _OS_ERROR.finditer(text):
        code = int(match.group(1) or match.group(2))
        if code in RESOURCE_ERRNOS:
            return code
    lowered = text.lower()
    module = type(err).__module__ or ""
    if module.startswith(("polars", "duckdb", "pyarrow", "_duckdb", "pyo3_runtime")):
        for words, code in _WORDS:
            if words in lowered:
                return code
    return None


def is_panic(err: BaseException) -> bool:
    """A Rust panic raised through pyo3 (a `BaseException`, not an `Exception`)."""
    return type(err).__name__ == "PanicException"


def resource_reason(err: BaseException) -> str | None:
    """What ran out, in a few words (with the file, if any), for a resource failure; None for
    any other error."""
    code = resource_errno(err)
    if code is not None:
        where = f" ({err.filename})" if isinstance(err, OSError) and err.filename else ""
        return RESOURCE_ERRNOS[code] + where
    if isinstance(err, RuntimeError) or is_panic(err):
        lowered = str(err).lower()
        if any(words in lowered for words in _THREAD_WORDS):
            return THREADS
    return None


def resource_failure(err: BaseException) -> ResourceError | None:
    """The one-line error of a resource failure, or None for any other error."""
    reason = resource_reason(err)
    if reason is None:
        return None
    return ResourceError(
        f"ingest stopped: {reason}; nothing published, the files it staged removed: run "
        "again once fixed"
    )


@contextlib.contextmanager
def one_line_resource_failures() -> Iterator[None]:
    """A resource failure inside becomes its one-line `ResourceError`; other errors pass."""
    try:
        yield
    except BaseException as err:
        if not isinstance(err, Exception) and not is_panic(err):
            raise
        failure = resource_failure(err)
        if failure is None:
            raise
        raise failure from err
