"""Rounds: the boards a pair plays at one table against one opponent.

Taken from the `round` field when given, else from the event's `boards_per_round`
(round = (board − 1) // boards_per_round + 1), else a new round starts whenever the opponent
changes from one board to the next (boards in number order).
"""

from __future__ import annotations

import polars as pl

PAIR_KEY = "pair_key"  # one (event, section, pair), as an integer key (`frames.packed`)


def assign_rounds(pair_boards: pl.LazyFrame) -> pl.LazyFrame:
    """`pair_boards` has `pair_key`, `opponent_key`, `board`, `round` (nullable),
    `boards_per_round` (nullable); returns it with `round` filled (the opponent-change window
    only runs on the rows that need it)."""
    known = pair_boards.with_columns(
        pl.coalesce(pl.col("round"), (pl.col("board") - 1) // pl.col("boards_per_round") + 1)
        .cast(pl.Int64)
        .alias("round")
    )
    changed = (
        (pl.col("opponent_key").ne_missing(pl.col("opponent_key").shift(1)))
        .cum_sum()
        .over(PAIR_KEY, order_by="board")
        .cast(pl.Int64)
    )
    derived = known.filter(pl.col("round").is_null()).with_columns(changed.alias("round"))
    return pl.concat([known.filter(pl.col("round").is_not_null()), derived])
