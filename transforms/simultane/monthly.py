"""Monthly indicators of the Simultané: Indice and Victoire per month and per day (spec).

- Indice Duplicaté = (sum of the player's `indice_best` best completed tournament results of
  the month) / indice_best, always divided by indice_best: before 20 results each one adds
  result / 20; from the 21st on a result enters only if it beats the worst kept one.
- Victoire Duplicaté = (sum of the `victoire_best` best results among the completed tournaments
  the player won that month) / victoire_best, always divided by victoire_best.

Both read the points of completed participations only; humans only (the bot has none).
Month and day are those of the tournament's start in the platform time zone. The rules are the
SQL models `sql/simultane_daily.sql` (both indicators, as of each evening) and
`sql/simultane_monthly.sql` (the month's values, % actuel, rank); this module runs them.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from transforms.calendar import day_expr, month_end
from transforms.simultane.blocks import PLAYER, TS, pct_actuel_at
from transforms.simultane.options import SimultaneOptions
from transforms.sql_models import run_model


def monthly(
    tournament_results: pl.LazyFrame,
    blocks: pl.LazyFrame,
    opts: SimultaneOptions,
    as_of: datetime | None = None,
    daily_rows: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Table `simultane_monthly` (humans, player x month): the SQL model
    `sql/simultane_monthly.sql` over the month-end rows of `simultane_daily` and % actuel.

    One row per human who took part in a tournament of the month (completed or not).
    Columns: month, player_id, indice, victoire (Float64), tournaments (completed ones), wins
    (completed and won), pct_actuel (as of the month's end, or of `as_of` when earlier;
    `as_of` defaults to the latest result date of `blocks`), k, representative (k == 20),
    rank_indice (1 = best Indice of the month; ties share), rank_victoire (the same by
    Victoire). Sorted by month, rank_indice,
    player_id. `blocks` is the full `simultane_blocks` history (player_id, block_no, ended_at,
    pct_cumul are used). `daily_rows`: the `daily` table of the same results when the caller
    has it already (else it is computed here).
    """
    players = tournament_results.filter(~pl.col("is_bot")).select("month", PLAYER).unique()
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
    actuel = pct_actuel_at(blocks, points, opts).select(
        "month", PLAYER, "pct_actuel", "k", "representative"
    )
    if daily_rows is None:
        daily_rows = daily(tournament_results, opts)
    return run_model(
        "simultane_monthly", simultane_pct_actuel=actuel, simultane_daily=daily_rows
    ).lazy()


def daily(tournament_results: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """Table `simultane_daily` (humans): Indice and Victoire month to date, as of each evening
    (the SQL model `sql/simultane_daily.sql`, where both indicators are computed).

    **Choice**: one row per player per day on which they have a completed result in that
    month (the indicators only change on those days; a day without a row keeps the value of
    the player's previous row of the month). Day = calendar date of the tournament's start in
    the platform time zone. Columns: date, month, player_id, indice, victoire, tournaments,
    wins (all month to date, that day included). Sorted by month, player_id, date.
    """
    results = tournament_results.select(
        "month",
        PLAYER,
        "is_bot",
        "completed",
        "points",
        "is_winner",
        date=day_expr("tournament_start", opts.timezone),
    )
    params = {"indice_best": opts.indice_best, "victoire_best": opts.victoire_best}
    return run_model("simultane_daily", params, simultane_tournament_results=results).lazy()
