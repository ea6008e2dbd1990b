"""Method `sunday_times` (KOPS `-SUN`): Butler with a datum per score, from the other scores.

The other m = n − 1 scores are trimmed with Butler's `trim_count` (which never drops them all:
m = 2 keeps both, m = 1 keeps the one) and rounded with `datum_rounding`.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import imp_sides
from transforms.bridge.butler import round_datum, trim_count
from transforms.bridge.frames import GROUP
from transforms.bridge.imps import imps
from transforms.bridge.options import BridgeOptions


def sunday_times(lines: pl.LazyFrame, options: BridgeOptions) -> pl.LazyFrame:
    """Adds `datum`, `imp_ns`, `imp_ew` (Float64) to each traveller line."""
    real = lines.filter(pl.col("real")).select(*GROUP, "line_id", "score_ns")
    others = (
        real.join(real, on=GROUP, suffix="_other", nulls_equal=True)
        .filter(pl.col("line_id") != pl.col("line_id_other"))
        .with_columns(
            pl.len().over("line_id").cast(pl.Int64).alias("others"),
            pl.col("score_ns_other").rank("ordinal").over("line_id").cast(pl.Int64).alias("order"),
        )
    )
    k = trim_count(pl.col("others"), options)
    order = pl.col("order")
    datums = (
        others.filter((order > k) & (order <= pl.col("others") - k))
        .group_by("line_id")
        .agg(
            pl.col("score_ns_other").sum().alias("kept_total"),
            pl.len().cast(pl.Int64).alias("kept_count"),
        )
        .select(
            "line_id",
            round_datum(pl.col("kept_total"), pl.col("kept_count"), options.datum_rounding).alias(
                "datum"
            ),
        )
    )
    real_imps = (
        pl.when(pl.col("datum").is_not_null())
        .then(imps(pl.col("score_ns") - pl.col("datum")).cast(pl.Float64))
        .otherwise(0.0)
    )  # a lone score: 0 IMP
    per10 = options.adjusted_imps_per_10pct
    return lines.join(datums, on="line_id", how="left").with_columns(
        *imp_sides(real_imps, per10),
    )
