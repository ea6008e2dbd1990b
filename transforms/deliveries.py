"""Re-delivered records: per record key the latest delivery wins, then the later line."""

from __future__ import annotations

import polars as pl

from transforms.calendar import RAW_MONTH
from transforms.issues import data_issues
from transforms.record_types import BRONZE_META, RECORD_TYPES

NOT_CONTENT = (RAW_MONTH, "source_file", "line_no", "delivery")  # where a row came from


def latest_delivery(frame: pl.LazyFrame, record_type: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Resolve re-delivered records: per record key the latest delivery wins (then the later line).

    Returns (current rows, data_issues rows of kind `superseded_record` for the dropped rows
    whose content differs from the winning row; an identical copy is dropped silently).
    Almost every record is delivered once: a window over one 64-bit hash of the key finds the
    few rows that may have copies (or merely share a hash); only those are compared on the key.
    """
    key = list(RECORD_TYPES[record_type].key)
    assert set(NOT_CONTENT) <= set(BRONZE_META)
    names = frame.collect_schema().names()
    content = [c for c in names if c not in (*NOT_CONTENT, "month")]  # month: computed
    # one sortable number per row: the later delivery, then the later line, is the larger
    order = pl.col("delivery").cast(pl.Int64) * 2**32 + pl.col("line_no")
    flagged = frame.with_columns(
        (pl.len().over(pl.struct(key).hash(seed=0)) > 1).alias("_copies")
    ).cache()
    copies = flagged.filter(pl.col("_copies")).with_columns(
        order.max().over(key).alias("_latest"),
        pl.col("delivery").max().over(key).alias("_winner"),
        pl.struct(content).hash(seed=0).alias("_content"),
    )
    winner = pl.col("_content").filter(order == pl.col("_latest")).first().over(key)
    copies = copies.with_columns((pl.col("_content") != winner).alias("_changed"))
    kept = pl.concat(
        [
            flagged.filter(~pl.col("_copies")).drop("_copies"),
            copies.filter(order == pl.col("_latest")).drop(
                "_copies", "_latest", "_winner", "_content", "_changed"
            ),
        ]
    )
    issues = data_issues(
        # published in the record's month (its partition month when it has none yet)
        copies.filter((order < pl.col("_latest")) & pl.col("_changed")).with_columns(
            pl.col("month" if "month" in names else RAW_MONTH).alias("month")
        ),
        "superseded_record",
        key,
        pl.format(
            "{} line {} (delivery {}) replaced by delivery {}",
            pl.lit(record_type),
            pl.col("line_no"),
            pl.col("delivery"),
            pl.col("_winner"),
        ),
    )
    return kept, issues
