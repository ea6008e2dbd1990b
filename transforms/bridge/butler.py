"""Method `butler`: IMPs against a datum (trimmed mean of the comparison group).

The datum is exact integer arithmetic: the kept scores' sum and count, rounded to a multiple
of 10 by `datum_rounding`. `trim_count` (how many scores are dropped each side) is shared with
`sunday_times`.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import imp_sides
from transforms.bridge.frames import GROUP, real_score
from transforms.bridge.imps import imps
from transforms.bridge.options import BridgeOptions, trim_kind


def trim_count(n: pl.Expr, options: BridgeOptions) -> pl.Expr:
    """Scores dropped on each side for n scores; never more than leaves the middle one or two."""
    kind, value = trim_kind(options.trim)
    if options.out is not None:
        kind, value = "out", float(options.out)
    if kind == "kops":
        k = pl.when(n == 5).then(1).otherwise((n + 3) // 4)  # ⌈n/4⌉, n = 5 -> 1
    elif kind == "out":
        k = pl.lit(int(value), pl.Int64)
    elif kind == "fraction":
        k = (n.cast(pl.Float64) * value + 1e-9).floor().cast(pl.Int64)
    else:  # median
        k = (n - 1) // 2
    return pl.min_horizontal(k, ((n - 1) // 2).clip(lower_bound=0)).cast(pl.Int64)


def round_datum(total: pl.Expr, count: pl.Expr, rounding: str) -> pl.Expr:
    """total / count rounded to a multiple of 10, in integers."""
    sign = total.sign()
    size = total.abs()
    unit = 10 * count
    if rounding == "toward_zero":
        tens = size // unit
    elif rounding == "nearest":  # halves away from zero
        tens = (2 * size + unit) // (2 * unit)
    else:  # half_even
        q = size // unit
        twice_r = 2 * (size % unit)
        tens = q + ((twice_r > unit) | ((twice_r == unit) & (q % 2 == 1))).cast(pl.Int64)
    return (sign * tens * 10).cast(pl.Int64)


def butler(lines: pl.LazyFrame, options: BridgeOptions) -> pl.LazyFrame:
    """Adds `datum`, `imp_ns`, `imp_ew` (Float64) to each traveller line."""
    real = real_score()
    n = pl.col("m")
    k = trim_count(n, options)
    order = pl.col("order")  # 1..n ascending (`frames`)
    kept = pl.when((order > k) & (order <= n - k)).then(pl.col("score_ns"))
    datum = round_datum(pl.col("kept_total"), pl.col("kept_count"), options.datum_rounding)
    real_imps = (
        pl.when(n == 2)
        .then(imps(2 * pl.col("score_ns") - pl.col("total")))  # against the other score
        .when(n == 1)
        .then(0)  # Decision: a lone score gets 0 IMP
        .otherwise(imps(pl.col("score_ns") - pl.col("datum")))
    )
    return (
        lines.with_columns(real.sum().over(GROUP).alias("total"))
        .with_columns(
            kept.sum().over(GROUP).alias("kept_total"),
            (n - 2 * k).alias("kept_count"),  # ordinal ranks 1..n: exactly n − 2k are kept
        )
        .with_columns(pl.when(n >= 3).then(datum).alias("datum"))
        .with_columns(
            *imp_sides(real_imps, options.adjusted_imps_per_10pct),
        )
        .drop("total", "kept_total", "kept_count")
    )
