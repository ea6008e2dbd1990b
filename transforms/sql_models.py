"""Run one SQL model of `sql/` (one table per file) with DuckDB over Polars frames.

The model refers to its inputs by name (`from simultane_tournament_results`); they are
registered as views of the given frames. Parameters are bound (`$name`), never formatted in.
Timestamps are read and returned in UTC, whatever the machine's zone.

`sql/` sits beside `transforms/`: in a clone, and in an installed wheel (packaged as data of
the `sql` folder, see pyproject.toml).
"""

from __future__ import annotations

import os
import threading
from functools import cache
from pathlib import Path

import duckdb
import polars as pl

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
_DATABASE: tuple[int, duckdb.DuckDBPyConnection] | None = None  # (pid, in-memory database)
_LOCK = threading.Lock()


def _cursor() -> duckdb.DuckDBPyConnection:
    """A connection of its own (its registered frames are its own) to one in-memory database
    of the process: opening a new database for every model cost ~25-45 ms."""
    global _DATABASE
    with _LOCK:
        if _DATABASE is None or _DATABASE[0] != os.getpid():  # not one inherited by a fork
            database = duckdb.connect()
            database.execute("set threads to 2")
            _DATABASE = (os.getpid(), database)
        con = _DATABASE[1].cursor()
    con.execute("set TimeZone = 'UTC'")  # a connection's own setting
    return con


@cache
def model_sql(name: str) -> str:
    """The text of `sql/<name>.sql` (`name` may name a sub-folder: `reports/…`)."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def run_model(
    name: str, params: dict | None = None, **tables: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    con = _cursor()
    try:
        for table, frame in tables.items():
            frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
            # Arrow string views: DuckDB reads Polars' strings without a copy
            con.register(table, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        return pl.from_arrow(con.sql(model_sql(name), params=params or None).to_arrow_table())
    finally:
        con.close()
