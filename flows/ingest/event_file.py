"""An event file read whole (PBN, USEBIO): its bronze-shaped records checked against the same
declarations as JSON Lines records, then staged; what the file's parser set aside is
quarantined with the parser's reason."""

from __future__ import annotations

import polars as pl

from flows.ingest.checked import Checked
from flows.ingest.context import Context
from transforms.record_types import RECORD_TYPES

SKIPPED_SCHEMA = {"line_no": pl.Int64, "raw": pl.String, "reason": pl.String, "rule": pl.String}


def stage_event_file(
    ctx: Context, index: int, frames: dict[str, pl.DataFrame], skipped: list[tuple]
) -> None:
    """Check the bronze-shaped records of one event file read whole (PBN, USEBIO) and stage
    them; `skipped`: (line_no, raw, reason, rule) of what the parser set aside, quarantined."""
    report = ctx.sink.reports[index]
    rows, rejected = {}, []
    for record_type, frame in frames.items():
        if frame.height:
            accepted, bad = _check(ctx, record_type, frame)
            rows[record_type] = accepted
            rejected.append(bad)
    skipped_rows = pl.DataFrame(skipped, schema=SKIPPED_SCHEMA, orient="row")
    quarantine = pl.concat([*rejected, skipped_rows])
    report.lines_read = sum(f.height for f in rows.values()) + quarantine.height
    ctx.lines += report.lines_read
    ctx.sink.add(index, Checked({k: v for k, v in rows.items() if v.height}, quarantine), None)


def _check(ctx: Context, record_type: str, frame: pl.DataFrame):
    """(accepted rows with their JSON as `_raw`, quarantine rows) of one record type."""
    rt = RECORD_TYPES[record_type]
    as_json = pl.struct(pl.lit(record_type).alias("type"), *rt.fields).struct.json_encode()
    typed = frame.with_row_index("_pos").with_columns(as_json.alias("_raw"))
    accepted, rejected = ctx.validator.check_typed(rt, typed, keep=["_raw"])
    raw = typed.select("_pos", "_raw")
    quarantine = rejected.join(raw, on="_pos", how="left").select(
        "line_no", pl.col("_raw").alias("raw"), "reason", "rule"
    )
    columns = [*rt.schema(), "_pos", "_raw"]
    return accepted.select(columns), quarantine
