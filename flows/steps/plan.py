"""Which bronze partitions a run rescores, and from which month its history tables change.

A record is stored in the partition of its own raw date (UTC month; `transforms/calendar.py`)
and published in a month computed from the current settings (platform time zone, the rules'
own dates). The two differ by at most one month for a tournament or an event, and for a match
its published month is that of its creation or of its start, which may come later. So:
- a nightly rescores the partitions its new rows went to (and those left dirty by `duplirank
  ingest`); history tables change from the month before the first of them, or later: from
  the first month of those partitions' units, as published and as rescored;
- a backfill of months A..B rescores every partition that can hold a record published in
  A..B under any setting: A−1..B+1, plus the partitions of matches started or scheduled in
  A..B; history tables change from min(A, first partition − 1).
"""

from __future__ import annotations

import polars as pl

from flows.steps.context import COMPETITIONS, StepContext, bronze_table
from transforms.calendar import RAW_MONTH, month_expr, month_range, shift_month


def first_month(parts: list[str], floor: str | None = None) -> str:
    """The first published month a rescore of these partitions can change."""
    first = shift_month(min(parts), -1)
    return min(first, floor) if floor else first


# per competition with history tables, the table of its scored units and their month
UNIT_MONTHS = {"simultane": "simultane_tournament_results", "face_a_face": "ff_match_scores"}


def first_changed_month(ctx: StepContext, competition: str, parts: list[str]) -> str:
    """The first published month a nightly's rescore of these partitions changes: the
    earliest month of their scored units, as published before and as rescored (staged in
    `ctx.pending`), never earlier than `first_month(parts)`; that month when they have none."""
    first = first_month(parts)
    table, keys = UNIT_MONTHS.get(competition), [f"{RAW_MONTH}={p}" for p in parts]
    if table is None:
        return first
    months = []
    for pending in (None, list(ctx.pending)):
        if ctx.wh.entries(table, keys, pending=pending):
            rows = ctx.wh.scan(table, keys, pending=pending)
            months.append(rows.select(pl.col("month").min()).collect().item())
    found = [m for m in months if m is not None]
    return max(first, min(found)) if found else first


def backfill_partitions(ctx: StepContext, first: str, last: str) -> dict[str, list[str]]:
    """Per competition, the bronze partitions that can contribute to months first..last."""
    wanted = set(month_range(shift_month(first, -1), shift_month(last, 1)))
    plan: dict[str, list[str]] = {}
    for competition, record_types in COMPETITIONS.items():
        table = bronze_table(record_types[0])
        stored = set(ctx.wh.months(table, list(ctx.pending), key=RAW_MONTH))
        parts = stored & wanted
        if competition == "face_a_face" and stored - parts:
            parts |= _late_match_partitions(ctx, sorted(stored - parts), first, last)
        plan[competition] = sorted(parts)
    return plan


def _late_match_partitions(ctx: StepContext, parts: list[str], first: str, last: str) -> set[str]:
    """Partitions (outside A−1..B+1) holding a match started or scheduled in first..last."""
    tz = ctx.settings.timezone
    matches = ctx.bronze("ff.match", parts).select(
        RAW_MONTH,
        month_expr("started_at", tz).alias("started"),
        month_expr("scheduled_at", tz).alias("scheduled"),
    )
    inside = pl.any_horizontal(
        pl.col(c).is_between(pl.lit(first), pl.lit(last)) for c in ("started", "scheduled")
    )
    found = matches.filter(inside).select(pl.col(RAW_MONTH).unique()).collect()
    return set(found[RAW_MONTH].to_list())
