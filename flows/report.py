"""The short rankings printed at the end of `make run` / `duplirank nightly`."""

from __future__ import annotations

from pathlib import Path

from flows.errors import UserError
from flows.query import format_frame, run_sql
from transforms.sql_models import model_sql

# (title, the table it reads, its query: sql/reports/<name>.sql)
REPORTS = (
    ("Simultané — Indice of the latest month", "simultane_monthly", "simultane_indice"),
    ("Face-à-Face — ranking of the latest month", "ff_monthly_ranking", "ff_ranking"),
    ("Bridge — winners of the latest events", "bridge_standings", "bridge_winners"),
)


def rankings_text(warehouse: Path, top: int = 10) -> str:
    parts = []
    tables = set(run_sql(warehouse, "select view_name from duckdb_views()")["view_name"])
    for title, table, name in REPORTS:
        if table not in tables:
            continue
        try:
            frame = run_sql(warehouse, model_sql(f"reports/{name}"), {"top": top})
        except UserError as err:
            parts.append(f"{title}: unavailable ({err})")
            continue
        if frame.is_empty():  # every public table is a view, empty until it has rows
            continue
        parts.append(f"{title}\n{format_frame(frame, 'table')}")
    parts.append(
        f"Tables: {Path(warehouse).resolve()}/duplirank.duckdb (open read-only), "
        f'or `duplirank sql "select …" --warehouse {warehouse}`'
    )
    return "\n".join(parts)
