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
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:  # imported where used: `duplirank sql` parses with DuckDB alone
    import polars as pl

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


class ProcessDatabase:
    """One in-memory DuckDB database for the whole process, each caller on a cursor of its own
    (its registered frames and settings are its own): opening a new database for every query
    cost ~13-45 ms. A forked child opens its own on first use; the copy it inherits is never
    closed (closing it waits for the parent's threads, which the child does not have: hung)."""

    _inherited: list[duckdb.DuckDBPyConnection] = []

    def __init__(self, *setup: str):
        self.setup = setup
        self.database: duckdb.DuckDBPyConnection | None = None
        self.lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        with self.lock:
            if self.database is None:
                self.database = duckdb.connect()
                for statement in self.setup:
                    self.database.execute(statement)
            return self.database.cursor()

    def _forget(self) -> None:
        if self.database is not None:
            self._inherited.append(self.database)
        self.database, self.lock = None, threading.Lock()


_DATABASE = ProcessDatabase("set threads to 2")


def _cursor() -> duckdb.DuckDBPyConnection:
    """A connection of its own to the process's in-memory database, in UTC."""
    con = _DATABASE.cursor()
    con.execute("set TimeZone = 'UTC'")  # a connection's own setting
    return con


@cache
def model_sql(name: str) -> str:
    """The text of `sql/<name>.sql` (`name` may name a sub-folder: `reports/…`)."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def run_model(
    name: str, params: dict | None = None, **tables: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    import polars as pl

    con = _cursor()
    try:
        for table, frame in tables.items():
            frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
            # Arrow string views: DuckDB reads Polars' strings without a copy
            con.register(table, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        return pl.from_arrow(con.sql(model_sql(name), params=params or None).to_arrow_table())
    finally:
        con.close()
