"""Run one SQL model of `sql/` (one table per file) with DuckDB over Polars frames.

The model refers to its inputs by name (`from simultane_tournament_results`); they are
registered as views of the given frames. Parameters are bound (`$name`), never formatted in.
Timestamps are read and returned in UTC, whatever the machine's zone.

`sql/` sits beside `transforms/`: in a clone, and in an installed wheel (packaged as data of
the `sql` folder, see pyproject.toml).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb
import polars as pl

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


@cache
def model_sql(name: str) -> str:
    """The text of `sql/<name>.sql` (`name` may name a sub-folder: `reports/…`)."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def run_model(
    name: str, params: dict | None = None, **tables: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    con = duckdb.connect()
    try:
        con.execute("set threads to 2")
        con.execute("set TimeZone = 'UTC'")
        for table, frame in tables.items():
            frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
            # Arrow string views: DuckDB reads Polars' strings without a copy
            con.register(table, frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        return pl.from_arrow(con.sql(model_sql(name), params=params or None).to_arrow_table())
    finally:
        con.close()
