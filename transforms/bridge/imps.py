"""The IMP scale (WBF, Law 78B) as a vectorised expression."""

from __future__ import annotations

import polars as pl

# Point difference from which 1, 2, ... 24 IMPs are scored.
IMP_THRESHOLDS = (
    20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600,
    750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000,
)  # fmt: skip


def imps(difference: pl.Expr, cap: int | None = None) -> pl.Expr:
    """Signed IMPs of a point difference; `cap` ends the scale (17 for the Cavendish methods)."""
    size = difference.abs()
    thresholds = IMP_THRESHOLDS if cap is None else IMP_THRESHOLDS[:cap]
    magnitude = pl.sum_horizontal([(size >= t).cast(pl.Int64) for t in thresholds])
    return (difference.sign().cast(pl.Int64) * magnitude).cast(pl.Int64)


def imps_of(difference: int, cap: int | None = None) -> int:
    """The same scale for one number (tests, small tools)."""
    thresholds = IMP_THRESHOLDS if cap is None else IMP_THRESHOLDS[:cap]
    n = sum(abs(difference) >= t for t in thresholds)
    return n if difference >= 0 else -n


def opposite(value: pl.Expr) -> pl.Expr:
    """The other side's IMPs: the negative, with 0 kept as 0.0 (not −0.0)."""
    return pl.when(value == 0).then(pl.lit(0.0)).otherwise(-value.cast(pl.Float64))
