"""Method `matchpoints` ("maxy"): matchpointing from zero and the Neuberg adjustment.

Values are integer hundredths of a matchpoint (`mp_ns_x100`), so Neuberg's rounding to 0.01
with an exact .005 toward the average is exact integer arithmetic, never float rounding.

Input lines: those of `travellers.traveller_lines` (`real`, `ev`, `m`, `below`, `ties`, `adj_ns`,
`adj_ew`): the ranks are read from the positions of `frames`, not computed here.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import mp_sides

# Exception M < 4 (when N >= 4): the worst score's % of the top; each better rank adds 10 %.
FIXED_PCT_BASE = {1: 60, 2: 55, 3: 50}


def neuberg_x100(x: pl.Expr, n: pl.Expr, m: pl.Expr) -> pl.Expr:
    """100 × ((1 + x)·N/M − 1) rounded to an integer, an exact half toward 100·(N − 1)."""
    numerator = 100 * ((1 + x) * n - m)
    quotient = numerator // m
    twice_remainder = 2 * (numerator % m)
    average = 100 * (n - 1)
    up = (twice_remainder > m) | ((twice_remainder == m) & (quotient < average))
    return quotient + up.cast(pl.Int64)


def matchpoints(lines: pl.LazyFrame, neuberg: bool = True, exact: bool = False) -> pl.LazyFrame:
    """Adds `mp_ns_x100`, `mp_ew_x100`, `top_x100` (and `n`) to each traveller line; `exact`
    (option `pct_rounding=exact`) also the unrounded values as fractions of integers:
    100 × value = `mp_ns_num` / `mp_den` (and `mp_ew_num` / `mp_den`)."""
    m = pl.col("m")
    n = pl.col("n")
    # 2 per worse score + 1 per other equal one (positions from `frames`)
    x = 2 * pl.col("below") + pl.col("ties") - 1
    top = 2 * (n - 1)
    if neuberg:
        base = m.replace_strict(FIXED_PCT_BASE, default=None, return_dtype=pl.Int64)
        fixed_pct = base + 5 * x  # tied scores share the average of their percentages
        real_ns = (
            pl.when((m < 4) & (n >= 4))
            .then(fixed_pct * top)
            .when(m < n)
            .then(neuberg_x100(x, n, m))
            .otherwise(100 * x)
        )
        real_ew = (
            pl.when((m < 4) & (n >= 4)).then((120 - fixed_pct) * top).otherwise(100 * top - real_ns)
        )
    else:
        real_ns = 100 * (x + n - m)
        real_ew = 100 * top - real_ns
    scored = lines.with_columns(m.max().over("ev").alias("n")).with_columns(
        mp_sides(real_ns, real_ew, top)
    )
    if not exact:
        return scored
    # only a Neuberg value is rounded: 100·x' = 100·((1+x)·N − M) / M exactly
    rounded = pl.col("real") & ~((m < 4) & (n >= 4)) & (m < n) if neuberg else pl.lit(False)
    den = pl.when(rounded).then(m).otherwise(1).cast(pl.Int64)
    num_ns = pl.when(rounded).then(100 * ((1 + x) * n - m)).otherwise(pl.col("mp_ns_x100"))
    num_ew = pl.when(rounded).then(100 * top * m - num_ns).otherwise(pl.col("mp_ew_x100"))
    return scored.with_columns(
        num_ns.cast(pl.Int64).alias("mp_ns_num"),
        num_ew.cast(pl.Int64).alias("mp_ew_num"),
        den.alias("mp_den"),
    )
