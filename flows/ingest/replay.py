"""Replay quarantined lines: validate them again and move those that now pass into bronze.

Two uses: every ingest run replays the children quarantined as `unknown match X` / `unknown
event X` whose parent X it has just read (late parents: the child's file is never re-sent),
and `duplirank ingest --replay-quarantine [--reason TEXT]` replays every quarantined line
(whose reason contains TEXT) after a fix or a rule change. A line keeps its file, line number
and delivery; it is removed from the quarantine table when it passes; when it does not, its
row is replaced by one with its reason as of now (in the replay's month of ingestion). A file
quarantined whole is read again from its kept bytes; once one of its lines can be read, its
bytes are no longer kept. Each replayed file gets an
ingest log row `replayed` (lines_read = lines replayed, rows_accepted = moved to bronze).

Not replayed: exact and same-key duplicates (the original is in bronze), the head of a line
too long to read and the rest of a broken gzip stream (their text is not all there), games
the PBN parser skipped (send the file again), and a row that stands for a run of identical
lines (`line_count` > 1: empty lines, the same bytes that are not UTF-8, copies).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest import pbn
from flows.ingest.context import Context
from flows.ingest.file_check import FileCheck
from flows.ingest.file_stream import FileStream
from flows.ingest.line_split import Chunk
from flows.ingest.listing import is_pbn
from flows.ingest.log import FileReport, deliveries
from flows.ingest.reader_threads import prefetch
from flows.ingest.stage import QUARANTINE_TABLE_SCHEMA, Sink
from transforms.record_types import RECORD_TYPES

NOT_REPLAYED = ("duplicate_line", "duplicate_key", "gzip", "line_length", "pbn", "usebio",
                "usebio_unknown_element")  # fmt: skip
KEEP = ("file", "line_no", "raw", "reason", "rule", "sha256", "line_count")
# every file of the table read with its columns (those a file lacks are null)
SCHEMA = {"schema": QUARANTINE_TABLE_SCHEMA, "missing_columns": "insert", "extra_columns": "ignore"}


def replay_late_children(ctx: Context) -> int:
    """Replay `unknown match/event X` lines whose parent X this run has read."""
    reasons = []
    for rt in RECORD_TYPES.values():
        if rt.parent is not None and rt.parent.record_type in ctx.sink.new_parents:
            keys = pl.concat(ctx.sink.new_parents[rt.parent.record_type])["key"].unique()
            reasons.append(f"unknown {rt.parent.noun} " + keys)
    if not reasons:
        return 0
    wanted = pl.concat(reasons).unique().implode()
    rows = _quarantined(ctx, pending=False).filter(
        (pl.col("rule") == "unknown_parent") & pl.col("reason").is_in(wanted)
    )
    return _replay_lines(ctx, rows.collect())


def replay_quarantine(ctx: Context, reason: str | None = None) -> int:
    """`--replay-quarantine`: every quarantined line (whose reason contains `reason`)."""
    rows = _quarantined(ctx, pending=True)
    if reason:
        rows = rows.filter(
            pl.col("reason").str.to_lowercase().str.contains(reason.lower(), literal=True)
        )
    rows = rows.collect()
    whole = set(_kept_files(ctx))
    lines = rows.filter(
        ~pl.col("rule").is_in(NOT_REPLAYED)
        & ~pl.col("sha256").is_in(whole)
        & (pl.col("line_count").fill_null(1) == 1)
    )
    moved = _replay_lines(ctx, lines)
    for sha in sorted(whole & set(rows["sha256"])):
        moved += _replay_file(ctx, sha, rows.filter(pl.col("sha256") == sha)["file"][0])
    return moved


def _quarantined(ctx: Context, pending: bool) -> pl.LazyFrame:
    """Quarantine rows with the partition they are in (`_partition`)."""
    ops = ctx.tx.ops if pending else None
    parts = []
    for partition in ctx.wh.partitions("quarantine", ops):
        files = ctx.wh.files("quarantine", [partition], ops)
        if files:
            scan = ctx.wh.scan_files(files, **SCHEMA)
            parts.append(scan.select(*KEEP).with_columns(pl.lit(partition).alias("_partition")))
    if not parts:
        schema = {k: QUARANTINE_TABLE_SCHEMA.get(k, pl.String) for k in (*KEEP, "_partition")}
        return pl.LazyFrame(schema=schema)
    return pl.concat(parts, how="diagonal_relaxed")


def _kept_files(ctx: Context) -> dict[str, Path]:
    """sha256 -> kept bytes of each file quarantined whole."""
    out = {}
    for partition in ctx.wh.partitions("quarantine_files", ctx.tx.ops):
        entries = ctx.wh.entries("quarantine_files", [partition], ctx.tx.ops)
        if entries and partition.startswith("sha256="):
            ctx.wh.checked(entries[-1])  # a local file (fetched from object storage)
            out[partition.removeprefix("sha256=")] = ctx.wh.store.fetch(entries[-1]["path"])
    return out


def _replay_sink(ctx: Context) -> Sink:
    """A sink that knows the parents the run has read so far."""
    sink = Sink(ctx.wh, ctx.tx, ctx.sink.now)
    sink.new_parents = {k: list(v) for k, v in ctx.sink.new_parents.items()}
    return sink


def _replay_lines(ctx: Context, rows: pl.DataFrame) -> int:
    """Validate quarantined lines again; those that pass go to bronze."""
    if not rows.height:
        return 0
    _unquarantine(ctx, rows.select("sha256", "line_no", "_partition"))
    sink = _replay_sink(ctx)
    known = deliveries(ctx.wh)
    for (file, sha), group in rows.sort("line_no").group_by("file", "sha256", maintain_order=True):
        report = FileReport(file, sha, status="replayed", delivery=known.get(sha, 0))
        index = sink.open(report)
        text = [(r or "") + "\n" for r in group["raw"]]
        chunk = Chunk(
            group["line_no"].to_numpy().astype(np.int64),
            pa.array([t.encode("utf-8", "surrogateescape") for t in text], pa.large_binary()),
        )
        checked = ctx.validator.check(chunk, FileCheck(file, report.delivery))
        report.lines_read = group.height
        sink.add(index, checked, chunk)
    return _close(ctx, sink)


def _replay_file(ctx: Context, sha: str, name: str) -> int:
    """Read a file quarantined whole again from its kept bytes."""
    kept = _kept_files(ctx)[sha]
    _unquarantine_file(ctx, sha)
    sink = _replay_sink(ctx)
    delivery = deliveries(ctx.wh).get(sha, 0)
    report = FileReport(name, sha, status="replayed", delivery=delivery)
    index = sink.open(report)
    replay_ctx = dataclasses.replace(ctx, sink=sink)
    if is_pbn(name):
        pbn.ingest_pbn(replay_ctx, index, kept, name=name)
    else:
        stream = FileStream(kept, Path(name).name, ctx.opts)
        check = FileCheck(name, delivery)
        for chunk in prefetch(stream.chunks()):
            check.encoding = stream.encoding
            report.lines_read += chunk.lines
            sink.add(index, ctx.validator.check(chunk, check), chunk)
    report.sha256 = sha
    if index in sink.readable:
        ctx.tx.remove("quarantine_files", f"sha256={sha}")
    return _close(ctx, sink)


def _close(ctx: Context, sink: Sink) -> int:
    """Stage the replay's quarantine rows, add its reports and months to the run's."""
    sink.finish()
    for record_type, months in sink.months.items():
        ctx.sink.months.setdefault(record_type, set()).update(months)
    for record_type, frames in sink.new_parents.items():
        ctx.sink.new_parents[record_type] = frames
    ctx.replayed_reports += sink.reports
    return sum(r.rows_accepted for r in sink.reports)


def _unquarantine(ctx: Context, rows: pl.DataFrame) -> None:
    """Remove quarantine rows (sha256, line_no) from the partitions they are in."""
    for (partition,), part in rows.group_by("_partition"):
        _rewrite(
            ctx,
            partition,
            lambda scan, keys=part: scan.join(
                keys.drop("_partition").lazy(), on=["sha256", "line_no"], how="anti"
            ),
        )


def _unquarantine_file(ctx: Context, sha: str) -> None:
    for partition in ctx.wh.partitions("quarantine", ctx.tx.ops):
        _rewrite(ctx, partition, lambda scan: scan.filter(pl.col("sha256") != sha))


def _rewrite(ctx: Context, partition: str, keep) -> None:
    """Stage a quarantine partition without some of its rows (streamed, not loaded)."""
    files = ctx.wh.files("quarantine", [partition], ctx.tx.ops)
    if not files:
        return
    scan = ctx.wh.scan_files(files, **SCHEMA)
    before, after = pl.collect_all([scan.select(pl.len()), keep(scan).select(pl.len())])
    if after.item() == before.item():
        return
    if after.item():
        ctx.tx.put("quarantine", "quarantine", partition, keep(scan))
    else:
        ctx.tx.remove("quarantine", partition)
