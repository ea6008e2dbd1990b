"""Run one SQL model of `sql/` (one table per file) with DuckDB over Polars frames.

The model refers to its inputs by name (`from simultane_tournament_results`); they are
registered as views of the given frames. Parameters are bound (`$name`), never formatted in.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb
import polars as pl

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


@cache
def model_sql(name: str) -> str:
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def run_model(
    name: str, params: dict | None = None, **tables: pl.DataFrame | pl.LazyFrame
) -> pl.DataFrame:
    con = duckdb.connect()
    try:
        con.execute("set threads to 2")
        for table, frame in tables.items():
            con.register(table, frame.collect() if isinstance(frame, pl.LazyFrame) else frame)
        return con.sql(model_sql(name), params=params or None).pl()
    finally:
        con.close()
