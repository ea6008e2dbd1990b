"""The `data_issues` table: records flagged by a rule, with the keys of what they affect."""

from __future__ import annotations

import polars as pl

DATA_ISSUES_SCHEMA: dict[str, pl.DataType] = {
    "month": pl.String(),
    "kind": pl.String(),
    "keys": pl.String(),  # JSON object naming the affected tournament/match/event/board/pair
    "detail": pl.String(),
}


def data_issues(frame: pl.LazyFrame, kind: str, keys: list[str], detail: pl.Expr) -> pl.LazyFrame:
    """Shape flagged rows as `data_issues` rows: `keys` columns become one JSON object.

    `frame` must have a `month` column (the partition the issue is published in).
    """
    return frame.select(
        pl.col("month").cast(pl.String),
        pl.lit(kind).alias("kind"),
        pl.struct([pl.col(k).cast(pl.String) for k in keys]).struct.json_encode().alias("keys"),
        detail.cast(pl.String).alias("detail"),
    )
