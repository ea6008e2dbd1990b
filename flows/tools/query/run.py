"""Running a query: in a worker thread under a wall-clock timeout and Ctrl-C, printed as it
streams (`run_sql` for a frame, `print_sql` for the command, `Session` for several queries on
one connection)."""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

import duckdb

from flows.errors import UserError
from flows.settings import SqlLimits
from flows.storage.warehouse import Warehouse
from flows.tools.query.connection import connect_read_only
from flows.tools.query.output import FORMATS, Printed, print_rows
from flows.tools.query.statement import bind, check_statement, one_line

if TYPE_CHECKING:  # `duplirank sql` streams DuckDB's Arrow batches: Polars is not loaded
    import polars as pl

STOP_WAIT_S = 5.0  # how long an interrupted query may take to stop before we give up on it


def run_sql(
    warehouse: Path | str | Warehouse,
    query: str,
    params: dict | list | None = None,
    limits: SqlLimits | None = None,
) -> pl.DataFrame:
    """All rows of one read-only query as a DataFrame (in-process callers: reports, tests).

    Same checks, connection and timeout as `duplirank sql`; the rows are held (max_rows unused).
    """
    with Session(warehouse, limits) as session:
        return session.run(query, params)


class QueryStopped(UserError):
    """A query stopped at its deadline (`sql.timeout_s`)."""


class Session:
    """Read-only queries on one connection (`connect_read_only`: opening it costs more than
    a small query), each checked and bounded as `run_sql`'s; closed at the end of a `with`."""

    def __init__(self, warehouse: Path | str | Warehouse, limits: SqlLimits | None = None):
        self.limits = limits or SqlLimits()
        self.con = connect_read_only(warehouse, self.limits)

    def run(self, query: str, params: dict | list | None = None) -> pl.DataFrame:
        if self.con is None:
            raise UserError("a query of this session was stopped: open a new one")
        statement = check_statement(query)
        con = self.con
        work = lambda: bind(con, statement, params).pl()  # noqa: E731
        try:
            return _bounded(con, self.limits.timeout_s, work, close=False)
        except (QueryStopped, KeyboardInterrupt):
            self.con = None  # closed by `_bounded`, or still used by the stopped query
            raise

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        if self.con is not None:
            self.con.close()


def print_sql(
    warehouse: Path | str | Warehouse,
    query: str,
    params: dict | list | None = None,
    fmt: str = "table",
    limits: SqlLimits | None = None,
    out: IO[str] | None = None,
    timezone: str | None = None,
) -> Printed:
    """Run one read-only query and write its rows to `out` (stdout) batch by batch.

    `fmt`: `table` (at most --max-rows or 200 rows, aligned), `csv` (a header; nested values as
    JSON in the cell), `json` (one array, a row per line) or `jsonl` (JSON Lines).
    A KeyboardInterrupt of the calling (main) thread interrupts the query, then propagates.
    `timezone`: the one timestamps are shown in (default: UTC).
    """
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    limits = limits or SqlLimits()
    statement = check_statement(query)
    con = connect_read_only(warehouse, limits, timezone)
    out = out or sys.stdout
    return _bounded(
        con, limits.timeout_s, lambda: print_rows(con, statement, params, fmt, limits, out)
    )


def _bounded(con: duckdb.DuckDBPyConnection, timeout_s: float, work: Callable, close: bool = True):
    """Run `work()` in a worker thread; interrupt the connection at the deadline, or when the
    calling thread gets KeyboardInterrupt (Ctrl-C). The connection is closed at the end
    (`close`; else only when the query was stopped).

    DuckDB runs a query without giving Python's main thread a chance to handle Ctrl-C; here the
    main thread only waits (on an Event: an interrupted `Thread.join` can leave the thread
    marked finished while it runs), so the signal arrives and `con.interrupt()` stops the query.
    """
    box: dict = {}
    done = threading.Event()

    def target():
        try:
            box["value"] = work()
        except BaseException as err:  # handed to the calling thread
            box["error"] = err
        finally:
            done.set()

    worker = threading.Thread(target=target, name="duplirank-sql", daemon=True)
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else math.inf
    finished = False
    try:
        worker.start()
        while not (finished := done.wait(min(0.1, max(deadline - time.monotonic(), 0.0)))):
            if time.monotonic() >= deadline:
                _stop(con, done)
                raise QueryStopped(
                    f"query stopped after {timeout_s:g} s (--timeout; setting sql.timeout_s)"
                )
    except KeyboardInterrupt:
        _stop(con, done)
        raise
    finally:
        if done.is_set() and (close or not finished):
            con.close()  # if the worker still uses it: left to the end of the process
    if "error" in box:
        raise _user_error(box["error"])
    return box["value"]


def _stop(con: duckdb.DuckDBPyConnection, done: threading.Event) -> None:
    con.interrupt()
    done.wait(STOP_WAIT_S)


def _user_error(err: BaseException) -> BaseException:
    """DuckDB's errors (pyarrow's while streaming) as one line; other errors as they are."""
    message = str(err)
    if "Cannot access" in message and "disabled by configuration" in message:
        path = message.split('"')[1] if message.count('"') >= 2 else "a file"
        return UserError(
            f'cannot read "{path}": `duplirank sql` reads only the published tables of the '
            "warehouse"
        )
    arrow = sys.modules.get("pyarrow")  # loaded by the stream that may have raised
    arrow_error = arrow.ArrowException if arrow is not None else duckdb.Error
    if isinstance(err, duckdb.Error | arrow_error) or (
        isinstance(err, OSError) and not isinstance(err, BrokenPipeError)
    ):
        return UserError(one_line(err))
    return err
