"""Deal and match scores in match points (face_a_face.md, "Deal and match scores").

For one deal each player has D = points made − points conceded; Δ = D_A − D_B. The better
player gets √|Δ| rounded half up (to `mp_decimals`), the other 0. An unfinished deal gives the
opponent `unfinished_mp` (5) and the player 0; both unfinished: 5 each. Match score = Σ deals;
higher wins, equal totals draw, a forfeit loses whatever the score.
"""

from __future__ import annotations

import polars as pl

from transforms.face_a_face.options import FaceAFaceOptions


def sqrt_half_up(delta: pl.Expr, decimals: int = 0) -> pl.Expr:
    """√|delta| rounded half up to `decimals`, in exact integer arithmetic.

    With s = 10^decimals and n = |delta|·s², m = isqrt(n): √n ≥ m + ½ ⇔ n ≥ m² + m + ¼ ⇔
    n > m² + m (n, m integers). The float square root only seeds isqrt and is corrected by ±1.
    """
    scale = 10**decimals
    n = delta.abs().cast(pl.Int64) * (scale * scale)
    seed = n.cast(pl.Float64).sqrt().floor().cast(pl.Int64)
    m = (
        pl.when(seed * seed > n)
        .then(seed - 1)
        .when((seed + 1) * (seed + 1) <= n)
        .then(seed + 1)
        .otherwise(seed)
    )
    rounded = m + (n > m * m + m).cast(pl.Int64)
    return rounded if decimals == 0 else (rounded / scale).round(decimals)


def with_match_points(pairs: pl.LazyFrame, opts: FaceAFaceOptions) -> pl.LazyFrame:
    """Add `delta`, `mp_a`, `mp_b` to deal pairs having d_a, d_b, unfinished_a, unfinished_b."""
    ua, ub = pl.col("unfinished_a"), pl.col("unfinished_b")
    delta = pl.col("d_a") - pl.col("d_b")
    mp = sqrt_half_up(pl.col("delta"), opts.mp_decimals)
    penalty = pl.lit(opts.unfinished_mp)
    zero = pl.lit(0)
    if opts.mp_decimals:
        penalty, zero, mp = penalty.cast(pl.Float64), zero.cast(pl.Float64), mp.cast(pl.Float64)
    return pairs.with_columns(
        pl.when(ua | ub).then(None).otherwise(delta).alias("delta")
    ).with_columns(
        pl.when(ub)
        .then(penalty)
        .when(ua)
        .then(zero)
        .when(pl.col("delta") > 0)
        .then(mp)
        .otherwise(zero)
        .alias("mp_a"),
        pl.when(ua)
        .then(penalty)
        .when(ub)
        .then(zero)
        .when(pl.col("delta") < 0)
        .then(mp)
        .otherwise(zero)
        .alias("mp_b"),
    )


def outcome(side: str) -> pl.Expr:
    """win/draw/loss of player `side` ("a"/"b") from mp_a, mp_b, status and forfeit_by.

    Null when the match has no result (cancelled, or not scorable: mp null).
    """
    me, other = (
        (pl.col("mp_a"), pl.col("mp_b")) if side == "a" else (pl.col("mp_b"), pl.col("mp_a"))
    )
    player = pl.col(f"player_{side}")
    return (
        pl.when(pl.col("status") == "cancelled")
        .then(None)
        .when(pl.col("status") == "forfeit")
        .then(pl.when(pl.col("forfeit_by") == player).then(pl.lit("loss")).otherwise(pl.lit("win")))
        .when(me.is_null() | other.is_null())
        .then(None)
        .when(me > other)
        .then(pl.lit("win"))
        .when(me == other)
        .then(pl.lit("draw"))
        .otherwise(pl.lit("loss"))
    )
