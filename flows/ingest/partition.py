"""The bronze partition (`raw_month=YYYY-MM`) of each row: one function, `assign_partition`.

A row is stored by the raw month of the date the rules anchor its record to
(`transforms/calendar.py`): a Simultané deal by its tournament's start, a Face-à-Face match by
its creation, a bridge event by its date — the UTC calendar month of a timestamp, so no
setting (time zone, time rules) can move a stored record. Children take their parent's
partition so a match or an event is never split: `ff.deal` / `ff.disconnect` that of their
match, `bridge.result` / `bridge.penalty` that of their event; a child whose parent is not in
`parents` gets a null partition (the caller holds it, then quarantines it). The published
month is computed when scoring, from the current settings.
"""

from __future__ import annotations

import polars as pl

from transforms.calendar import RAW_MONTH, raw_month_expr
from transforms.record_types import RECORD_TYPES

ANCHOR = {"simultane.deal": "tournament_start", "ff.match": "created_at", "bridge.event": "date"}


def assign_partition(
    record_type: str, rows: pl.DataFrame, parents: pl.DataFrame | None = None
) -> pl.DataFrame:
    """`rows` with their `raw_month`. `parents`: (key, raw_month) of the known parents."""
    rt = RECORD_TYPES[record_type]
    if rt.parent is not None:
        assert parents is not None, record_type
        known = parents.rename({"key": rt.parent.column, RAW_MONTH: "_parent"})
        rows = rows.join(known, on=rt.parent.column, how="left", maintain_order="left")
        return rows.with_columns(pl.col("_parent").alias(RAW_MONTH)).drop("_parent")
    column = ANCHOR[record_type]
    return _per_value(rows, column, raw_month_expr(column, rows.schema[column]))


def _per_value(rows: pl.DataFrame, column: str, month: pl.Expr) -> pl.DataFrame:
    """The partition computed once per distinct value of `column` (a tournament's deals share
    their start: formatting each row's month was most of the cost)."""
    values = rows.select(pl.col(column).unique()).with_columns(month.alias(RAW_MONTH))
    mapped = pl.col(column).replace_strict(values[column], values[RAW_MONTH], default=None)
    return rows.with_columns(mapped.alias(RAW_MONTH))


def parent_keys(record_type: str, rows: pl.DataFrame) -> pl.DataFrame:
    """(key, raw_month) of parent rows (a record type that children refer to)."""
    key = RECORD_TYPES[record_type].key[0]
    return rows.select(pl.col(key).alias("key"), RAW_MONTH)
