"""What validating one file remembers from chunk to chunk (`FileCheck`: its copies by text and
by key), and small whole files validated as one chunk (`Batch`: each file's own lines)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from flows.ingest.hash_index import Seen

SPREAD = np.uint64(0x9E3779B97F4A7C15)  # makes a hash distinct per file of a batch


@dataclass(frozen=True)
class Batch:
    """Whole small files validated as one chunk: their line numbers run on from file to file
    (`ends`: the last number of each file), and each file's checks stay its own."""

    sources: list[str]
    deliveries: list[int]
    ends: np.ndarray  # int64, cumulative line counts

    def file_of(self, line_no: np.ndarray) -> np.ndarray:
        """The file (its place in the batch) of each line number."""
        return np.searchsorted(self.ends, line_no, side="left")

    def local(self, line_no: np.ndarray) -> np.ndarray:
        """The line numbers in their own file."""
        starts = np.concatenate([np.zeros(1, np.int64), self.ends[:-1]])
        return line_no - starts[self.file_of(line_no)]


@dataclass
class FileCheck:
    """What validating one file (or a `Batch` of whole files) remembers from chunk to chunk."""

    source: str  # the file as bronze and quarantine name it
    delivery: int
    encoding: str = "utf-8"
    fields: tuple[str, ...] | None = None  # fields the next chunk's parse asks for
    lines: Seen = field(default_factory=Seen)
    keys: dict[str, Seen] = field(default_factory=dict)
    batch: Batch | None = None

    def mix(self, h: np.ndarray, line_no: np.ndarray) -> np.ndarray:
        """Hashes of lines made distinct per file of a batch (a line copies only its file's)."""
        if self.batch is None:
            return h
        return h ^ ((self.batch.file_of(line_no).astype(np.uint64) + np.uint64(1)) * SPREAD)

    def local(self, line_no: np.ndarray) -> np.ndarray:
        return line_no if self.batch is None else self.batch.local(line_no)


def to_files(rows: pl.DataFrame, batch: Batch) -> pl.DataFrame:
    """Rows of a batch with their file (`_file`, its place in the batch) and its line number;
    bronze rows with their file's name and delivery."""
    line_no = rows["line_no"].to_numpy()
    files = pl.Series("_file", batch.file_of(line_no), pl.Int64)
    local = batch.local(line_no)
    rows = rows.with_columns(files, pl.Series("line_no", local, pl.Int64))
    if "last_line_no" in rows.columns:  # a run stays in its file (`quarantine_runs.runs`)
        rows = rows.with_columns(pl.col("last_line_no") - pl.Series(line_no - local))
    if "source_file" not in rows.columns:
        return rows
    return rows.with_columns(
        pl.Series(batch.sources, dtype=pl.String).gather(files).alias("source_file"),
        pl.Series(batch.deliveries, dtype=pl.Int64).gather(files).alias("delivery"),
    )
