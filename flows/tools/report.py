"""The short rankings printed at the end of `make run` / `duplirank nightly`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from flows.errors import UserError
from flows.tools.query import Session, format_frame
from transforms.sql_models import model_sql

# (title, the table it reads, its query: sql/reports/<name>.sql)
REPORTS = (
    ("Simultané — Indice of the latest month", "simultane_monthly", "simultane_indice"),
    ("Face-à-Face — ranking of the latest month", "ff_monthly_ranking", "ff_ranking"),
    ("Bridge — winners of the latest events", "bridge_standings", "bridge_winners"),
)


def top_rows(
    session: Session, top: int = 10
) -> Iterator[tuple[str, str, pl.DataFrame | UserError]]:
    """(title, table, top rows) of each ranking that has rows; a ranking that cannot be read
    gives its UserError as the rows."""
    tables = set(session.run("select view_name from duckdb_views()")["view_name"])
    for title, table, name in REPORTS:
        if table not in tables:
            continue
        try:
            frame = session.run(model_sql(f"reports/{name}"), {"top": top})
        except UserError as err:
            yield title, table, err
            continue
        if not frame.is_empty():  # every public table is a view, empty until it has rows
            yield title, table, frame


def rankings_text(warehouse: Path, top: int = 10, rows: list | None = None) -> str:
    """The rankings' top rows as text: `rows` as `top_rows` gave them (a run's artifacts read
    them), else read from the warehouse."""
    if rows is None:
        with Session(warehouse) as session:
            rows = list(top_rows(session, top))
    parts = []
    for title, _, frame in rows:
        if isinstance(frame, UserError):
            parts.append(f"{title}: unavailable ({frame})")
        else:
            parts.append(f"{title}\n{format_frame(frame, 'table')}")
    parts.append(
        f"Tables: {Path(warehouse).resolve()}/duplirank.duckdb (open read-only), "
        f'or `duplirank sql "select …" --warehouse {warehouse}`'
    )
    return "\n".join(parts)
