"""Score Face-à-Face matches: deal results, match status and result, and cross-record issues.

`score_matches` is the entry point; each rule lives in its own module (time_rules,
match_points, ranking.one_ranked_match_per_key). Elo comes after, over all history (elo.py).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from transforms.calendar import RAW_MONTH
from transforms.face_a_face.match_points import outcome, with_match_points
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.face_a_face.ranking import one_ranked_match_per_key
from transforms.face_a_face.time_rules import match_status, with_unfinished
from transforms.issues import data_issues
from transforms.scores import Scores

MATCH_COLUMNS = (
    "match_id",
    "match_type",
    "player_a",
    "player_b",
    "ranked",
    "created_at",
    "scheduled_at",
    "started_at",
    "ended_at",
)
DEAL_COLUMNS = (
    "match_id",
    "deal_no",
    "role",
    "player_id",
    "started_at",
    "finished_at",
    "points_made",
    "points_conceded",
)


class FaceAFaceScores(Scores):
    """`tables`: `ff_deal_results` (match × deal) and `ff_match_scores` (the matches before
    Elo: `elo.with_elo` turns them into `ff_matches`); `issues`: `data_issues` rows."""


TABLES = ("ff_deal_results", "ff_match_scores")
INPUTS = ("ff.match", "ff.deal", "ff.disconnect")


def score_matches(
    inputs: Mapping[str, pl.LazyFrame | pl.DataFrame], opts: FaceAFaceOptions
) -> FaceAFaceScores:
    """Scores the matches of `inputs` (bronze `ff.match`, `ff.deal`, `ff.disconnect` rows,
    re-deliveries resolved; one or more months)."""
    matches, deals, disconnects = (inputs[name].lazy() for name in INPUTS)
    status = match_status(matches.select(MATCH_COLUMNS), disconnects, opts)
    live = status.filter(pl.col("status") != "cancelled").select(
        "match_id", "month", "match_type", "player_a", "player_b"
    )
    sided = (
        with_unfinished(deals.select(*DEAL_COLUMNS, pl.col(RAW_MONTH).alias("deal_month")), opts)
        .with_columns((pl.col("points_made") - pl.col("points_conceded")).alias("d"))
        .join(live, on="match_id", how="left")
        .with_columns(
            pl.when(pl.col("player_id") == pl.col("player_a"))
            .then(pl.lit("a"))
            .when(pl.col("player_id") == pl.col("player_b"))
            .then(pl.lit("b"))
            .alias("side")
        )
    )
    # .cache(): each of these feeds several outputs; computed once per collect_all
    sided = sided.cache()
    deal_results = with_match_points(_pairs(sided, live), opts).cache()
    totals = deal_results.group_by("match_id").agg(
        pl.col("mp_a").sum(),
        pl.col("mp_b").sum(),
        pl.col("role_a").is_not_null().sum().alias("deals_a"),
        pl.col("role_b").is_not_null().sum().alias("deals_b"),
        (pl.col("role_a") == "attack").sum().alias("attack_a"),
        (pl.col("role_b") == "attack").sum().alias("attack_b"),
        (pl.col("role_a") != pl.col("role_b")).sum().alias("role_mismatches"),
    )
    scored = (
        status.join(totals, on="match_id", how="left")
        .with_columns(pl.col("deals_a", "deals_b").fill_null(0))
        .with_columns(
            # a played match needs both players' deals; a forfeit may come before any deal
            (
                (pl.col("status") == "forfeit")
                | ((pl.col("deals_a") > 0) & (pl.col("deals_b") > 0))
            ).alias("_scorable"),
            # a forfeit without a logged end ends at the forfeit
            pl.coalesce("ended_at", "forfeit_at").alias("ended_at"),
        )
        .with_columns(
            pl.when((pl.col("status") != "cancelled") & pl.col("_scorable"))
            .then(pl.col(c).fill_null(0))
            .alias(c)
            for c in ("mp_a", "mp_b")
        )
        .with_columns(outcome("a").alias("outcome_a"), outcome("b").alias("outcome_b"))
    )
    ranked = (
        one_ranked_match_per_key(scored)
        .with_columns(
            (
                pl.col("first_of_key")
                & pl.col("outcome_a").is_not_null()
                & pl.col("ended_at").is_not_null()
            ).alias("counts_for_ranking")
        )
        .cache()
    )
    deal_results = deal_results.sort("match_id", "deal_no").select(
        "match_id",
        "month",
        "deal_no",
        "role",
        "role_a",
        "role_b",
        "d_a",
        "d_b",
        "unfinished_a",
        "unfinished_b",
        "delta",
        "mp_a",
        "mp_b",
    )
    match_scores = ranked.sort("month", "match_id").select(
        "match_id",
        "month",
        "match_type",
        "player_a",
        "player_b",
        "ranked",
        "status",
        "forfeit_by",
        "mp_a",
        "mp_b",
        "outcome_a",
        "outcome_b",
        "counts_for_ranking",
        "rematch_of",
        "created_at",
        "scheduled_at",
        "started_at",
        "ended_at",
    )
    issues = pl.concat(
        [
            _deal_issues(sided, status),
            _disconnect_issues(disconnects, status),
            _match_issues(ranked, opts),
        ],
        how="vertical",
    ).sort("month", "kind", "keys", "detail", nulls_last=True)
    return FaceAFaceScores(dict(zip(TABLES, (deal_results, match_scores), strict=True)), issues)


def _pairs(sided: pl.LazyFrame, live: pl.LazyFrame) -> pl.LazyFrame:
    """One row per (match, deal_no) with both players' deal; a missing row is unfinished."""

    def side(s: str) -> pl.LazyFrame:
        return sided.filter(pl.col("side") == s).select(
            "match_id",
            "deal_no",
            pl.col("role").alias(f"role_{s}"),
            pl.col("d").alias(f"d_{s}"),
            pl.col("unfinished").alias(f"unfinished_{s}"),
        )

    return (
        side("a")
        .join(side("b"), on=["match_id", "deal_no"], how="full", coalesce=True)
        .join(live.select("match_id", "month"), on="match_id", how="inner")
        .with_columns(
            pl.coalesce("role_a", "role_b").alias("role"),
            pl.col("unfinished_a", "unfinished_b").fill_null(True),
        )
    )


