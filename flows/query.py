"""Read-only SQL over the published tables (`duplirank sql`).

The analysts' database `duplirank.duckdb` only holds views over the published Parquet files.
It is opened read-only, with file access limited to the warehouse folder, configuration locked,
and only SELECT / EXPLAIN statements accepted (a `COPY … TO` would otherwise be able to write
inside the warehouse).
"""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import polars as pl

from flows.errors import UserError
from flows.storage.manifest import LAYERS
from flows.storage.warehouse import DATABASE

ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


def connect_read_only(warehouse: Path) -> duckdb.DuckDBPyConnection:
    root = Path(warehouse).resolve()
    db = root / DATABASE
    if not db.exists():
        raise UserError(f"no published tables in {root} (run `duplirank nightly` first)")
    con = duckdb.connect(str(db), read_only=True)
    # views list paths relative to the warehouse root (a copied warehouse keeps working)
    con.execute("set file_search_path = $root", {"root": str(root)})
    allowed = [str(root) + "/", *(f"{layer}/" for layer in LAYERS)]
    con.execute("set allowed_directories = $dirs", {"dirs": allowed})
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")
    return con


def run_sql(warehouse: Path, query: str, params: dict | list | None = None) -> pl.DataFrame:
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as err:
        raise UserError(_one_line(err)) from None
    if len(statements) != 1:
        raise UserError("give exactly one SQL statement")
    if statements[0].type not in ALLOWED:
        raise UserError(f"read-only: {statements[0].type.name} statements are not allowed")
    con = connect_read_only(warehouse)
    try:
        return con.sql(query, params=params).pl()
    except duckdb.Error as err:
        raise UserError(_one_line(err)) from None
    finally:
        con.close()


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())[:500]


def format_frame(frame: pl.DataFrame, fmt: str) -> str:
    if fmt == "csv":
        return frame.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        frame.write_json(buffer)
        return buffer.getvalue() + "\n"
    with pl.Config(
        tbl_rows=200,
        tbl_cols=30,
        fmt_str_lengths=60,
        tbl_width_chars=200,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        return str(frame) + f"\n({frame.height} rows)\n"
