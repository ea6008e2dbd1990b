"""The ingest log: one row per file per run that read it (or that found it not readable).

`read_state` gives what the log knows before a run: the sha256 of every delivery read, the
sizes of those deliveries (a file of a size never seen cannot be a copy of one: it is read
once, hashing as it goes; one of a seen size is hashed first), the identity last logged per
path (a file unchanged since is not read nor logged again) and the next delivery number.

A local file's identity is its size, mtime, ctime and inode: `touch -r` gives a file
corrected in place its old mtime back, never its old ctime, and a file replaced by another
(a rename over it) has another inode, so both are read again. (A row logged without ctime
and inode — by an older duplirank — never matches a local file: it is read once more, and
found `already_ingested` by its sha256 if its content is the same.) An object of an `s3://`
landing is known by its size and time of last modification (set by the store at each PUT).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from flows.storage.warehouse import Warehouse

INGEST_LOG_SCHEMA = {
    "run_id": pl.String(),
    "delivery": pl.Int64(),
    "file": pl.String(),
    "sha256": pl.String(),
    "size": pl.Int64(),
    "mtime_ns": pl.Int64(),
    "ctime_ns": pl.Int64(),
    "inode": pl.UInt64(),
    "lines_read": pl.Int64(),
    "rows_accepted": pl.Int64(),
    "rows_quarantined": pl.Int64(),
    "status": pl.String(),
    "ingested_at": pl.Datetime("us", "UTC"),
}
# statuses of a delivery whose content was read (its sha256 is known)
READ = ("ingested", "unreadable", "empty", "already_ingested")


@dataclass
class FileReport:
    file: str
    sha256: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    ctime_ns: int | None = None
    inode: int | None = None
    lines_read: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    status: str = "ingested"
    delivery: int | None = None
    logged: bool = True  # False: unchanged since the run that logged it (not read again)
    note: str | None = None  # why a file was quarantined whole


@dataclass
class LogState:
    shas: set[str] = field(default_factory=set)
    sizes: set[int] = field(default_factory=set)
    # path -> (size, mtime, ctime, inode), status
    stats: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    next_delivery: int = 1

    def unchanged(self, report: FileReport) -> str | None:
        """The status logged for this file when its identity has not changed."""
        known = self.stats.get(report.file)
        if known is None or known[0] != identity(report):
            return None
        return known[1]

    def read(self, report: FileReport) -> None:
        if report.sha256 is not None:
            self.shas.add(report.sha256)
        if report.size is not None:
            self.sizes.add(report.size)


def identity(report: FileReport) -> tuple:
    """What tells a delivery from the one logged under the same name (module docstring)."""
    return report.size, report.mtime_ns, report.ctime_ns, report.inode


def read_state(wh: Warehouse) -> LogState:
    files = wh.files("ingest_log")
    if not files:
        return LogState()
    log = pl.scan_parquet(
        files,
        schema=INGEST_LOG_SCHEMA,
        missing_columns="insert",
        storage_options=wh.store.polars_options,
    )
    read = log.filter(pl.col("status").is_in(READ))
    shas, sizes, stats, top = pl.collect_all(
        [
            read.select(pl.col("sha256").drop_nulls().unique()),
            read.select(pl.col("size").drop_nulls().unique()),
            log.filter(
                pl.col("size").is_not_null()
                & ~pl.col("status").str.starts_with("error")
                & (pl.col("status") != "replayed")
            )
            .sort("ingested_at")
            .group_by("file")
            .agg(pl.col("size", "mtime_ns", "ctime_ns", "inode", "status").last()),
            log.select(pl.col("delivery").max()),
        ]
    )
    return LogState(
        set(shas["sha256"]),
        set(sizes["size"]),
        {f: ((s, m, c, i), st) for f, s, m, c, i, st in stats.iter_rows()},
        int(top.item() or 0) + 1,
    )


def log_frame(run_id: str, reports: list[FileReport], now: datetime) -> pl.DataFrame:
    rows = [
        {
            "run_id": run_id,
            "delivery": r.delivery,
            "file": r.file,
            "sha256": r.sha256,
            "size": r.size,
            "mtime_ns": r.mtime_ns,
            "ctime_ns": r.ctime_ns,
            "inode": r.inode,
            "lines_read": r.lines_read,
            "rows_accepted": r.rows_accepted,
            "rows_quarantined": r.rows_quarantined,
            "status": r.status,
            "ingested_at": now,
        }
        for r in reports
        if r.logged
    ]
    return pl.DataFrame(rows, schema=INGEST_LOG_SCHEMA)


def deliveries(wh: Warehouse) -> dict[str, int]:
    """Delivery number of each sha256 read (the first delivery that had that content)."""
    files = wh.files("ingest_log")
    if not files:
        return {}
    options = wh.store.polars_options
    log = pl.scan_parquet(files, missing_columns="insert", storage_options=options).filter(
        pl.col("status").is_in(["ingested", "unreadable"]) & pl.col("delivery").is_not_null()
    )
    frame = log.group_by("sha256").agg(pl.col("delivery").min()).collect()
    return dict(frame.iter_rows())
