"""Time rules of face_a_face.md, derived from the logged timestamps.

- cancelled: not started `cancel_after_min` after creation (or after the deferred start);
- unfinished deal: not finished within `attack_limit_s` / `defense_limit_s` of its start;
- forfeit: disconnected more than `forfeit_disconnect_min`, or never back before the match end.

Each limit is inclusive: a match starting exactly 10 minutes after creation is played, a deal
finished exactly at 4:00 (attack) is finished, a reconnection exactly 6 minutes later is in time.
"""

from __future__ import annotations

import polars as pl

from transforms.calendar import month_expr
from transforms.face_a_face.options import FaceAFaceOptions


def cancelled_expr(opts: FaceAFaceOptions) -> pl.Expr:
    """Not started within `cancel_after_min` of creation (or of the deferred start)."""
    limit = pl.duration(minutes=opts.cancel_after_min)
    reference = pl.coalesce("scheduled_at", "created_at")
    return pl.col("started_at").is_null() | (pl.col("started_at") > reference + limit)


def match_month_expr(opts: FaceAFaceOptions) -> pl.Expr:
    """Month of a match: of its start; of its creation when cancelled (platform time zone)."""
    return (
        pl.when(cancelled_expr(opts))
        .then(month_expr("created_at", opts.timezone))
        .otherwise(month_expr("started_at", opts.timezone))
    )


def match_status(
    matches: pl.LazyFrame, disconnects: pl.LazyFrame, opts: FaceAFaceOptions
) -> pl.LazyFrame:
    """The matches with `status` (played/cancelled/forfeit), `forfeit_by`, `forfeit_at`, `month`.

    Month: calendar month (platform time zone) of the start; of the creation when cancelled.
    When both players forfeit, the one whose forfeit came first loses (ties: player_a).
    """
    marked = matches.with_columns(cancelled_expr(opts).alias("_cancelled"))
    return (
        marked.join(_forfeits(marked, disconnects, opts), on="match_id", how="left")
        .with_columns(
            pl.when(pl.col("_cancelled"))
            .then(pl.lit("cancelled"))
            .when(pl.col("forfeit_by").is_not_null())
            .then(pl.lit("forfeit"))
            .otherwise(pl.lit("played"))
            .alias("status"),
            match_month_expr(opts).alias("month"),
        )
        .drop("_cancelled")
    )


def _forfeits(
    matches: pl.LazyFrame, disconnects: pl.LazyFrame, opts: FaceAFaceOptions
) -> pl.LazyFrame:
    """match_id, forfeit_by, forfeit_at: the first player of each started match to forfeit."""
    end = pl.col("ended_at")
    back = pl.col("reconnected_at")
    deadline = pl.col("disconnected_at") + pl.duration(minutes=opts.forfeit_disconnect_min)
    never_back = back.is_null() | (end.is_not_null() & (back > end))
    too_long = back.is_not_null() & (back > deadline)
    return (
        disconnects.select("match_id", "player_id", "disconnected_at", "reconnected_at")
        .join(
            matches.filter(~pl.col("_cancelled")).select(
                "match_id", "player_a", "player_b", "ended_at"
            ),
            on="match_id",
            how="inner",
        )
        .filter(
            (pl.col("player_id") == pl.col("player_a"))
            | (pl.col("player_id") == pl.col("player_b"))
        )
        .filter(end.is_null() | (pl.col("disconnected_at") < end))  # after the end: no forfeit
        .filter(never_back | too_long)
        .with_columns(
            pl.when(end.is_not_null() & (end < deadline))
            .then(end)
            .otherwise(deadline)
            .alias("forfeit_at"),
            (pl.col("player_id") == pl.col("player_b")).alias("_is_b"),
        )
        .sort("match_id", "forfeit_at", "_is_b")
        .group_by("match_id")
        .agg(pl.col("player_id").first().alias("forfeit_by"), pl.col("forfeit_at").first())
    )


def with_unfinished(deals: pl.LazyFrame, opts: FaceAFaceOptions) -> pl.LazyFrame:
    """Deal rows with `unfinished`: no end, no score, or over the time limit of its role."""
    limit_us = (
        pl.when(pl.col("role") == "attack")
        .then(pl.lit(opts.attack_limit_s))
        .otherwise(pl.lit(opts.defense_limit_s))
        * 1_000_000
    )
    took_us = (pl.col("finished_at") - pl.col("started_at")).dt.total_microseconds()
    return deals.with_columns(
        (
            pl.col("finished_at").is_null()
            | pl.col("points_made").is_null()
            | pl.col("points_conceded").is_null()
            | (took_us > limit_us)
        ).alias("unfinished")
    )
