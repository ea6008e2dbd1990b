"""Per-deal scoring of the Simultané: % vs the bot, matchpoints, top and bulle (spec/simultane.md).

For one participant i on one deal (F = points made, L = points conceded, b = the bot's table):

    P_i = 100 + 100 * (D_i - D_b) / (T_i + T_b)   (100 when T_i + T_b = 0), D = F - L, T = F + L
    points_i = 2 * #{j : P_j < P_i} + #{j != i : P_j = P_i},  top = 2 (n - 1), bulle = 0

An unfinished deal (status not `finished`, no `finished_at`, or longer than the time limit) gets
P = 0 and 0 points, and every finished participant beats it. A deal with no finished bot row has
no reference: not scored (pct, points, top null) and reported by `deal_issues`.

Input: bronze `simultane.deal` rows with re-deliveries already resolved
(`transforms.deliveries.latest_delivery`, the one place that rule lives).

Speed: one sort by (tournament, deal, P) and then arithmetic on run boundaries, instead of
several window passes: in a deal sorted by P, a participant whose tie run spans positions
[r0, r1] of a deal starting at g0 has r0 - g0 participants below and r1 - r0 tied with it, so
points = 2 (r0 - g0) + (r1 - r0). Unfinished rows sort first (key -1) and are forced to 0.
"""

from __future__ import annotations

import polars as pl

from transforms.calendar import month_expr
from transforms.simultane.options import SimultaneOptions
from transforms.sql_models import run_model

DEAL = ["tournament_id", "deal_no"]

# Ties of P are decided on P rounded to 1e-9 so that float noise never breaks a tie.
TIE_DIGITS = 9
_UNFINISHED_KEY = -1.0  # below every finished P (P >= 0)

DEAL_RESULT_COLUMNS = [
    "tournament_id",
    "month",
    "tournament_start",
    "deals_in_tournament",
    "deal_no",
    "player_id",
    "is_bot",
    "status",
    "started_at",
    "finished_at",
    "played_at",
    "points_made",
    "points_conceded",
    "finished",
    "scored",
    "pct",
    "points",
    "top",
    "is_top",
    "is_bulle",
]


def finished_expr(opts: SimultaneOptions) -> pl.Expr:
    """Finished = logged finished AND finished_at present AND within the time limit (inclusive)."""
    return (
        (pl.col("status") == "finished")
        & pl.col("finished_at").is_not_null()
        & pl.col("points_made").is_not_null()
        & pl.col("points_conceded").is_not_null()
        & (
            (pl.col("finished_at") - pl.col("started_at"))
            <= pl.duration(seconds=opts.deal_time_limit_s)
        )
    ).fill_null(False)


def _bot_reference(column: str) -> pl.Expr:
    """D_b or T_b (`column`: _d, _t) of each row's deal, from the deal's finished bot row
    (lowest player_id if several; null when there is none): a window, not a join of the deals'
    bot rows back onto every row (measured: −12 % of the deal scoring)."""
    bot = pl.col("is_bot") & pl.col("finished")
    by_id = pl.col("player_id").filter(bot)
    return pl.col(column).filter(bot).sort_by(by_id).first().over(DEAL).alias(f"{column}_bot")


def pct_expr() -> pl.Expr:
    """P of the spec from integer D, T and the bot's D_b, T_b (columns _d, _t, _d_bot, _t_bot)."""
    stake = pl.col("_t") + pl.col("_t_bot")
    return (
        pl.when(pl.col("_d_bot").is_null())
        .then(None)
        .when(~pl.col("finished"))
        .then(0.0)
        .when(stake == 0)
        .then(100.0)
        .otherwise(100.0 + 100.0 * (pl.col("_d") - pl.col("_d_bot")) / stake)
        .cast(pl.Float64)
    )


def tournament_month(opts: SimultaneOptions) -> pl.Expr:
    """A tournament's month: the calendar month of its start in the platform time zone."""
    return month_expr("tournament_start", opts.timezone)


