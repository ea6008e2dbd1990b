"""Tournament results of the Simultané: Σ points, mp_pct, rank, winners, completed (spec)."""

from __future__ import annotations

import polars as pl

from transforms.simultane.options import SimultaneOptions

TOURNAMENT = ["tournament_id"]


def tournament_results(deal_results: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """Table `simultane_tournament_results` (participant x tournament, bot included).

    Columns: tournament_id, month, tournament_start, player_id, is_bot, points (Σ points of the
    scored deals), top (Σ top of the scored deals), mp_pct (100 * points / top; null when no
    deal was scored), deals_played (rows of the participant in the tournament), rank (1 = best
    points; equal points share the rank), is_winner (rank 1: co-winners all win; when the bot
    has the best result alone no human wins), completed (a row for every one of the
    tournament's `deals_in_tournament` deals and no deal with status `quit`).
    Sorted by tournament_id, rank, player_id.
    """
    del opts  # no setting applies here; kept for a uniform signature
    per_player = deal_results.group_by([*TOURNAMENT, "player_id"]).agg(
        pl.col("month").first(),
        pl.col("tournament_start").first(),
        pl.col("is_bot").first(),
        pl.col("points").sum().alias("points"),
        pl.col("top").sum().alias("top"),
        pl.len().cast(pl.Int64).alias("deals_played"),
        pl.col("deals_in_tournament").max().alias("_deals_in_tournament"),
        (pl.col("status") == "quit").any().alias("_quit"),
    )
    rank = pl.col("points").rank("min", descending=True).over(TOURNAMENT).cast(pl.Int64)
    return (
        per_player.with_columns(rank=rank)
        .with_columns(
            mp_pct=pl.when(pl.col("top") > 0).then(100.0 * pl.col("points") / pl.col("top")),
            is_winner=pl.col("rank") == 1,
            # rows are unique per (tournament, deal, player) after `latest_delivery`
            completed=(pl.col("deals_played") == pl.col("_deals_in_tournament")) & ~pl.col("_quit"),
        )
        .select(
            "tournament_id",
            "month",
            "tournament_start",
            "player_id",
            "is_bot",
            "points",
            "top",
            "mp_pct",
            "deals_played",
            "rank",
            "is_winner",
            "completed",
        )
        .sort(["tournament_id", "rank", "player_id"])
    )
