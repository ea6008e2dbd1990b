"""The fast checks of the lines of one record type: every rule of its declaration as one
column (`screen_columns`, `rule_columns`), the fields its type does not declare
(`may_have_extra`, `with_extra`) and NaN or Infinity inside an object (`not_finite`)."""

from __future__ import annotations

import json
from functools import cache

import duckdb
import polars as pl
import pyarrow as pa

from flows.ingest.checked import REJECTED
from flows.ingest.line_split import Chunk, lines_at
from flows.ingest.options import Window
from flows.ingest.parse import KEY_PATTERN, extra_fields, key_counts
from flows.ingest.reasons import non_finite_reason
from transforms.record_types import RecordType


@cache
def rule_columns(rt: RecordType) -> list[pl.Expr]:
    """Each rule of the declaration as a column named after it: true when valid (null is
    valid, as dataframely counts it)."""
    return [expr.fill_null(True).alias(name) for name, expr in rt.rule_exprs().items()]


@cache
def may_have_extra(rt: RecordType, decoded: bool = False) -> pl.Expr:
    """Whether a line may have fields its type does not declare.

    A line is compact JSON of its known fields when its length is theirs (`"k":` and the
    value's JSON text, a comma or brace each); the others (extra keys, but also spaces,
    escapes, nulls, or a number DuckDB may write longer than it was: `1E2` is `100.0`, hence
    the `.` test) are looked at again (`with_extra`).
    """
    sizes = [pl.col(f"_t_{k}").str.len_bytes() + (len(k) + 4) for k in rt.fields]
    kinds = ("num", "obj") if decoded else ("int", "num", "obj")  # `decoded`: an integer's
    numbers = [  # text read by the fast decoding is digits only (`decode.fast_value`)
        pl.col(f"_t_{k}").str.contains(".", literal=True).fill_null(False)
        for k in rt.fields
        if rt.kind(k) in kinds
    ]
    type_size = len(json.dumps(rt.name)) + len('"type":') + 1
    compact = pl.sum_horizontal(sizes) + type_size + 1
    floats = pl.any_horizontal(numbers) if numbers else pl.lit(False)
    return ((pl.col("text_bytes") != compact) | floats).fill_null(True).alias("_extra?")


@cache
def screen_columns(rt: RecordType, window: Window | None) -> list[pl.Expr]:
    """`_passed`: the line decodes, its times lie in the window and every rule of the
    declaration holds (dataframely's own rule expressions, null counted as valid as
    dataframely does); and `_extra?` (`may_have_extra`). A line that passes is accepted
    as it is; what `check_typed` would say of it is nothing (tested)."""
    flags = [pl.col(f"_bad_{f}") for f in rt.fields]
    if window is not None:
        flags += [pl.col(f"_out_{f}") for f in rt.fields if rt.kind(f) in ("ts", "date")]
    rules = [expr.fill_null(True) for expr in rt.rule_exprs().values()]
    passed = pl.all_horizontal(rules) & ~pl.any_horizontal(flags).fill_null(True)
    return [passed.alias("_passed"), may_have_extra(rt, decoded=True)]


def with_extra(
    con: duckdb.DuckDBPyConnection, rt: RecordType, rows: pl.DataFrame, chunk: Chunk
) -> pl.DataFrame:
    """`extra`: the line's fields its type does not declare (a JSON object), or null.
    Only lines that `may_have_extra` are parsed again (by DuckDB's `json_merge_patch`)."""
    look = rows.filter(pl.col("_extra?"))
    rows = rows.drop("_extra?")
    if look.height:  # longer than compact (spaces, escapes…): more keys than its fields'?
        known = 1 + pl.sum_horizontal(
            *(pl.col(f).is_not_null() for f in rt.fields),
            *(
                pl.col(f"_t_{f}").str.count_matches(KEY_PATTERN).fill_null(0)
                for f in rt.fields
                if rt.kind(f) == "obj"
            ),
        )
        keys = key_counts(chunk.raw, look["_pos"].to_numpy())
        look = look.filter(pl.Series(keys != look.select(known).to_series().to_numpy()))
    if not look.height:  # the common case: no line has fields its type does not declare
        return rows.with_columns(pl.lit(None, pl.String).alias("extra"))
    lines = pa.array(lines_at(chunk.raw, look["_pos"]), pa.large_binary())
    extra = extra_fields(con, look["line_no"].to_numpy(), lines, ["type", *rt.fields])
    return rows.join(extra, on="line_no", how="left")


def not_finite(rt: RecordType, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows with NaN or Infinity inside an object field or an unknown field: rejected."""
    objects = ["extra", *(f"_t_{k}" for k in rt.fields if rt.kind(k) == "obj")]
    suspect = pl.any_horizontal(pl.col(c).str.contains("(?i)nan|inf") for c in objects)
    found = rows.filter(suspect.fill_null(False))
    reasons = []
    for row in found.select("line_no", "_pos", *objects).iter_rows(named=True):
        reason = next(filter(None, (non_finite_reason(row[c], c) for c in objects)), None)
        if reason:
            reasons.append((row["line_no"], row["_pos"], reason, "not_finite"))
    bad = pl.DataFrame(reasons, schema=REJECTED, orient="row")
    if not bad.height:
        return rows, bad
    return rows.filter(~pl.col("line_no").is_in(bad["line_no"].implode())), bad
