"""Ingest delivered files into bronze: validate, quarantine, log.

Every line of every file ends as a bronze row or a quarantine row with a reason; the ingest log
records per file `lines_read = rows_accepted + rows_quarantined`. A file that cannot be read at
all (truncated gzip, not text, not JSON Lines) is quarantined whole as one unit (lines_read = 1,
rows_quarantined = 1, status `unreadable`). A file whose sha256 was already ingested is a no-op
(status `already_ingested`).

Child records take their parent's month so a match or an event is never split across months:
`ff.deal` / `ff.disconnect` go to their match's month, `bridge.result` / `bridge.penalty` to
their event's month. A child whose parent is in neither this run nor bronze is quarantined
(`unknown match …`, `unknown event …`).
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from flows.errors import UserError
from flows.storage.warehouse import Transaction, Warehouse
from transforms.calendar import raw_month_expr
from transforms.records import QUARANTINE_SCHEMA, RECORD_TYPES, Validated, validate_lines

INGEST_LOG_SCHEMA = {
    "run_id": pl.String(),
    "delivery": pl.Int64(),
    "file": pl.String(),
    "sha256": pl.String(),
    "size": pl.Int64(),
    "mtime_ns": pl.Int64(),
    "lines_read": pl.Int64(),
    "rows_accepted": pl.Int64(),
    "rows_quarantined": pl.Int64(),
    "status": pl.String(),
    "ingested_at": pl.Datetime("us", "UTC"),
}
QUARANTINE_TABLE_SCHEMA = QUARANTINE_SCHEMA | {
    "sha256": pl.String(),
    "ingested_at": pl.Datetime("us", "UTC"),
}
INPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".ndjson", ".ndjson.gz")
PARENT = {
    "ff.deal": ("ff.match", "match_id", "unknown match"),
    "ff.disconnect": ("ff.match", "match_id", "unknown match"),
    "bridge.result": ("bridge.event", "event_id", "unknown event"),
    "bridge.penalty": ("bridge.event", "event_id", "unknown event"),
}


@dataclass
class FileReport:
    file: str
    sha256: str
    size: int | None = None
    mtime_ns: int | None = None
    lines_read: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    status: str = "ingested"
    delivery: int | None = None
    read: bool = True


@dataclass
class IngestResult:
    files: list[FileReport] = field(default_factory=list)
    # record type -> months that received rows in this run
    months: dict[str, set[str]] = field(default_factory=dict)

    def touched(self, *record_types: str) -> set[str]:
        return set().union(*(self.months.get(t, set()) for t in record_types))

    def summary_line(self) -> str:
        read = sum(f.lines_read for f in self.files)
        accepted = sum(f.rows_accepted for f in self.files)
        rejected = sum(f.rows_quarantined for f in self.files)
        skipped = sum(f.status == "already_ingested" for f in self.files)
        unreadable = sum(f.status == "unreadable" for f in self.files)
        return (
            f"files: {len(self.files)} ({skipped} already ingested, {unreadable} unreadable); "
            f"lines read: {read}, rows accepted: {accepted}, rows quarantined: {rejected}"
        )


def bronze_table(record_type: str) -> str:
    return RECORD_TYPES[record_type].bronze_name


def list_inputs(paths: list[Path]) -> list[Path]:
    """Input files under the given files/folders, in name order (deliveries are ordered)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += [p for p in path.rglob("*") if p.is_file() and p.name.endswith(INPUT_SUFFIXES)]
        elif path.is_file():
            found.append(path)
        else:
            raise UserError(f"no such file or folder: {path}")
    return sorted(found, key=lambda p: (p.name, str(p)))


def read_lines(data: bytes, name: str) -> list[bytes]:
    """The raw lines of a delivery; raises ValueError(reason) if it is unreadable whole."""
    if name.endswith(".gz") or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as err:
            raise ValueError(f"unreadable gzip ({err})") from None
    if b"\x00" in data[:4096]:
        raise ValueError("not a text file (binary content)")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def ingested(wh: Warehouse) -> tuple[set[str], dict[str, tuple[int, int, str]]]:
    """sha256 of every ingested delivery, and (size, mtime_ns, sha256) by file path: a file
    whose path, size and mtime are unchanged since it was ingested is not read again."""
    files = wh.files("ingest_log")
    if not files:
        return set(), {}
    log = pl.scan_parquet(files, missing_columns="insert").filter(
        pl.col("status").is_in(["ingested", "already_ingested"])
    )
    shas = set(log.filter(pl.col("status") == "ingested").select("sha256").collect()["sha256"])
    seen = log.filter(pl.col("size").is_not_null()).select("file", "size", "mtime_ns", "sha256")
    stats = {f: (size, mtime, sha) for f, size, mtime, sha in seen.collect().iter_rows()}
    return shas, stats


