"""Where a run's log goes: one file per run under the user's state folder, never the terminal.

**Decision**: logs live in `$DUPLIRANK_LOG_DIR`, by default `$XDG_STATE_HOME/duplirank/logs`
(`~/.local/state/duplirank/logs`): not in the install folder (which may be read-only or shared
by several warehouses) and not in the warehouse (which may be object storage, and a failing
command must create nothing there). Prefect's state (`PREFECT_HOME`) sits beside them
(`flows/prefect_env.py`). A run's file is named `<command>-<UTC time>-<pid>.log`; files older
than `KEEP_DAYS` days are deleted when a new run starts.

`capture(path)` sends every log record of the process (Prefect's flow and task runs, its
temporary server, our own `duplirank` logger) to that file at INFO and above; the terminal
keeps only the progress (`flows/progress.py`) and one line per error.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime
from pathlib import Path

KEEP_DAYS = 90
FORMAT = "%(asctime)s.%(msecs)03d | %(levelname)-7s | %(where)s - %(message)s"

logger = logging.getLogger("duplirank")


def state_dir() -> Path:
    """`$XDG_STATE_HOME/duplirank` (XDG base directories; `~/.local/state/duplirank`)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "duplirank"


def log_dir() -> Path:
    return Path(os.environ.get("DUPLIRANK_LOG_DIR") or state_dir() / "logs")


def new_log_path(command: str, folder: Path | None = None) -> Path:
    """A fresh file name for one run of `command` (the folder is created, old logs pruned)."""
    folder = Path(folder or log_dir())
    folder.mkdir(parents=True, exist_ok=True)
    prune(folder)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return folder / f"{command}-{stamp}-{os.getpid()}.log"


def prune(folder: Path, keep_days: int = KEEP_DAYS) -> None:
    cutoff = time.time() - keep_days * 86400
    for path in folder.glob("*.log"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:  # another run pruned it first, or no permission: not our business
            pass


class _Formatter(logging.Formatter):
    """Names the flow or task run of a record (Prefect's run loggers add it), else the logger."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        task, flow = getattr(record, "task_run_name", None), getattr(record, "flow_run_name", None)
        if task:
            record.where = f"Task run {task!r}"
        elif flow:
            record.where = f"Flow run {flow!r}"
        else:
            record.where = record.name
        return super().formatMessage(record)


class _Capture:
    """The handlers and levels `capture` replaced, to put back on `release`."""

    def __init__(self, handler: logging.Handler):
        self.handler = handler
        self.saved: list[tuple[logging.Logger, list[logging.Handler], int]] = []


_current: _Capture | None = None

# loggers Prefect gives a terminal handler of their own (prefect/logging/logging.yml)
_OWN_HANDLERS = ("uvicorn", "fastapi", "prefect._internal")


def capture(path: Path) -> Path:
    """Send the process's logs to `path` (appended) instead of the terminal; returns `path`.

    Call after `prefect` is imported (its import configures logging). The root logger and the
    loggers Prefect gives a handler of their own write to the file only; Prefect's API handler
    (logs shown in the Prefect UI) is kept.
    """
    global _current
    release()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_Formatter(FORMAT, "%Y-%m-%d %H:%M:%S"))
    state = _Capture(handler)
    for name in ("", *_OWN_HANDLERS):
        log = logging.getLogger(name)
        state.saved.append((log, list(log.handlers), log.level))
        for old in list(log.handlers):
            if isinstance(old, logging.StreamHandler) and not isinstance(old, logging.FileHandler):
                log.removeHandler(old)
        log.addHandler(handler)
    for name in ("prefect", "duplirank"):
        log = logging.getLogger(name)
        state.saved.append((log, list(log.handlers), log.level))
        log.setLevel(logging.INFO)
    logging.captureWarnings(True)  # `warnings.warn` of any library: to the file too
    _current = state
    return path


def release() -> None:
    """Put back the handlers and levels `capture` replaced (tests; the end of `main`)."""
    global _current
    if _current is None:
        return
    for log, handlers, level in reversed(_current.saved):
        for handler in list(log.handlers):
            log.removeHandler(handler)
        for handler in handlers:
            log.addHandler(handler)
        log.setLevel(level)
    logging.captureWarnings(False)
    _current.handler.close()
    _current = None


def current() -> Path | None:
    """The file `capture` writes to, if any."""
    return None if _current is None else Path(_current.handler.baseFilename)
