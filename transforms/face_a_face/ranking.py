"""Monthly tournament points of face_a_face.md ("Tournament points").

- one ranked match per (month, player, opponent, type), the Bot included: a later one (by start)
  is kept but treated as unranked and reported;
- match value: win 3×, draw 2×, loss 1× the opponent's Elo at the start of the match, forfeit 0;
- points = (best 6 Attaque values + best 6 Classique values) / 12, always / 12, and ranks with
  ties sharing the rank: the SQL model `sql/ff_monthly_ranking.sql` (run by `monthly_ranking`).
"""

from __future__ import annotations

import polars as pl

from transforms.face_a_face.options import FaceAFaceOptions
from transforms.sql_models import run_model

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


def monthly_ranking(
    matches_with_elo: pl.LazyFrame, elo: pl.LazyFrame, opts: FaceAFaceOptions
) -> pl.LazyFrame:
    """ff_monthly_ranking (sql/ff_monthly_ranking.sql): best 6 + best 6, / 12, ranks with ties.

    `matches_with_elo`: ff_matches of the months to rank (with value_a/value_b); `elo`: ff_elo
    rows up to the end of those months (all history before them, for the month-end rating).
    Columns: month, rank, player_id, points, elo, elo_rounded (as the site shows it), matches,
    attaque_counted, classique_counted,
    and surcontrat_counted when the attack types are not pooled.
    """
    params = {
        "bot_id": opts.bot_id,
        "pool_attack_types": opts.pool_attack_types,
        "best_per_category": opts.best_per_category,
        "divisor": opts.divisor,
        "points_decimals": opts.points_decimals,
        "elo_start": float(opts.elo_start),
        "timezone": opts.timezone,
    }
    ranking = run_model("ff_monthly_ranking", params, ff_matches=matches_with_elo, ff_elo=elo)
    if opts.pool_attack_types:
        ranking = ranking.drop("surcontrat_counted")
    return ranking.lazy()
