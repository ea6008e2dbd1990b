"""Monthly indicators of the Simultané: Indice and Victoire per month and per day (spec).

- Indice Duplicaté = (sum of the player's `indice_best` best completed tournament results of
  the month) / indice_best, always divided by indice_best: before 20 results each one adds
  result / 20; from the 21st on a result enters only if it beats the worst kept one.
- Victoire Duplicaté = (sum of the `victoire_best` best results among the completed tournaments
  the player won that month) / victoire_best, always divided by victoire_best.

Both read the points of completed participations only; humans only (the bot has none).
Month and day are those of the tournament's start in the platform time zone.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from transforms.simultane.blocks import pct_actuel_at
from transforms.simultane.options import SimultaneOptions

PLAYER = "player_id"
TS = pl.Datetime("us", "UTC")


def per_slot(total: pl.Expr, slots: int) -> pl.Expr:
    """An integer sum of points over the fixed number of slots (Indice /20, Victoire /10).

    Polars divides by a constant by multiplying by its reciprocal (27617 / 20 would give
    1380.8500000000001); rounding to 1e-9 restores the correctly rounded quotient.
    """
    return (total / slots).round(9)


def indicators(opts: SimultaneOptions) -> list[pl.Expr]:
    """Aggregations over one player's completed results (points, is_winner) of a period."""
    won = pl.col("points").filter(pl.col("is_winner"))
    return [
        per_slot(pl.col("points").top_k(opts.indice_best).sum(), opts.indice_best).alias("indice"),
        per_slot(won.top_k(opts.victoire_best).sum(), opts.victoire_best).alias("victoire"),
        pl.len().cast(pl.Int64).alias("tournaments"),
        pl.col("is_winner").sum().cast(pl.Int64).alias("wins"),
    ]


def _completed_human(tournament_results: pl.LazyFrame) -> pl.LazyFrame:
    return tournament_results.filter(~pl.col("is_bot") & pl.col("completed"))


def month_end(month: pl.Expr, timezone: str) -> pl.Expr:
    """Last instant (UTC, 1 us before the next month starts in `timezone`) of a YYYY-MM month."""
    first = pl.concat_str(month, pl.lit("-01")).str.to_date("%Y-%m-%d")
    next_start = (
        first.dt.offset_by("1mo")
        .cast(pl.Datetime("us"))
        .dt.replace_time_zone(timezone)
        .dt.convert_time_zone("UTC")
    )
    return next_start - pl.duration(microseconds=1)


def monthly(
    tournament_results: pl.LazyFrame,
    blocks: pl.LazyFrame,
    opts: SimultaneOptions,
    as_of: datetime | None = None,
) -> pl.LazyFrame:
    """Table `simultane_monthly` (humans, player x month).

    One row per human who took part in a tournament of the month (completed or not).
    Columns: month, player_id, indice, victoire (Float64), tournaments (completed ones), wins
    (completed and won), pct_actuel (as of the month's end, or of `as_of` when earlier;
    `as_of` defaults to the latest result date of `blocks`), k, representative (k == 20),
    rank_indice (1 = best Indice of the month; ties share). Sorted by month, rank_indice,
    player_id. `blocks` is the full `simultane_blocks` history (player_id, block_no, ended_at,
    pct_cumul are used).
    """
    humans = tournament_results.filter(~pl.col("is_bot"))
    players = humans.select("month", PLAYER).unique()
    values = _completed_human(tournament_results).group_by(["month", PLAYER]).agg(indicators(opts))
    if as_of is None:
        latest = blocks.select(pl.col("ended_at").max().alias("_latest"))
    else:
        latest = pl.LazyFrame({"_latest": [as_of]}, schema={"_latest": TS})
    points = (
        players.join(latest, how="cross")
        .with_columns(as_of=pl.min_horizontal(month_end(pl.col("month"), opts.timezone), "_latest"))
        .with_columns(pl.col("as_of").fill_null(month_end(pl.col("month"), opts.timezone)))
        .drop("_latest")
    )
    actuel = pct_actuel_at(blocks, points, opts)
    return (
        actuel.join(values, on=["month", PLAYER], how="left")
        .with_columns(
            pl.col("indice", "victoire").fill_null(0.0),
            pl.col("tournaments", "wins").fill_null(0),
        )
        .with_columns(
            rank_indice=pl.col("indice").rank("min", descending=True).over("month").cast(pl.Int64)
        )
        .select(
            "month",
            PLAYER,
            "indice",
            "victoire",
            "tournaments",
            "wins",
            "pct_actuel",
            "k",
            "representative",
            "rank_indice",
        )
        .sort(["month", "rank_indice", PLAYER])
    )


def daily(tournament_results: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """Table `simultane_daily` (humans): Indice and Victoire month to date, as of each evening.

    **Choice**: one row per player per day on which they have a completed result in that
    month (the indicators only change on those days; a day without a row keeps the value of
    the player's previous row of the month). Day = calendar date of the tournament's start in
    the platform time zone. Columns: date, month, player_id, indice, victoire, tournaments,
    wins (all month to date, that day included). Sorted by month, player_id, date.

    Speed: while a player has at most `indice_best` results (`victoire_best` wins) so far, the
    best ones are all of them and the value is a running sum; only the days past that count
    take the best results among all of the month's results up to that day (`indicators`).
    """
    keys = ["month", PLAYER]
    results = _completed_human(tournament_results).with_columns(
        date=pl.col("tournament_start").dt.convert_time_zone(opts.timezone).dt.date()
    )
    won = pl.col("points").filter(pl.col("is_winner"))
    per_day = results.group_by([*keys, "date"]).agg(
        pl.col("points").sum().alias("_points"),
        won.sum().alias("_won_points"),
        pl.len().cast(pl.Int64).alias("_tournaments"),
        pl.col("is_winner").sum().cast(pl.Int64).alias("_wins"),
    )
    running = per_day.sort([*keys, "date"]).with_columns(
        pl.col("_points", "_won_points", "_tournaments", "_wins").cum_sum().over(keys)
    )
    crowded = running.filter(
        (pl.col("_tournaments") > opts.indice_best) | (pl.col("_wins") > opts.victoire_best)
    ).select(*keys, "date")
    best_so_far = (
        crowded.join(
            results.select(*keys, pl.col("date").alias("_played"), "points", "is_winner"),
            on=keys,
        )
        .filter(pl.col("_played") <= pl.col("date"))
        .group_by([*keys, "date"])
        .agg(indicators(opts))
        .select(*keys, "date", pl.col("indice").alias("_indice"), pl.col("victoire").alias("_v"))
    )
    return (
        running.join(best_so_far, on=[*keys, "date"], how="left")
        .select(
            "date",
            "month",
            PLAYER,
            pl.when(pl.col("_tournaments") > opts.indice_best)
            .then(pl.col("_indice"))
            .otherwise(per_slot(pl.col("_points"), opts.indice_best))
            .alias("indice"),
            pl.when(pl.col("_wins") > opts.victoire_best)
            .then(pl.col("_v"))
            .otherwise(per_slot(pl.col("_won_points"), opts.victoire_best))
            .alias("victoire"),
            pl.col("_tournaments").alias("tournaments"),
            pl.col("_wins").alias("wins"),
        )
        .sort(["month", PLAYER, "date"])
    )
