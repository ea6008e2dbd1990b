"""The WBF 2013 continuous 20-VP scale for a round of b boards.

The published tables are built once per board count (a small Python loop over margins, because
the monotone fix-up is sequential) and joined to the round totals; a fractional margin (averaged
Cavendish) is read on the formula itself, rounded half up. `add_vp` is the one entry point.
"""

from __future__ import annotations

import math
from functools import cache

import polars as pl

TAU = (math.sqrt(5) - 1) / 2


def _raw_cents(margin: float, boards: int) -> int:
    """VP of the winner in hundredths, rounded half up (before the monotone fix-up)."""
    b = 15 * math.sqrt(boards)
    vp = min(20.0, 10 + 10 * (1 - TAU ** (3 * margin / b)) / (1 - TAU**3))
    return min(2000, math.floor(vp * 100 + 0.5 + 1e-9))


@cache
def vp_table(boards: int) -> tuple[int, ...]:
    """Winner's VP in hundredths for integer margins 0, 1, ... up to the first 20.00."""
    cents = [_raw_cents(0, boards)]
    while cents[-1] < 2000:
        cents.append(_raw_cents(len(cents), boards))
    # Raise by 0.01 wherever an increment would exceed the previous one (published tables).
    changed = True
    while changed:
        changed = False
        for i in range(2, len(cents)):
            if cents[i] - cents[i - 1] > cents[i - 1] - cents[i - 2]:
                cents[i - 1] += 1
                changed = True
    return tuple(cents)


def add_vp(rounds: pl.LazyFrame, imps: str = "imps", boards: str = "boards") -> pl.LazyFrame:
    """Adds `vp` (and `vp_x100`, integer hundredths) for each round's IMP total and board count."""
    board_counts = rounds.select(pl.col(boards).unique()).collect().to_series().drop_nulls()
    table = pl.LazyFrame(
        [
            {boards: b, "margin": i, "vp_cents": c}
            for b in board_counts.to_list()
            for i, c in enumerate(vp_table(int(b)))
        ],
        schema={boards: pl.Int64, "margin": pl.Int64, "vp_cents": pl.Int64},
    )
    size = pl.col(imps).abs()
    integral = size == size.round(0)
    b = 15 * pl.col(boards).cast(pl.Float64).sqrt()
    raw = (10 + 10 * (1 - pl.lit(TAU).pow(3 * size / b)) / (1 - TAU**3)).clip(upper_bound=20.0)
    raw_cents = (raw * 100 + 0.5 + 1e-9).floor().cast(pl.Int64).clip(upper_bound=2000)
    top_margin = table.group_by(boards).agg(pl.col("margin").max().alias("top_margin"))
    winner_cents = pl.when(integral).then(pl.col("vp_cents")).otherwise(raw_cents)
    return (
        rounds.with_columns(size.round(0).cast(pl.Int64).alias("margin"))
        .join(top_margin, on=boards, how="left")
        .with_columns(pl.min_horizontal("margin", "top_margin").alias("margin"))
        .join(table, on=[boards, "margin"], how="left")
        .with_columns(
            pl.when(pl.col(imps) >= 0)
            .then(winner_cents)
            .otherwise(2000 - winner_cents)
            .alias("vp_x100")
        )
        .with_columns((pl.col("vp_x100") / 100).round(2).alias("vp"))
        .drop("margin", "top_margin", "vp_cents")
    )
