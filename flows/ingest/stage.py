"""Stage a run's validated rows: bronze files as chunks are validated, children held until
their parent's month is known, quarantine rows; counts per file.

Bronze rows are written (through the run's transaction, published by its commit) chunk by
chunk, one file per record type and month, so memory holds a chunk, not a run. A child whose
parent is neither in bronze nor earlier in the run is held (spilled to a scratch Parquet file
beyond `HELD_IN_MEMORY` rows) until the run has read every file; then it gets its parent's
month or is quarantined as `unknown match …` / `unknown event …`. The run keeps the (id,
month) of the parents it reads and of those in bronze (read once per run): ~40 bytes a match
or event.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from flows.ingest.checked import Checked
from flows.ingest.line_split import Chunk
from flows.ingest.log import FileReport
from flows.ingest.partition import assign_partition, parent_keys
from flows.ingest.reasons import raw_texts
from flows.storage.local import process_running
from flows.storage.warehouse import Transaction, Warehouse
from transforms.calendar import RAW_MONTH
from transforms.record_types import RECORD_TYPES

QUARANTINE_TABLE_SCHEMA = {
    "file": pl.String(),
    "line_no": pl.Int64(),
    "raw": pl.String(),
    "reason": pl.String(),
    "rule": pl.String(),  # the check that failed (e.g. `invalid_json`, `deal_no|max`)
    "sha256": pl.String(),
    "ingested_at": pl.Datetime("us", "UTC"),
    # a row stands for the lines line_no..last_line_no (line_count of them), all the same text
    # with the same reason: a run of identical rejected lines is one row
    "last_line_no": pl.Int64(),
    "line_count": pl.Int64(),
}


def quarantine_lines(rows: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows with one row per line: a row standing for a run of identical lines
    (`line_no`..`last_line_no`) becomes one row per line of the run, `line_count` 1 (rows
    staged before runs were kept have no `last_line_no`: a row is one line)."""
    if "last_line_no" not in rows.columns:
        return rows.with_columns(
            pl.col("line_no").alias("last_line_no"), pl.lit(1, pl.Int64).alias("line_count")
        )
    last = pl.coalesce("last_line_no", "line_no")
    return (
        rows.with_columns(pl.int_ranges("line_no", last + 1, dtype=pl.Int64).alias("line_no"))
        .explode("line_no")
        .with_columns(
            pl.col("line_no").alias("last_line_no"), pl.lit(1, pl.Int64).alias("line_count")
        )
    )


# a file whose lines all fail one of these is quarantined whole (no line of it could be read)
UNREADABLE = ("not_utf8", "empty_line", "invalid_json", "not_object", "line_length", "gzip",
              "duplicate_line")  # fmt: skip
HELD_IN_MEMORY = 200_000
QUARANTINE_BUFFER = 100_000


def _scratch_prefix(pid: int | None = None) -> str:
    """The name of a run's scratch folder (in the temporary folder) starts with its host and
    process id: removed when the run ends, or by a later run once that process is gone."""
    return f"duplirank-ingest-{socket.gethostname()}-" + ("" if pid is None else f"{pid}-")


def remove_stale_scratch() -> None:
    """Remove the scratch folders of this host's runs whose process no longer runs (killed,
    or aborted by an allocation that failed: no clean-up of their own ran)."""
    here = _scratch_prefix()
    try:
        folders = list(Path(tempfile.gettempdir()).glob(f"{glob.escape(here)}*"))
    except OSError:
        return
    for folder in folders:
        pid = re.fullmatch(r"(\d+)-\w+", folder.name[len(here) :])  # mkdtemp's suffix: \w
        if pid is not None and not process_running(int(pid.group(1))):
            shutil.rmtree(folder, ignore_errors=True)


def bronze_table(record_type: str) -> str:
    return RECORD_TYPES[record_type].bronze_name


