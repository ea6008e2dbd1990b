"""The short rankings printed at the end of `make run` / `duplirank nightly`."""

from __future__ import annotations

from pathlib import Path

from flows.query import format_frame, run_sql
from flows.warehouse import UserError

REPORTS = (
    (
        "Simultané — Indice of the latest month",
        "simultane_monthly",
        """
        select month, rank_indice as rank, player_id, round(indice, 2) as indice,
               round(victoire, 2) as victoire, tournaments, wins,
               round(pct_actuel, 1) as pct_actuel, representative
        from simultane_monthly
        where month = (select max(month) from simultane_monthly)
        order by rank_indice, player_id
        limit $top
        """,
    ),
    (
        "Face-à-Face — ranking of the latest month",
        "ff_monthly_ranking",
        """
        select month, rank, player_id, round(points, 2) as points, round(elo) as elo, matches,
               attaque_counted, classique_counted
        from ff_monthly_ranking
        where month = (select max(month) from ff_monthly_ranking)
        order by rank, player_id
        limit $top
        """,
    ),
    (
        "Bridge — winners of the latest events",
        "bridge_standings",
        """
        select event_id, section, rank, pair, total, pct
        from bridge_standings
        where rank = 1
        order by event_id desc, section
        limit $top
        """,
    ),
)


def rankings_text(warehouse: Path, top: int = 10) -> str:
    parts = []
    tables = set(run_sql(warehouse, "select view_name from duckdb_views()")["view_name"])
    for title, table, query in REPORTS:
        if table not in tables:
            continue
        try:
            frame = run_sql(warehouse, query, {"top": top})
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
