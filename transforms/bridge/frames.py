"""Columns and expressions shared by the bridge modules.

Traveller lines reach the methods (`travellers.traveller_lines`) with integer keys instead of
text: `gid` numbers the comparison group (event, section, board), `ev` the event; and with the
positions of each real score in its group, taken once from one sort of the lines by (group,
score): `m` (real scores in the group), `below` (real scores lower than this one), `ties` (real
scores equal to it, itself included) and `order` (1..m, ascending, ties in line order). The
methods read ranks from those columns instead of ranking inside a window per group, which was
most of their cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

GROUP = ["gid"]  # the comparison group: one (event, section, board)


def real_score() -> pl.Expr:
    """The NS score of a real (non-artificial) result, null for an artificial one."""
    return pl.when(pl.col("real")).then(pl.col("score_ns"))


def packed(parts: Sequence[pl.Expr], bounds: Sequence[tuple[int, int]], name: str) -> pl.Expr:
    """One Int64 key for integer parts within `bounds` (lo, hi) when their widths fit in 63
    bits: equality and order are those of the tuple (a null part first), and Polars sorts and
    groups one integer column many times faster than several. A struct of the parts when they
    do not fit (same equality and order, slower)."""
    widths = [(hi - lo + 1).bit_length() for lo, hi in bounds]
    if sum(widths) > 63:
        return pl.struct(*[p.alias(f"k{i}") for i, p in enumerate(parts)]).alias(name)
    key = pl.lit(0, pl.Int64)
    for part, (lo, _), width in zip(parts, bounds, widths, strict=True):
        key = key * (1 << width) + (part.cast(pl.Int64) - (lo - 1)).fill_null(0)
    return key.alias(name)


def packed_bounds(frame: pl.DataFrame, parts: Sequence[pl.Expr]) -> list[tuple[int, int]]:
    """(min, max) of each part over the frame ((0, 0) for an empty frame)."""
    row = frame.select(
        *[p.min().alias(f"lo{i}") for i, p in enumerate(parts)],
        *[p.max().alias(f"hi{i}") for i, p in enumerate(parts)],
    ).row(0)
    n = len(parts)
    return [(int(row[i] or 0), int(row[n + i] or 0)) for i in range(n)]


def codes(column: str, categories: str) -> pl.Expr:
    """Text as an integer code (UInt32, null for null), equal codes for equal texts: the
    physical code of a named Polars `Categories`, so the same text gets the same code in every
    frame of the process."""
    category = pl.Categorical(pl.Categories(f"duplirank.bridge.{categories}"))
    return pl.col(column).cast(category).to_physical()


def hundredths(value: pl.Expr) -> pl.Expr:
    """An integer count of hundredths as the nearest float (Polars divides by multiplying by
    the reciprocal, so 1587 / 100 would print 15.870000000000001)."""
    return (value / 100).round(2)