def next_delivery(wh: Warehouse) -> int:
    files = wh.files("ingest_log")
    if not files:
        return 1
    top = pl.read_parquet(files, columns=["delivery"])["delivery"].max()
    return int(top or 0) + 1


def known_parents(wh: Warehouse, record_type: str, column: str) -> pl.DataFrame:
    """(key, partition) of the parents already in bronze."""
    files = wh.files(bronze_table(record_type))
    if not files:
        return pl.DataFrame(schema={column: pl.String(), "raw_month": pl.String()})
    return pl.read_parquet(files, columns=[column, "raw_month"]).unique(column, keep="last")


ANCHOR = {"simultane.deal": "tournament_start", "ff.match": "created_at", "bridge.event": "date"}


def own_partition(record_type: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Storage partition of records that carry their own date: the raw month of the date the
    rules anchor them to (no setting moves it; `transforms/calendar.py`)."""
    column = ANCHOR[record_type]
    return frame.with_columns(
        raw_month_expr(column, frame.schema[column]).alias("raw_month")
    )


def ingest(
    wh: Warehouse,
    tx: Transaction,
    paths: list[Path],
    progress=print,
) -> IngestResult:
    """Validate and stage the given files into bronze (published by the caller's commit)."""
    now = datetime.now(UTC)
    done, stats = ingested(wh)
    delivery = next_delivery(wh)
    result = IngestResult()
    validated: list[tuple[FileReport, Validated]] = []
    quarantine: list[pl.DataFrame] = []
    seen_this_run: set[str] = set()

    inputs = list_inputs(paths)
    for i, path in enumerate(inputs, start=1):
        stat = path.stat()
        known = stats.get(str(path))
        if known and known[:2] == (stat.st_size, stat.st_mtime_ns) and known[2] in done:
            # unchanged since it was ingested: not read again (cost grows with new files only)
            report = FileReport(str(path), known[2], stat.st_size, stat.st_mtime_ns)
            report.status = "already_ingested"
            report.read = False  # not read this run: no ingest_log row
            result.files.append(report)
            continue
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        report = FileReport(str(path), sha, stat.st_size, stat.st_mtime_ns)
        result.files.append(report)
        if sha in done or sha in seen_this_run:
            report.status = "already_ingested"
            continue
        seen_this_run.add(sha)
        try:
            lines = read_lines(data, path.name)
        except ValueError as err:
            report.status = "unreadable"
            report.lines_read = report.rows_quarantined = 1
            quarantine.append(
                pl.DataFrame(
                    [
                        {
                            "file": str(path),
                            "line_no": 0,
                            "raw": repr(data[:200]),
                            "reason": str(err),
                        }
                    ],
                    schema=QUARANTINE_SCHEMA,
                ).with_columns(pl.lit(sha).alias("sha256"))
            )
            continue
        report.delivery = delivery
        v = validate_lines(lines, str(path), delivery=delivery)
        if (
            v.lines_read
            and not v.accepted
            and all(
                q["reason"] in ("invalid JSON", "not UTF-8", "not a JSON object")
                for q in v.quarantine
            )
        ):
            report.status = "unreadable"
        report.lines_read = v.lines_read
        validated.append((report, v))
        delivery += 1
        if len(inputs) > 20 and i % 20 == 0:
            progress(f"  validated {i}/{len(inputs)} files")

    # Gather typed rows per record type across the run, then give each its month.
    frames: dict[str, list[pl.DataFrame]] = {}
    for report, v in validated:
        for rtype, frame in v.frames().items():
            frames.setdefault(rtype, []).append(
                frame.with_columns(pl.lit(report.sha256).alias("_sha"))
            )
        quarantine.append(v.quarantine_frame().with_columns(pl.lit(report.sha256).alias("sha256")))
    typed = {rtype: pl.concat(parts) for rtype, parts in frames.items()}
    for rtype in ANCHOR:
        if rtype in typed:
            typed[rtype] = own_partition(rtype, typed[rtype])
    parents_of: dict[str, pl.DataFrame] = {}  # read once per parent type
    for rtype, (parent, column, reason) in PARENT.items():
        if rtype not in typed:
            continue
        if parent not in parents_of:
            parents = known_parents(wh, parent, column)
            if parent in typed:  # this run's parents win over older deliveries
                parents = pl.concat([parents, typed[parent].select(column, "raw_month")]).unique(
                    column, keep="last"
                )
            parents_of[parent] = parents
        parents = parents_of[parent]
        rows = typed[rtype].drop("raw_month").join(parents, on=column, how="left")
        orphans = rows.filter(pl.col("raw_month").is_null())
        if orphans.height:
            quarantine.append(
                orphans.select(
                    pl.col("source_file").alias("file"),
                    "line_no",
                    pl.lit(None, pl.String).alias("raw"),
                    pl.format(f"{reason} {{}}", pl.col(column)).alias("reason"),
                    pl.col("_sha").alias("sha256"),
                )
            )
        typed[rtype] = rows.filter(pl.col("raw_month").is_not_null())

    # Quarantined orphans need their raw text back: re-read it from the validated lines.
    empty = pl.DataFrame(schema=QUARANTINE_SCHEMA | {"sha256": pl.String()})
    quarantine_frame = _with_raw(
        pl.concat([empty, *quarantine], how="diagonal_relaxed"), validated, inputs
    )
    quarantine_frame = quarantine_frame.with_columns(pl.lit(now).alias("ingested_at"))

    per_file_accepted: dict[str, int] = {}
    for rtype, frame in typed.items():
        schema = list(RECORD_TYPES[rtype].schema())
        table = bronze_table(rtype)
        for (sha, month), part in frame.group_by("_sha", "raw_month"):
            tx.add("bronze", table, f"raw_month={month}", part.select(schema).sort("line_no"))
            per_file_accepted[sha] = per_file_accepted.get(sha, 0) + part.height
            result.months.setdefault(rtype, set()).add(month)
    quarantined = quarantine_frame.group_by("sha256").len()
    per_file_quarantined = dict(zip(quarantined["sha256"], quarantined["len"], strict=True))
    for report, _ in validated:
        report.rows_accepted = per_file_accepted.get(report.sha256, 0)
        report.rows_quarantined = per_file_quarantined.get(report.sha256, 0)
        assert report.lines_read == report.rows_accepted + report.rows_quarantined, report

    # Quarantine and log are partitioned by month of ingestion, one file per month.
    ingest_month = f"month={now:%Y-%m}"
    if quarantine_frame.height:
        tx.add(
            "quarantine",
            "quarantine",
            ingest_month,
            quarantine_frame.select(*QUARANTINE_TABLE_SCHEMA),
        )
        tx.compact("quarantine", "quarantine", ingest_month)
    log = pl.DataFrame(
        [
            {
                "run_id": tx.run_id,
                "delivery": r.delivery,
                "file": r.file,
                "sha256": r.sha256,
                "size": r.size,
                "mtime_ns": r.mtime_ns,
                "lines_read": r.lines_read,
                "rows_accepted": r.rows_accepted,
                "rows_quarantined": r.rows_quarantined,
                "status": r.status,
                "ingested_at": now,
            }
            for r in result.files
            if r.read
        ],
        schema=INGEST_LOG_SCHEMA,
    )
    if log.height:
        tx.add("meta", "ingest_log", ingest_month, log)
        tx.compact("meta", "ingest_log", ingest_month)
    return result


def _with_raw(
    quarantine: pl.DataFrame, validated: list[tuple[FileReport, Validated]], inputs: list[Path]
) -> pl.DataFrame:
    """Fill the raw text of quarantined orphan rows (their lines had parsed fine)."""
    missing = quarantine.filter(pl.col("raw").is_null())
    if not missing.height:
        return quarantine
    by_file = {str(p): p for p in inputs}
    raw_rows = []
    for file, part in missing.group_by("file"):
        lines = read_lines(by_file[file[0]].read_bytes(), file[0])
        for n in part["line_no"].to_list():
            raw_rows.append({"file": file[0], "line_no": n, "raw_text": lines[n - 1].decode()})
    raw = pl.DataFrame(
        raw_rows, schema={"file": pl.String, "line_no": pl.Int64, "raw_text": pl.String}
    )
    return (
        quarantine.join(raw, on=["file", "line_no"], how="left")
        .with_columns(pl.coalesce("raw", "raw_text").alias("raw"))
        .drop("raw_text")
    )
