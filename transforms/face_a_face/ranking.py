"""Monthly tournament points of face_a_face.md ("Tournament points").

- one ranked match per (month, player, opponent, type), the Bot included: a later one (by start)
  is kept but treated as unranked and reported;
- match value: win 3×, draw 2×, loss 1× the opponent's Elo at the start of the match, forfeit 0;
- points = (best 6 Attaque values + best 6 Classique values) / 12, always / 12;
- ranks: ties in points share the rank.
"""

from __future__ import annotations

import polars as pl

from transforms.face_a_face.options import FaceAFaceOptions
from transforms.records import month_expr

OUTCOME_FACTOR = {"win": 3, "draw": 2, "loss": 1}


def one_ranked_match_per_key(matches: pl.LazyFrame) -> pl.LazyFrame:
    """Add `first_of_key` (bool) and `rematch_of` (match_id of the first, for later ones).

    Key: (month, the two players in any order, match_type), among ranked matches that were not
    cancelled (a cancelled match does not use up the key). Order: start, then match_id.
    `first_of_key` is false for unranked and cancelled matches.
    """
    lo = pl.min_horizontal("player_a", "player_b")
    hi = pl.max_horizontal("player_a", "player_b")
    keyed = pl.col("ranked") & (pl.col("status") != "cancelled")
    key = ["month", "_lo", "_hi", "match_type"]
    firsts = (
        matches.filter(keyed)
        .select("match_id", "month", "match_type", "started_at", lo.alias("_lo"), hi.alias("_hi"))
        .sort("started_at", "match_id")
        .group_by(key)
        .agg(pl.col("match_id").first().alias("rematch_of"))
    )
    return (
        matches.with_columns(lo.alias("_lo"), hi.alias("_hi"))
        .join(firsts, on=key, how="left")
        .with_columns(
            (keyed & (pl.col("rematch_of") == pl.col("match_id")))
            .fill_null(False)
            .alias("first_of_key")
        )
        .with_columns(
            pl.when(keyed & ~pl.col("first_of_key")).then(pl.col("rematch_of")).alias("rematch_of")
        )
        .drop("_lo", "_hi")
    )


def match_value(side: str) -> pl.Expr:
    """Value of the match for player `side`: factor × the opponent's Elo before the match.

    Null for a match that does not count for the ranking; 0 for the forfeiting player.
    """
    other = "b" if side == "a" else "a"
    factor = pl.col(f"outcome_{side}").replace_strict(OUTCOME_FACTOR, default=0)
    forfeited = (pl.col("status") == "forfeit") & (pl.col("forfeit_by") == pl.col(f"player_{side}"))
    return (
        pl.when(~pl.col("counts_for_ranking"))
        .then(None)
        .when(forfeited)
        .then(pl.lit(0.0))
        .otherwise(factor * pl.col(f"elo_{other}_before"))
    )


def category(opts: FaceAFaceOptions) -> pl.Expr:
    """Ranking category of a match: attaque (both attack types pooled, Decision) or classique."""
    if opts.pool_attack_types:
        return (
            pl.when(pl.col("match_type") == "classique")
            .then(pl.lit("classique"))
            .otherwise(pl.lit("attaque"))
        )
    return pl.col("match_type")


def monthly_ranking(
    matches_with_elo: pl.LazyFrame, elo: pl.LazyFrame, opts: FaceAFaceOptions
) -> pl.LazyFrame:
    """ff_monthly_ranking: month, rank, player_id, points, elo, matches, *_counted.

    `matches_with_elo`: ff_matches of the months to rank (with value_a/value_b); `elo`: ff_elo
    rows up to the end of those months (all history before them, for the month-end rating).
    A player is ranked in a month when at least one of their matches counts for the ranking;
    the Bot never is. `elo` is the rating after their last rated match that ended before the end
    of the month (platform time zone), `elo_start` if none.
    """
    sides = pl.concat(
        [
            matches_with_elo.filter(pl.col("status") != "cancelled").select(
                "month",
                "match_id",
                pl.col(f"player_{s}").alias("player_id"),
                category(opts).alias("category"),
                "counts_for_ranking",
                pl.col(f"value_{s}").alias("value"),
            )
            for s in ("a", "b")
        ],
        how="vertical",
    ).filter(pl.col("player_id") != opts.bot_id)
    played = sides.group_by("month", "player_id").agg(pl.len().alias("matches"))
    best = (
        sides.filter(pl.col("counts_for_ranking"))
        .sort("value", "match_id", descending=[True, False])
        .with_columns(pl.int_range(pl.len()).over("month", "player_id", "category").alias("_slot"))
        .filter(pl.col("_slot") < opts.best_per_category)
    )
    totals = best.group_by("month", "player_id").agg(
        (pl.col("value").sort().sum() / opts.divisor).round(opts.points_decimals).alias("points"),
        (pl.col("category") == "attaque").sum().alias("attaque_counted"),
        (pl.col("category") == "classique").sum().alias("classique_counted"),
        *(
            []
            if opts.pool_attack_types
            else [(pl.col("category") == "attaque_surcontrat").sum().alias("surcontrat_counted")]
        ),
    )
    ranked = totals.join(played, on=["month", "player_id"], how="left")
    return (
        _with_month_end_elo(ranked, elo, opts)
        .with_columns(pl.col("points").rank("min", descending=True).over("month").alias("rank"))
        .sort("month", "rank", "player_id")
        .select(
            "month",
            "rank",
            "player_id",
            "points",
            "elo",
            "matches",
            "attaque_counted",
            "classique_counted",
            *([] if opts.pool_attack_types else ["surcontrat_counted"]),
        )
    )


def _month_index(month: pl.Expr) -> pl.Expr:
    """YYYY-MM as an integer month count, for as-of joins."""
    return month.str.slice(0, 4).cast(pl.Int64) * 12 + month.str.slice(5, 2).cast(pl.Int64)


def _with_month_end_elo(
    ranked: pl.LazyFrame, elo: pl.LazyFrame, opts: FaceAFaceOptions
) -> pl.LazyFrame:
    """Attach `elo`: the rating after the player's last rated match ending by the month end."""
    last_per_month = (
        elo.select(
            "player_id",
            month_expr("ended_at", opts.timezone).alias("_end_month"),
            "elo_seq",
            "elo_after",
        )
        .sort("elo_seq")
        .group_by("player_id", "_end_month")
        .agg(pl.col("elo_after").last())
        .with_columns(_month_index(pl.col("_end_month")).alias("_m"))
        .sort("_m")
    )
    return (
        ranked.with_columns(_month_index(pl.col("month")).alias("_m"))
        .sort("_m")
        .join_asof(
            last_per_month, on="_m", by="player_id", strategy="backward", check_sortedness=False
        )
        .with_columns(pl.col("elo_after").fill_null(opts.elo_start).alias("elo"))
    )