def _deal_issues(sided: pl.LazyFrame, status: pl.LazyFrame) -> pl.LazyFrame:
    """Deal rows that belong to no player of a started match (one issue per match × player)."""
    stray = (
        sided.filter(pl.col("side").is_null())
        .group_by("match_id", "player_id")
        .agg(pl.len().alias("rows"), pl.col("deal_month").first())
        .join(
            status.select("match_id", "month", "status", "player_a", "player_b"),
            on="match_id",
            how="left",
        )
        .with_columns(
            pl.coalesce("month", "deal_month").alias("month"),
            pl.when(pl.col("status").is_null())
            .then(pl.lit("an unknown match"))
            .when(pl.col("status") == "cancelled")
            .then(pl.lit("a cancelled match"))
            .otherwise(pl.format("a match between {} and {}", "player_a", "player_b"))
            .alias("what"),
        )
    )
    return data_issues(
        stray,
        "ff_deal_player_not_in_match",
        ["match_id", "player_id"],
        pl.format("{} deal rows of {} for {}: not scored", "rows", "player_id", "what"),
    )


def _disconnect_issues(disconnects: pl.LazyFrame, status: pl.LazyFrame) -> pl.LazyFrame:
    """Disconnections of a player who is not in the match (they cannot forfeit it)."""
    stray = (
        disconnects.join(
            status.select("match_id", "month", "player_a", "player_b"), on="match_id", how="inner"
        )
        .filter(
            (pl.col("player_id") != pl.col("player_a"))
            & (pl.col("player_id") != pl.col("player_b"))
        )
        .group_by("match_id", "player_id")
        .agg(pl.len().alias("rows"), pl.col("month", "player_a", "player_b").first())
    )
    return data_issues(
        stray,
        "ff_disconnect_player_not_in_match",
        ["match_id", "player_id"],
        pl.format(
            "{} disconnection(s) of {} in a match between {} and {}: ignored",
            "rows",
            "player_id",
            "player_a",
            "player_b",
        ),
    )


def _match_issues(matches: pl.LazyFrame, opts: FaceAFaceOptions) -> pl.LazyFrame:
    live = matches.filter(pl.col("status") != "cancelled")
    deals = opts.deals_per_match
    issues = []
    for s in ("a", "b"):
        player = pl.col(f"player_{s}")
        no_deals = live.filter(pl.col(f"deals_{s}") == 0)
        issues.append(
            data_issues(
                no_deals,
                "ff_player_without_deals",
                ["match_id", f"player_{s}"],
                pl.format("player {} has no deal rows", player)
                + pl.when(pl.col("status") == "forfeit")
                .then(pl.lit(""))
                .otherwise(pl.lit(": match not scored")),
            )
        )
        expected_attack = pl.col("match_type").replace_strict(opts.attack_deals(), default=None)
        attack, dealt = pl.col(f"attack_{s}"), pl.col(f"deals_{s}")
        # a forfeit may cut the match short: then only too many of a role is wrong
        short = pl.col("status") == "forfeit"
        bad_roles = live.filter(
            (dealt > 0)
            & pl.when(short)
            .then((attack > expected_attack) | (dealt - attack > deals - expected_attack))
            .otherwise((dealt != deals) | (attack != expected_attack))
        )
        issues.append(
            data_issues(
                bad_roles,
                "ff_roles",
                ["match_id", f"player_{s}"],
                pl.format(
                    "{} {}: {} attack + {} defense deals, expected {} + {}",
                    "match_type",
                    player,
                    attack,
                    dealt - attack,
                    expected_attack,
                    deals - expected_attack,
                ),
            )
        )
    issues.append(
        data_issues(
            live.filter(pl.col("role_mismatches") > 0),
            "ff_roles",
            ["match_id"],
            pl.format("{} deals with different roles for the two players", "role_mismatches"),
        )
    )
    issues.append(
        data_issues(
            live.filter(pl.col("ranked") & ~pl.col("first_of_key")),
            "ff_rematch",
            ["match_id", "player_a", "player_b", "match_type"],
            pl.format(
                "second ranked {} match of {} vs {} this month (first: {}): kept, not ranked",
                "match_type",
                "player_a",
                "player_b",
                "rematch_of",
            ),
        )
    )
    issues.append(
        data_issues(
            live.filter(pl.col("ended_at").is_null()),
            "ff_match_not_ended",
            ["match_id"],
            pl.lit("started match without end: no Elo, no points"),
        )
    )
    return pl.concat(issues, how="vertical")