@dataclass
class Sink:
    """Where the rows of a run go."""

    wh: Warehouse
    tx: Transaction
    now: datetime
    reports: list[FileReport] = field(default_factory=list)
    readable: set[int] = field(default_factory=set)  # reports with a line that could be read
    failed: set[int] = field(default_factory=set)  # reports whose file could not be read whole
    months: dict[str, set[str]] = field(default_factory=dict)  # record type -> months written
    new_parents: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    _bronze_parents: dict[str, pl.DataFrame] = field(default_factory=dict)
    _held: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    _held_rows: int = 0
    _scratch: Path | None = None
    _quarantine: list[pl.DataFrame] = field(default_factory=list)
    _quarantine_rows: int = 0
    _quarantine_files: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        remove_stale_scratch()

    @property
    def ingest_partition(self) -> str:
        """Quarantine and log are partitioned by month of ingestion."""
        return f"month={self.now:%Y-%m}"

    def open(self, report: FileReport) -> int:
        self.reports.append(report)
        return len(self.reports) - 1

    def mark(self) -> tuple[int, dict[str, int]]:
        """Where the run's staging stands (to undo a file that fails to be read)."""
        return len(self.tx.ops), {k: len(v) for k, v in self.new_parents.items()}

    def undo(self, index: int, mark: tuple[int, dict[str, int]]) -> None:
        """Forget what file `index` staged since `mark`: a file that could not be read to its
        end is read again whole next run (its written files are removed as garbage then)."""
        ops, parents = mark
        del self.tx.ops[ops:]
        for record_type, frames in self.new_parents.items():
            del frames[parents.get(record_type, 0) :]
        self.failed.add(index)

    # ------------------------------------------------------------------ rows of a chunk
    def add(self, index: int | list[int], checked: Checked, chunk: Chunk | None) -> None:
        """Stage the rows of one validated chunk of file `index` (or of a batch of whole
        files: `index` lists their reports, the rows say which (`_file`, place in the list))."""
        if isinstance(index, list):
            files = pl.Series(index, dtype=pl.Int64)
            checked = Checked(
                {k: _to_reports(v, files) for k, v in checked.rows.items()},
                _to_reports(checked.quarantine, files),
            )
        self.quarantine(index, checked.quarantine)
        for record_type in sorted(checked.rows, key=_parents_first):
            rows = checked.rows[record_type]
            self.readable.update(self._files(index, rows))
            rt = RECORD_TYPES[record_type]
            if rt.parent is None:
                rows = assign_partition(record_type, rows)
                if any(
                    c.parent and c.parent.record_type == record_type for c in RECORD_TYPES.values()
                ):
                    self.new_parents.setdefault(record_type, []).append(
                        parent_keys(record_type, rows)
                    )
                self.write(record_type, rows)
                self._accepted(index, rows)
                continue
            rows = assign_partition(record_type, rows, self.parents(rt.parent.record_type))
            found = rows.filter(pl.col(RAW_MONTH).is_not_null())
            self.write(record_type, found)
            self._accepted(index, found)
            held = rows.filter(pl.col(RAW_MONTH).is_null())
            if held.height:
                self.hold(record_type, index, held, chunk)

    def _files(self, index: int | list[int], rows: pl.DataFrame) -> list[int]:
        """The reports of some rows."""
        if not rows.height:
            return []
        return rows["_file"].unique().to_list() if "_file" in rows.columns else [index]

    def _accepted(self, index: int | list[int], rows: pl.DataFrame) -> None:
        if "_file" not in rows.columns:
            self.reports[index].rows_accepted += rows.height
            return
        for file, n in rows.group_by("_file").len().iter_rows():
            self.reports[file].rows_accepted += n

    def quarantine(self, index: int | list[int], rows: pl.DataFrame) -> None:
        """Quarantine rows (line_no, raw, reason, rule; last_line_no and line_count for a run
        of the same line) of file `index` (or of the files their `_file` says); the sha256 is
        added when the run ends (a file's hash is known once it is read whole)."""
        if not rows.height:
            return
        if "_file" not in rows.columns:
            rows = rows.with_columns(pl.lit(index, pl.Int64).alias("_file"))
        if "line_count" not in rows.columns:  # a row per line
            rows = rows.with_columns(
                pl.col("line_no").alias("last_line_no"), pl.lit(1, pl.Int64).alias("line_count")
            )
        counts = rows.group_by("_file").agg(pl.col("line_count").sum())
        for file, n in counts.iter_rows():
            self.reports[file].rows_quarantined += n
        self.readable.update(self._files(index, rows.filter(~pl.col("rule").is_in(UNREADABLE))))
        self._quarantine.append(
            rows.select("line_no", "raw", "reason", "rule", "_file", "last_line_no", "line_count")
        )
        self._quarantine_rows += rows.height
        if self._quarantine_rows >= QUARANTINE_BUFFER:
            self._spill_quarantine()

    def write(self, record_type: str, rows: pl.DataFrame) -> int:
        """Add bronze files (one per partition) for rows that have their partition."""
        if not rows.height:
            return 0
        schema = list(RECORD_TYPES[record_type].schema())
        months = rows[RAW_MONTH].unique()
        parts = (
            [(months[0], rows)]
            if len(months) == 1
            else (  # a chunk is mostly one month
                (month, part) for (month,), part in rows.group_by(RAW_MONTH)
            )
        )
        for month, part in parts:
            key = f"{RAW_MONTH}={month}"
            # bronze is read whole per partition (its folder): no row-group statistics to
            # prune with, and they were a third of the cost of writing it
            self.tx.add(
                "bronze", bronze_table(record_type), key, part.select(schema), statistics=False
            )
            self.months.setdefault(record_type, set()).add(month)
        return rows.height

    # ------------------------------------------------------------------ parents
    def parents(self, record_type: str) -> pl.DataFrame:
        """(key, raw_month) of the known parents: bronze, then this run's (which win)."""
        if record_type not in self._bronze_parents:
            key = RECORD_TYPES[record_type].key[0]
            files = self.wh.files(bronze_table(record_type))
            known = pl.DataFrame(schema={"key": pl.String(), RAW_MONTH: pl.String()})
            if files:
                known = (
                    self.wh.scan_files(files).select(pl.col(key).alias("key"), RAW_MONTH).collect()
                )
            self._bronze_parents[record_type] = known
        frames = [self._bronze_parents[record_type], *self.new_parents.get(record_type, [])]
        return pl.concat(frames).unique("key", keep="last")

    def hold(self, record_type: str, index: int, rows: pl.DataFrame, chunk: Chunk | None) -> None:
        """Keep children whose parent is not known yet (with their raw text, if quarantined)."""
        if chunk is not None:
            rows = rows.with_columns(raw_texts(chunk.raw, rows["_pos"].to_numpy()).alias("_raw"))
        if "_file" not in rows.columns:
            rows = rows.with_columns(pl.lit(index, pl.Int64).alias("_file"))
        self._held.setdefault(record_type, []).append(rows.drop(RAW_MONTH, "_pos", strict=False))
        self._held_rows += rows.height
        if self._held_rows > HELD_IN_MEMORY:
            self._spill()

    def _scratch_file(self, name: str, suffix: str = ".parquet") -> Path:
        """A new file in the run's scratch folder (deleted when the run ends)."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix=_scratch_prefix(os.getpid())))
        return self._scratch / f"{name}-{sum(1 for _ in self._scratch.iterdir())}{suffix}"

    def copy_out(self, source, suffix: str) -> Path:
        """A scratch copy of an opened file's bytes (`source.open()`: read through its
        descriptor, never by its name again)."""
        path = self._scratch_file("delivery", suffix)
        with source.open() as handle, open(path, "wb") as out:
            while data := handle.read(1 << 24):
                out.write(data)
        return path

    def _spill(self) -> None:
        for record_type, parts in self._held.items():
            frames = [f for f in parts if isinstance(f, pl.DataFrame)]
            if frames:
                path = self._scratch_file(record_type)
                pl.concat(frames, how="diagonal_relaxed").write_parquet(path)
                self._held[record_type] = [f for f in parts if isinstance(f, Path)] + [path]
        self._held_rows = 0

    def _spill_quarantine(self) -> None:
        path = self._scratch_file("quarantine")
        pl.concat(self._quarantine).write_parquet(path)
        self._quarantine_files.append(path)
        self._quarantine, self._quarantine_rows = [], 0

    # ------------------------------------------------------------------ end of the run
    def finish(self) -> None:
        """Children held until now go to their parent's month, or are quarantined; the
        quarantine rows of the run are staged (with each file's sha256, known by now)."""
        try:
            for record_type, parts in self._held.items():
                parent = RECORD_TYPES[record_type].parent
                parents = self.parents(parent.record_type)
                for part in parts:
                    rows = part if isinstance(part, pl.DataFrame) else pl.read_parquet(part)
                    rows = rows.filter(~pl.col("_file").is_in(list(self.failed)))
                    self._settle(record_type, rows, parents)
            self._held = {}
            self._stage_quarantine()
        finally:
            self.close()

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def _settle(self, record_type: str, rows: pl.DataFrame, parents: pl.DataFrame) -> None:
        parent = RECORD_TYPES[record_type].parent
        rows = assign_partition(record_type, rows, parents)
        found = rows.filter(pl.col(RAW_MONTH).is_not_null())
        self.write(record_type, found)
        for index, n in found.group_by("_file").len().iter_rows():
            self.reports[index].rows_accepted += n
        orphans = rows.filter(pl.col(RAW_MONTH).is_null())
        for (index,), part in orphans.group_by("_file"):
            self.quarantine(
                index,
                part.select(
                    "line_no",
                    pl.col("_raw").alias("raw"),
                    pl.format(f"unknown {parent.noun} {{}}", parent.column).alias("reason"),
                    pl.lit("unknown_parent").alias("rule"),
                ),
            )

    def _stage_quarantine(self) -> None:
        parts = [pl.concat(self._quarantine).lazy()] if self._quarantine else []
        parts += [pl.scan_parquet(path) for path in self._quarantine_files]
        if not parts:
            return
        files = pl.LazyFrame(
            {
                "_file": range(len(self.reports)),
                "file": [r.file for r in self.reports],
                "sha256": [r.sha256 for r in self.reports],
            },
            schema={"_file": pl.Int64, "file": pl.String, "sha256": pl.String},
        )
        rows = pl.concat(parts).filter(~pl.col("_file").is_in(list(self.failed)))
        rows = rows.join(files, on="_file", how="left")
        rows = rows.with_columns(pl.lit(self.now).alias("ingested_at"))
        self.tx.add(
            "quarantine", "quarantine", self.ingest_partition, rows.select(*QUARANTINE_TABLE_SCHEMA)
        )
        self._quarantine, self._quarantine_files = [], []


def _to_reports(rows: pl.DataFrame, files: pl.Series) -> pl.DataFrame:
    """Rows of a batch with their file's report (`_file`: its place in the batch before)."""
    return rows.with_columns(files.gather(rows["_file"]).alias("_file"))


def _parents_first(record_type: str) -> int:
    return 0 if RECORD_TYPES[record_type].parent is None else 1
