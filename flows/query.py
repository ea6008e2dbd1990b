"""Read-only SQL over the published tables (`duplirank sql`).

The analysts' database `duplirank.duckdb` only holds views over the published Parquet files.
It is opened read-only, with file access limited to the warehouse folder, configuration locked,
and only SELECT / EXPLAIN statements accepted (a `COPY … TO` would otherwise be able to write
inside the warehouse).
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import duckdb
import polars as pl

from flows.errors import UserError
from flows.storage.manifest import LAYERS
from flows.storage.warehouse import DATABASE, Warehouse

ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


def current_database(warehouse: Path) -> tuple[Path, Path]:
    """(warehouse root, views database of its current publication); a damaged or missing
    publication is a one-line error."""
    wh = Warehouse(warehouse)
    pointer = wh.publication()
    if pointer is None or not (wh.root / pointer / DATABASE).exists():
        raise UserError(f"no published tables in {wh.root} (run `duplirank nightly` first)")
    return wh.root, wh.root / pointer / DATABASE


_CONFIGURING = threading.Lock()  # connections of this process may share a database instance


def connect_read_only(warehouse: Path) -> duckdb.DuckDBPyConnection:
    root, db = current_database(warehouse)
    with _CONFIGURING:
        return _configured(duckdb.connect(str(db), read_only=True), root, db)


def _configured(con: duckdb.DuckDBPyConnection, root: Path, db: Path):
    # views list paths relative to the warehouse root (a copied warehouse keeps working)
    wanted = {
        "file_search_path": str(root),
        "allowed_directories": [str(root) + "/", *(f"{layer}/" for layer in LAYERS)],
        "enable_external_access": False,
    }
    if _locked(con):
        # another connection of this process shares the database instance (DuckDB caches
        # one per file): it was configured and locked by `connect_read_only` — check it
        checked = ("file_search_path", "enable_external_access")
        if _current(con, checked) != {k: wanted[k] for k in checked}:
            con.close()
            raise UserError(f"{db} is open in this process with other settings")
        return con
    for name, value in wanted.items():  # global: later connections to the instance share it
        con.execute(f"set global {name} = $value", {"value": value})
    con.execute("set lock_configuration = true")
    return con


def _locked(con) -> bool:
    return con.execute("select current_setting('lock_configuration')").fetchall()[0][0] in (
        True,
        "true",
    )


def _current(con, wanted: dict) -> dict:
    return {
        name: con.execute(f"select current_setting('{name}')").fetchall()[0][0] for name in wanted
    }


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