def _with_scoring_inputs(deals: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    return deals.with_columns(
        month=tournament_month(opts),
        finished=finished_expr(opts),
        played_at=pl.coalesce("finished_at", "started_at"),
        _d=pl.col("points_made") - pl.col("points_conceded"),
        _t=pl.col("points_made") + pl.col("points_conceded"),
    )


def score_deals(deals: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """Table `simultane_deal_results` (participant x deal), sorted by tournament, deal, P.

    Columns: tournament_id, month, tournament_start, deals_in_tournament, deal_no, player_id,
    is_bot, status, started_at, finished_at, played_at (finished_at else started_at),
    points_made, points_conceded, finished (bool, re-derived from status and timestamps),
    scored (bool: the deal has a finished bot row), pct (Float64; 0 when unfinished; null when
    not scored), points (Int64; null when not scored), top (Int64 = 2 (n - 1); null when not
    scored), is_top (a best P of the deal), is_bulle (a worst P of the deal; every unfinished).
    """
    rows = _with_scoring_inputs(deals, opts)
    scored_rows = rows.with_columns(_bot_reference("_d"), _bot_reference("_t")).with_columns(
        pct=pct_expr(),
        scored=pl.col("_d_bot").is_not_null(),
    )
    key = (
        pl.when(pl.col("finished")).then(pl.col("pct").round(TIE_DIGITS)).otherwise(_UNFINISHED_KEY)
    )
    ordered = scored_rows.with_columns(_key=key).sort([*DEAL, "_key", "player_id"])

    idx = pl.int_range(pl.len(), dtype=pl.Int64)
    new_deal = (
        (pl.col("tournament_id") != pl.col("tournament_id").shift(1))
        | (pl.col("deal_no") != pl.col("deal_no").shift(1))
    ).fill_null(True)
    new_run = (new_deal | (pl.col("_key") != pl.col("_key").shift(1))).fill_null(True)
    bounds = ordered.with_columns(_new_deal=new_deal, _new_run=new_run).with_columns(
        _g0=pl.when("_new_deal").then(idx).forward_fill(),
        _g1=pl.when(pl.col("_new_deal").shift(-1).fill_null(True)).then(idx).backward_fill(),
        _r0=pl.when("_new_run").then(idx).forward_fill(),
        _r1=pl.when(pl.col("_new_run").shift(-1).fill_null(True)).then(idx).backward_fill(),
    )
    scored = pl.col("scored")
    return bounds.select(
        *[c for c in DEAL_RESULT_COLUMNS[:14]],
        "scored",
        "pct",
        points=pl.when(~scored)
        .then(None)
        .when(pl.col("finished"))
        .then(2 * (pl.col("_r0") - pl.col("_g0")) + (pl.col("_r1") - pl.col("_r0")))
        .otherwise(0),
        top=pl.when(scored).then(2 * (pl.col("_g1") - pl.col("_g0"))),
        is_top=scored & pl.col("finished") & (pl.col("_r1") == pl.col("_g1")),
        is_bulle=scored & (pl.col("_r0") == pl.col("_g0")),
    )


def deal_issues(deals: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """`data_issues` rows of the Simultané deals (columns month, kind, keys, detail): the checks
    of the SQL model `sql/simultane_data_issues.sql` (`no_bot_reference`: a deal with no
    finished bot row, not scored for anyone; `several_bot_rows`; `deals_in_tournament_varies`),
    on the deals with `month` and `finished` derived here unless `deals` has them (the scored
    deal results, `score_tournaments`: not derived twice)."""
    names = deals.collect_schema().names()
    month = "month" if "month" in names else tournament_month(opts).alias("month")
    finished = "finished" if "finished" in names else finished_expr(opts).alias("finished")
    rows = deals.select(*DEAL, "player_id", "deals_in_tournament", "is_bot", month, finished)
    return run_model("simultane_data_issues", simultane_deal=rows).lazy()
