"""PBN files in the landing folder: bridge events read by the `score` command's parser.

A PBN file is one event (its id is the file name before the first dot, as `duplirank score`
names it). Its records (the event, each traveller line or played board) are checked against
the same declarations as JSON Lines records; a game the parser skips is quarantined with the
parser's reason. For a PBN file a "line" of the ingest log is one of those: lines_read =
records + skipped games (not the file's physical lines, most of which are tags).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from flows.ingest.validate import Checked
from transforms.bridge.pbn import decode_pbn, parse_pbn
from transforms.record_types import RECORD_TYPES

if TYPE_CHECKING:
    from flows.ingest.run import Context

MAX_PBN_BYTES = 256 * 2**20


def ingest_pbn(ctx: Context, index: int, path: Path, name: str | None = None) -> None:
    """Stage the records of one PBN (or USEBIO `.xml`: `flows.ingest.usebio`) file (`name`:
    the file it was delivered as, if not `path`: a replayed file's kept copy)."""
    name = name or str(path)
    if name.lower().endswith(".xml"):
        from flows.ingest.usebio import ingest_usebio

        ingest_usebio(ctx, index, path, name)
        return
    report = ctx.sink.reports[index]
    if report.size is not None and report.size > MAX_PBN_BYTES:
        raise OSError(f"PBN file larger than {MAX_PBN_BYTES} bytes")
    data = path.read_bytes()
    report.sha256 = hashlib.sha256(data).hexdigest()
    event_id = Path(name).name.split(".")[0]
    parsed = parse_pbn(data, name, event_id, delivery=report.delivery)
    lines = decode_pbn(data)[0].splitlines()
    skipped = [(n, _line(lines, n), reason, "pbn") for n, reason in parsed.skipped]
    stage_event_file(ctx, index, parsed.frames, skipped)


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


def _line(lines: list[str], line_no: int) -> str:
    return lines[line_no - 1] if 0 < line_no <= len(lines) else ""
