"""Penalties (`p`, `z`, `m`) and compensations (`w`) on a pair's total.

Matchpoint methods: a percentage of the board's top (p = −5 %, z = −10 %, m = −15 %,
w = +10 %; for a 3-table event p = −0.8, z = −1.6, m = −2.4, w = +1.6). IMP methods: the line's
`amount` in IMPs (Decision: a line without amount in an IMP event is a data issue and is not
applied). Where an `amount` is given it is used in every method, as a size: the sign is the
kind's (w adds, the others subtract).
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.options import BridgeOptions


def penalty_points(
    penalties: pl.LazyFrame, tops: pl.LazyFrame, options: BridgeOptions, imp_method: bool
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(per event and pair: `penalties_x100` in hundredths of the event's unit,
    issue rows: event_id, pair, board, kind, detail).

    `tops` has event_id and `top_x100` (matchpoint methods; ignored for IMP methods).
    """
    pct = pl.col("kind").replace_strict(
        {
            "p": options.penalty_p,
            "z": options.penalty_z,
            "m": options.penalty_m,
            "w": options.penalty_w,
        },
        default=None,
        return_dtype=pl.Int64,
    )
    sign = pl.when(pl.col("kind") == "w").then(1).otherwise(-1)
    given = (sign * pl.col("amount").abs() * 100).round(0).cast(pl.Int64)
    if imp_method:
        from_kind = pl.lit(None, pl.Int64)
    else:
        from_kind = pct * pl.col("top_x100") // 100
    lines = penalties.join(tops, on="event_id", how="left").with_columns(
        pl.when(pl.col("amount").is_not_null())
        .then(given)
        .otherwise(from_kind)
        .alias("points_x100")
    )
    issues = lines.filter(pl.col("points_x100").is_null()).select(
        "event_id",
        "pair",
        "board",
        pl.lit("imp_penalty_without_amount").alias("kind"),
        pl.format("penalty {} in an IMP event has no amount", pl.col("kind")).alias("detail"),
    )
    totals = (
        lines.filter(pl.col("points_x100").is_not_null())
        .group_by("event_id", "pair")
        .agg(pl.col("points_x100").sum().alias("penalties_x100"))
    )
    return totals, issues
