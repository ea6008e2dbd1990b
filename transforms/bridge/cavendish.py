"""Methods `cavendish` (cross-IMPs, KOPS `-CAV`) and `cavendish_avg` (KOPS `-CSR`).

Each real score is compared with every other real score of its group, each comparison capped
at `cavendish_cap` IMPs (17: "the IMP scale ends at 17"). An average elsewhere counts as a tie
(cavendish) or lowers the divisor by one (cavendish_avg: divided by the other real scores).
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import imp_sides
from transforms.bridge.frames import GROUP
from transforms.bridge.imps import imps
from transforms.bridge.options import BridgeOptions


def cavendish(lines: pl.LazyFrame, options: BridgeOptions, averaged: bool) -> pl.LazyFrame:
    """Adds `imp_ns`, `imp_ew` (Float64) to each traveller line."""
    real = lines.filter(pl.col("real")).select(*GROUP, "line_id", "score_ns")
    cross = (
        real.join(real, on=GROUP, suffix="_other", nulls_equal=True)
        .filter(pl.col("line_id") != pl.col("line_id_other"))
        .group_by("line_id")
        .agg(
            imps(pl.col("score_ns") - pl.col("score_ns_other"), options.cavendish_cap)
            .sum()
            .alias("cross"),
            pl.len().cast(pl.Int64).alias("comparisons"),
        )
    )
    value = pl.col("cross").cast(pl.Float64)
    if averaged:
        value = value / pl.col("comparisons")
    real_imps = pl.when(pl.col("comparisons") > 0).then(value).otherwise(0.0)
    per10 = options.adjusted_imps_per_10pct
    return (
        lines.join(cross, on="line_id", how="left")
        .with_columns(
            *imp_sides(real_imps, per10),
        )
        .drop("cross", "comparisons")
    )
