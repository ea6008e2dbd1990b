"""Elo of face_a_face.md: the one sequential rule.

Each rating depends on every earlier match of both players, in order of match end, so it is a
loop over matches. The loop runs over plain Python lists of integer player indices (no dicts,
no per-row frame access); everything before (ordering, indexing) and after (joins back to the
matches, per-player history) is vectorised. The loop starts either from nothing (every match of
the history) or from each player's state after their last earlier match (`elo_state`): Elo
from a point in the order of end onwards, given the state there, is the same as Elo over the
whole history (a backfill and a nightly give the same ratings).

E = 1 / (1 + 10^((R_opp − R)/400)), the difference capped at ±elo_cap; R' = R + K·(S − E).
K (Decision, FIDE): k_new until the player has k_matches_threshold rated matches, then k_regular,
k_master once the rating has ever reached k_master_rating. The Bot is fixed at bot_elo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from transforms.face_a_face.options import FaceAFaceOptions
from transforms.face_a_face.ranking import match_value

SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}
ELO_SCALE = 400.0  # the 400 of the formula (not the cap)


@dataclass(frozen=True)
class EloRun:
    before_a: np.ndarray
    before_b: np.ndarray
    after_a: np.ndarray
    after_b: np.ndarray
    k_a: np.ndarray  # NaN for the Bot
    k_b: np.ndarray


def elo_ratings(
    player_a: np.ndarray,
    player_b: np.ndarray,
    score_a: np.ndarray,
    n_players: int,
    opts: FaceAFaceOptions,
    start_rating: np.ndarray | None = None,
    start_rated: np.ndarray | None = None,
    start_master: np.ndarray | None = None,
) -> EloRun:
    """Run Elo over matches already in order. Players are indices 0..n_players-1, -1 = Bot.

    `score_a` is 1 / 0.5 / 0 for player a. `start_rating`/`start_rated`/`start_master`
    (ratings, rated match counts and whether the rating ever reached k_master_rating, before
    the first match) default to elo_start, 0 and the start rating ≥ k_master_rating.
    """
    rating = (
        [float(opts.elo_start)] * n_players
        if start_rating is None
        else [float(r) for r in start_rating]
    )
    rated = [0] * n_players if start_rated is None else [int(c) for c in start_rated]
    master = [r >= opts.k_master_rating for r in rating]
    if start_master is not None:
        master = [m or bool(s) for m, s in zip(master, start_master, strict=True)]
    n = len(player_a)
    out = [[0.0] * n for _ in range(6)]
    _loop(player_a.tolist(), player_b.tolist(), score_a.tolist(), rating, rated, master, out, opts)
    return EloRun(*(np.asarray(col, dtype=np.float64) for col in out))


def _loop(ia, ib, sa, rating, rated, master, out, opts: FaceAFaceOptions) -> None:
    """The sequential part: one pass over the matches, updating `rating` in place."""
    before_a, before_b, after_a, after_b, k_a, k_b = out
    bot, cap, scale = float(opts.bot_elo), float(opts.elo_cap), ELO_SCALE
    k_new, k_regular, k_master = float(opts.k_new), float(opts.k_regular), float(opts.k_master)
    threshold, master_rating = opts.k_matches_threshold, opts.k_master_rating
    nan = float("nan")

    def rate(p: int, r: float, surprise: float) -> tuple[float, float]:
        """Player p's rating after the match (rating r before, S − E) and the K used."""
        k = k_master if master[p] else (k_new if rated[p] < threshold else k_regular)
        r = r + k * surprise
        rating[p] = r
        rated[p] += 1
        if r >= master_rating:
            master[p] = True
        return r, k

    for i in range(len(ia)):
        a = ia[i]
        b = ib[i]
        ra = rating[a] if a >= 0 else bot
        rb = rating[b] if b >= 0 else bot
        diff = rb - ra
        if diff > cap:
            diff = cap
        elif diff < -cap:
            diff = -cap
        expected_a = 1.0 / (1.0 + 10.0 ** (diff / scale))
        surprise_a = sa[i] - expected_a  # S_b − E_b is exactly its opposite
        before_a[i] = ra
        before_b[i] = rb
        if a >= 0:
            ra, k_a[i] = rate(a, ra, surprise_a)
        else:
            k_a[i] = nan
        if b >= 0:
            rb, k_b[i] = rate(b, rb, -surprise_a)
        else:
            k_b[i] = nan
        after_a[i] = ra
        after_b[i] = rb


STATE_SCHEMA = {
    "player_id": pl.String,
    "elo": pl.Float64,
    "rated": pl.Int64,
    "master": pl.Boolean,
    "elo_seq": pl.Int64,
    "ended_at": pl.Datetime("us", "UTC"),
}


def elo_state(elo: pl.LazyFrame, opts: FaceAFaceOptions) -> pl.LazyFrame:
    """Each player's state after the `ff_elo` rows given (a prefix of the Elo order): rating
    (elo_after of their last row), rated matches (their rows), master (ever ≥
    k_master_rating, start included), and the elo_seq and ended_at of their last row.
    Columns of STATE_SCHEMA."""
    return (
        elo.group_by("player_id")
        .agg(
            pl.col("elo_after").sort_by("elo_seq").last().alias("elo"),
            pl.len().cast(pl.Int64).alias("rated"),
            (pl.col("elo_after").max() >= opts.k_master_rating).alias("master"),
            pl.col("elo_seq").max().cast(pl.Int64),
            pl.col("ended_at").max().cast(STATE_SCHEMA["ended_at"]),
        )
        .select(*STATE_SCHEMA)
    )


