"""The IMP scale (WBF, Law 78B) as a vectorised expression."""

from __future__ import annotations

from functools import cache

import polars as pl

# Point difference from which 1, 2, ... 24 IMPs are scored.
IMP_THRESHOLDS = (
    20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600,
    750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000,
)  # fmt: skip
LAST_STEP = IMP_THRESHOLDS[-1] // 10
assert all(t % 10 == 0 for t in IMP_THRESHOLDS)


def imps(difference: pl.Expr, cap: int | None = None) -> pl.Expr:
    """Signed IMPs of a point difference; `cap` ends the scale (17 for the Cavendish methods).

    Every threshold is a multiple of 10, so the IMPs of |d| are those of 10·⌊|d|/10⌋: one
    lookup in a table of 401 entries (|d| ≥ 4000 all score the top), exact for any integer."""
    size = (difference.abs() // 10).clip(upper_bound=LAST_STEP)
    return (difference.sign().cast(pl.Int64) * pl.lit(_table(cap)).gather(size)).cast(pl.Int64)


@cache
def _table(cap: int | None) -> pl.Series:
    """IMPs of 0, 10, 20, ... 4000 points."""
    return pl.Series([imps_of(10 * step, cap) for step in range(LAST_STEP + 1)], dtype=pl.Int64)


def imps_of(difference: int, cap: int | None = None) -> int:
    """The same scale for one number (tests, small tools)."""
    thresholds = IMP_THRESHOLDS if cap is None else IMP_THRESHOLDS[:cap]
    n = sum(abs(difference) >= t for t in thresholds)
    return n if difference >= 0 else -n


def opposite(value: pl.Expr) -> pl.Expr:
    """The other side's IMPs: the negative, with 0 kept as 0.0 (not −0.0)."""
    return pl.when(value == 0).then(pl.lit(0.0)).otherwise(-value.cast(pl.Float64))
