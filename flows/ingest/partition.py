"""The bronze partition (`month=YYYY-MM`) of each row: one function, `assign_partition`.

Records that carry their own time take the platform month of it (data.md and the rules
pages): a Simultané deal the month of its tournament's start, a Face-à-Face match the month
it started in (created in, when cancelled), a bridge event the month of its date. Children
take their parent's month so a match or an event is never split across months: `ff.deal` /
`ff.disconnect` the month of their match, `bridge.result` / `bridge.penalty` of their event;
a child whose parent is not in `parents` gets a null month (the caller quarantines it).
"""

from __future__ import annotations

import dataclasses

import polars as pl

from transforms.calendar import month_expr
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.face_a_face.time_rules import match_month_expr
from transforms.record_types import RECORD_TYPES

PARENT_COLUMNS = ("key", "month")


def assign_partition(
    record_type: str,
    rows: pl.DataFrame,
    timezone: str,
    parents: pl.DataFrame | None = None,
    ff: FaceAFaceOptions | None = None,
) -> pl.DataFrame:
    """`rows` with their `month`. `parents`: (key, month) of the known parents (children)."""
    rt = RECORD_TYPES[record_type]
    if rt.parent is not None:
        assert parents is not None, record_type
        known = parents.rename({"key": rt.parent.column, "month": "_parent_month"})
        rows = rows.join(known, on=rt.parent.column, how="left", maintain_order="left")
        return rows.with_columns(pl.col("_parent_month").alias("month")).drop("_parent_month")
    if record_type == "simultane.deal":
        return _per_value(rows, "tournament_start", month_expr("tournament_start", timezone))
    if record_type == "ff.match":
        opts = dataclasses.replace(ff or FaceAFaceOptions(), timezone=timezone)
        return rows.with_columns(match_month_expr(opts).alias("month"))
    if record_type == "bridge.event":
        return _per_value(rows, "date", pl.col("date").dt.strftime("%Y-%m"))
    raise AssertionError(record_type)


def _per_value(rows: pl.DataFrame, column: str, month: pl.Expr) -> pl.DataFrame:
    """`month` computed once per distinct value of `column` (a tournament's deals share
    their start: formatting each row's month was most of the cost)."""
    values = rows.select(pl.col(column).unique()).with_columns(month.alias("month"))
    mapped = pl.col(column).replace_strict(values[column], values["month"], default=None)
    return rows.with_columns(mapped.alias("month"))


def parent_keys(record_type: str, rows: pl.DataFrame) -> pl.DataFrame:
    """(key, month) of parent rows (a record type that children refer to)."""
    key = RECORD_TYPES[record_type].key[0]
    return rows.select(pl.col(key).alias("key"), "month")
