"""Tournament results of the Simultané: Σ points, mp_pct, rank, winners, completed (spec), and
the game's entry point `score_tournaments` (deals -> deal and tournament results, issues).

The rule of the results is the SQL model `sql/simultane_tournament_results.sql`; this runs it.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from transforms.scores import Scores
from transforms.simultane.options import SimultaneOptions
from transforms.simultane.scoring import deal_issues, score_deals
from transforms.sql_models import run_model

TABLES = ("simultane_deal_results", "simultane_tournament_results")


class SimultaneScores(Scores):
    """`tables`: `simultane_deal_results` (participant × deal) and
    `simultane_tournament_results` (participant × tournament); `issues`: `data_issues` rows."""


def score_tournaments(
    inputs: Mapping[str, pl.LazyFrame | pl.DataFrame], opts: SimultaneOptions
) -> SimultaneScores:
    """Scores the tournaments of `inputs` (bronze `simultane.deal` rows, re-deliveries
    resolved; whole tournaments). The deal results are materialised once: the tournament
    results and the caller's writes read them."""
    deals = inputs["simultane.deal"].lazy()
    deal_results = score_deals(deals, opts).collect()
    tournaments = tournament_results(deal_results.lazy(), opts)
    tables = dict(zip(TABLES, (deal_results.lazy(), tournaments), strict=True))
    return SimultaneScores(tables, deal_issues(deal_results.lazy(), opts))


# The columns of simultane_deal_results the model reads.
DEAL_COLUMNS = ["tournament_id", "month", "tournament_start", "deals_in_tournament", "player_id",
                "is_bot", "status", "points", "top"]  # fmt: skip


def tournament_results(deal_results: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """Table `simultane_tournament_results` (participant x tournament, bot included).

    Columns: tournament_id, month, tournament_start, player_id, is_bot, points (Σ points of the
    scored deals), top (Σ top of the scored deals), mp_pct (100 * points / top; null when no
    deal was scored), deals_played (rows of the participant in the tournament), rank (1 = best
    points; equal points share the rank), is_winner (rank 1: co-winners all win; when the bot
    has the best result alone no human wins), completed (a row for every one of the
    tournament's `deals_in_tournament` deals and no deal with status `quit`; rows are unique
    per tournament, deal and player after `latest_delivery`).
    Sorted by tournament_id, rank, player_id. `opts`: no setting applies here (the signature
    is that of every Simultané step).
    """
    del opts
    deals = deal_results.select(DEAL_COLUMNS)
    return run_model("simultane_tournament_results", simultane_deal_results=deals).lazy()
