"""Quarantine rows of a chunk: one row per run of consecutive lines with the same text,
reason and rule, with the text of its first line and the reason of invalid JSON in words."""

from __future__ import annotations

import numpy as np
import polars as pl

from flows.ingest.checked import QUARANTINE, RUNS
from flows.ingest.file_check import FileCheck
from flows.ingest.line_split import Chunk
from flows.ingest.reasons import invalid_json_reason, raw_texts


def runs(rows: pl.DataFrame, file: FileCheck, chunk: Chunk) -> pl.DataFrame:
    """One quarantine row per run of consecutive lines with the same text (hash), reason and
    rule in one file: `line_no` its first line, `last_line_no`, `line_count` (a million
    identical rejects are one row, not a million); then the text of each row, and the
    reason of invalid JSON in words (`invalid_json_reason`)."""
    rows = rows.sort("line_no")
    if rows.height > 1:
        line_no = rows["line_no"].to_numpy()
        place = file.batch.file_of(line_no) if file.batch is not None else np.zeros(len(rows))
        keys = rows.select("_h1", "_h2", "reason", "rule").with_columns(_f=pl.Series(place))
        same = pl.all_horizontal(pl.all() == pl.all().shift(1)).fill_null(False)
        starts = ~keys.select(same).to_series().to_numpy() | (np.diff(line_no, prepend=0) != 1)
        if not starts.all():
            rows = (
                rows.with_columns(_run=pl.Series(np.cumsum(starts)))
                .group_by("_run", maintain_order=True)
                .agg(
                    pl.col("line_no", "_pos", "reason", "rule").first(),
                    pl.col("line_no").last().alias("last_line_no"),
                    pl.len().cast(pl.Int64).alias("line_count"),
                )
            )
    if "line_count" not in rows.columns:
        rows = rows.with_columns(
            pl.col("line_no").alias("last_line_no"), pl.lit(1, pl.Int64).alias("line_count")
        )
    rows = rows.with_columns(raw=raw_texts(chunk.raw, rows["_pos"].to_numpy()))
    json_rows = rows["rule"] == "invalid_json"
    if json_rows.any():
        explained = [invalid_json_reason(t) for t in rows.filter(json_rows)["raw"]]
        rows = rows.with_columns(
            pl.when(json_rows)
            .then(pl.Series(_spread(json_rows, explained)))
            .otherwise("reason")
            .alias("reason")
        )
    return rows.select(*QUARANTINE, *RUNS)


def _spread(mask: pl.Series, values: list[str]) -> list[str | None]:
    it = iter(values)
    return [next(it) if m else None for m in mask]
