"""Columns and expressions shared by the bridge modules."""

import polars as pl

GROUP = ["event_id", "section", "board"]  # the comparison group


def real_score() -> pl.Expr:
    """The NS score of a real (non-artificial) result, null for an artificial one."""
    return pl.when(pl.col("real")).then(pl.col("score_ns"))


def real_count() -> pl.Expr:
    """M: how many real scores the line's comparison group has."""
    return real_score().count().over(GROUP).cast(pl.Int64)
