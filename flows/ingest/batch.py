"""Small files validated together: the checks of a chunk cost ~30 ms whatever its size, so a
landing of many small files (one per tournament, per match) was read at ~2,000 lines a second.

A file of at most `chunk_bytes / 16` bytes that reads as one chunk of UTF-8 lines (no line
too long, no gzip problem) waits in the batch; the batch is validated as one chunk when it
holds `chunk_bytes` of lines or `chunk_lines` lines, before the run's end, or at the end.
Each file keeps its own checks (a duplicate is one of an earlier line of the same file) and
its own line numbers, reasons and counts (`file_check.Batch`, `Sink.add` with a list of
files). Other files are read and validated alone as they come: their rows may be staged
before those of a waiting batch (the order of staging changes nothing: children wait for
their parent until the run's end).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from flows.ingest.file_check import Batch, FileCheck
from flows.ingest.line_split import Chunk
from flows.ingest.stage import Sink
from flows.ingest.validate import Validator

SMALL = 16  # a file of at most chunk_bytes / SMALL bytes may wait in a batch


@dataclass
class Batches:
    """The whole small files waiting to be validated, and the fields their parse asks for."""

    sink: Sink
    validator: Validator
    chunk_bytes: int
    chunk_lines: int = 2**17
    waiting: list[tuple[int, Chunk]] = field(default_factory=list)  # (report, its lines)
    whole: list[np.ndarray | bytes | None] = field(default_factory=list)  # each file's bytes
    size: int = 0
    lines: int = 0
    fields: tuple[str, ...] | None = None

    def takes(self, size: int) -> bool:
        """Whether a file of `size` bytes may wait in a batch."""
        return size <= self.chunk_bytes // SMALL

    def add(self, index: int, chunk: Chunk, whole: np.ndarray | bytes | None = None) -> None:
        """A file waits (`whole`: its bytes as delivered, kept in case none of its lines can
        be read: its descriptor is closed before the batch is validated)."""
        self.waiting.append((index, chunk))
        self.whole.append(whole)
        self.size += chunk.raw.nbytes
        self.lines += len(chunk.line_no)

    @property
    def full(self) -> bool:
        """Whether the batch is validated now: `chunk_bytes` of lines, or `chunk_lines` lines
        (a file waiting has fewer lines than that: a batch has at most twice as many)."""
        return self.size >= self.chunk_bytes or self.lines >= self.chunk_lines

    def flush(self) -> list[tuple[int, np.ndarray | bytes | None]]:
        """Validate and stage the waiting files (one chunk for all of them); returns each
        file's report and bytes."""
        waiting, self.waiting, self.size, self.lines = self.waiting, [], 0, 0
        whole, self.whole = self.whole, []
        if not waiting:
            return []
        reports = [self.sink.reports[i] for i, _ in waiting]
        if len(waiting) == 1:
            (index, chunk), report = waiting[0], reports[0]
            check = FileCheck(report.file, report.delivery, fields=self.fields)
            self.sink.add(index, self.validator.check(chunk, check), chunk)
        else:
            counts = np.array([len(c.line_no) for _, c in waiting], np.int64)
            ends = np.cumsum(counts)
            line_no = np.concatenate(
                [c.line_no + start for (_, c), start in zip(waiting, ends - counts, strict=True)]
            )
            chunk = Chunk(line_no, pa.concat_arrays([c.raw for _, c in waiting]))
            batch = Batch([r.file for r in reports], [r.delivery for r in reports], ends)
            check = FileCheck("", 0, fields=self.fields, batch=batch)
            self.sink.add([i for i, _ in waiting], self.validator.check(chunk, check), chunk)
        self.fields = check.fields
        return [(i, data) for (i, _), data in zip(waiting, whole, strict=True)]