def carried_state(before: pl.LazyFrame, later: pl.LazyFrame) -> pl.LazyFrame:
    """The state after the rows of two consecutive stretches of the Elo order, from the state
    after the first (`before`) and after the second (`later`, both of STATE_SCHEMA)."""
    return (
        pl.concat([before.select(*STATE_SCHEMA), later.select(*STATE_SCHEMA)])
        .group_by("player_id")
        .agg(
            pl.col("elo").sort_by("elo_seq").last(),
            pl.col("rated").sum(),
            pl.col("master").any(),
            pl.col("elo_seq").max(),
            pl.col("ended_at").max(),
        )
        .select(*STATE_SCHEMA)
    )


def elo_history(
    matches: pl.LazyFrame,
    opts: FaceAFaceOptions,
    state: pl.DataFrame | None = None,
    first_seq: int = 0,
) -> pl.LazyFrame:
    """ff_elo: one row per human player × rated match of `matches`, in one run.

    Columns: player_id, match_id, month, ended_at, elo_seq (position in the Elo order),
    opponent_id, k, elo_before, elo_after. Rated = `counts_for_ranking`; order: ended_at, then
    match_id. The Bot has no rows (its rating never changes). `matches` is all the history, or
    every rated match from a point of the Elo order on, with `state` (`elo_state` of the rows
    before that point; a player not in it starts fresh) and `first_seq` (the rated matches
    before that point).
    """
    rated = (
        matches.filter(pl.col("counts_for_ranking"))
        .select("match_id", "month", "ended_at", "player_a", "player_b", "outcome_a")
        .sort("ended_at", "match_id")
        .collect()
    )
    players = pl.concat([rated["player_a"], rated["player_b"]]).unique().sort()
    players = players.filter(players != opts.bot_id)
    index = pl.DataFrame({"player": players, "idx": pl.int_range(len(players), eager=True)})

    def idx(col: str) -> np.ndarray:
        return (
            rated.select(pl.col(col).alias("player"))
            .join(index, on="player", how="left", maintain_order="left")["idx"]
            .fill_null(-1)
            .to_numpy()
        )

    start = {}
    if state is not None:
        known = index.join(
            state.rename({"player_id": "player"}), on="player", how="left", maintain_order="left"
        )
        start = {
            "start_rating": known["elo"].fill_null(float(opts.elo_start)).to_numpy(),
            "start_rated": known["rated"].fill_null(0).to_numpy(),
            "start_master": known["master"].fill_null(False).to_numpy(),
        }
    score_a = rated["outcome_a"].replace_strict(SCORE, return_dtype=pl.Float64).to_numpy()
    run = elo_ratings(idx("player_a"), idx("player_b"), score_a, len(players), opts, **start)
    wide = rated.with_columns(
        pl.int_range(first_seq, first_seq + rated.height).alias("elo_seq"),
        pl.Series("k_a", run.k_a),
        pl.Series("k_b", run.k_b),
        pl.Series("before_a", run.before_a),
        pl.Series("before_b", run.before_b),
        pl.Series("after_a", run.after_a),
        pl.Series("after_b", run.after_b),
    )
    long = pl.concat(
        [
            wide.select(
                pl.col(f"player_{s}").alias("player_id"),
                "match_id",
                "month",
                "ended_at",
                "elo_seq",
                pl.col(f"player_{o}").alias("opponent_id"),
                pl.col(f"k_{s}").alias("k"),
                pl.col(f"before_{s}").alias("elo_before"),
                pl.col(f"after_{s}").alias("elo_after"),
            )
            for s, o in (("a", "b"), ("b", "a"))
        ]
    )
    return long.filter(pl.col("player_id") != opts.bot_id).sort("elo_seq", "player_id").lazy()


def with_elo(matches: pl.LazyFrame, elo: pl.LazyFrame, opts: FaceAFaceOptions) -> pl.LazyFrame:
    """ff_matches: the scored matches with elo_{a,b}_{before,after} and value_a, value_b.

    Elo columns are filled for rated matches only (the Bot's side: bot_elo); null otherwise.
    """

    def side(s: str) -> pl.LazyFrame:
        return elo.select(
            "match_id",
            pl.col("player_id").alias(f"player_{s}"),
            pl.col("elo_before").alias(f"elo_{s}_before"),
            pl.col("elo_after").alias(f"elo_{s}_after"),
        )

    bot = pl.lit(float(opts.bot_elo))
    counted = pl.col("counts_for_ranking")
    filled = (
        matches.join(side("a"), on=["match_id", "player_a"], how="left")
        .join(side("b"), on=["match_id", "player_b"], how="left")
        .with_columns(
            pl.when(counted & (pl.col(f"player_{s}") == opts.bot_id))
            .then(bot)
            .otherwise(pl.col(f"elo_{s}_{when}"))
            .alias(f"elo_{s}_{when}")
            for s in ("a", "b")
            for when in ("before", "after")
        )
    )
    return filled.with_columns(
        match_value("a").alias("value_a"), match_value("b").alias("value_b")
    ).sort("month", "match_id")
