"""`ingest`: read the delivered files of a run into bronze, quarantine and the ingest log.

Every physical line of every file read ends as a bronze row or a quarantine row naming file
and line, with a reason; the log records per file `lines_read = rows_accepted +
rows_quarantined` (lines_read is the file's number of lines; for a PBN file, a "line" is a
record: the event, each traveller line or played board, and each game the parser skipped).
Files that are not read get a log row with their status once (`skipped: unknown suffix`,
`refused: symlink outside the landing folder`, …). A file whose content was already read
(same sha256) is `already_ingested`; one unchanged since it was logged (path, size, mtime) is
neither read nor logged again. A file none of whose lines can be read (not text, truncated
gzip from its first byte, …) is `unreadable`: quarantined whole, its bytes kept intact under
`quarantine/files/` so `--replay-quarantine` can read it again after a fix.
"""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from flows.ingest import block_pool, pbn
from flows.ingest.batch import Batches
from flows.ingest.context import Context, Progress, open_context
from flows.ingest.faults import RUN_ERRNOS, one_line_resource_failures
from flows.ingest.file_check import FileCheck
from flows.ingest.file_stream import FileStream
from flows.ingest.landing import Changed, Input, LandingFile, RemoteFile, open_input
from flows.ingest.listing import is_pbn, list_inputs
from flows.ingest.log import READ, FileReport, log_frame
from flows.ingest.options import IngestOptions
from flows.ingest.parse import release_scratch
from flows.ingest.reader_threads import Prefetch
from flows.ingest.replay import replay_late_children, replay_quarantine
from flows.ingest.summary import IngestResult
from flows.ingest.validate import Validator
from flows.storage.operations import AddFile, touching
from flows.storage.warehouse import Transaction, Warehouse


def ingest(
    wh: Warehouse,
    tx: Transaction,
    paths: list[Path],
    opts: IngestOptions | None = None,
    run_date: date | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Validate and stage the given files into bronze (published by the caller's commit).

    `run_date` (the nightly's as-of date, else today) sets the plausible window of times;
    `progress(files done, lines read)` is called after each file. Stages nothing when nothing
    is new (no file read, no status to log).
    """
    ctx = open_context(wh, tx, opts, run_date)
    ctx.batches = Batches(ctx.sink, ctx.validator, ctx.opts.chunk_bytes, ctx.opts.chunk_lines)
    inputs: list[Input] = []
    try:
        with one_line_resource_failures():
            exclude = wh.root if wh.root is not None else wh.store.url
            inputs = list_inputs(paths, exclude=exclude)
            for done, item in enumerate(inputs, start=1):
                ctx.upcoming = inputs[done:]
                _ingest_input(ctx, item)
                if ctx.batches.full:  # outside the file's own errors: it was read whole
                    _flush(ctx)
                if progress is not None:
                    progress(done, ctx.lines)
            _flush(ctx)
            ctx.sink.finish()
            replayed = replay_late_children(ctx)
            return _result(ctx, replayed)
    finally:
        _drop(ctx.ahead)
        for item in inputs:
            item.close()
        ctx.validator.close()
        ctx.sink.close()
        block_pool.release()


def replay(
    wh: Warehouse,
    tx: Transaction,
    reason: str | None = None,
    opts: IngestOptions | None = None,
    run_date: date | None = None,
) -> IngestResult:
    """`--replay-quarantine`: quarantined lines (reason containing `reason`) validated again."""
    ctx = open_context(wh, tx, opts, run_date)
    try:
        with one_line_resource_failures():
            replayed = replay_quarantine(ctx, reason)
            return _result(ctx, replayed)
    finally:
        ctx.validator.close()


def _result(ctx: Context, replayed: int) -> IngestResult:
    reports = ctx.sink.reports + ctx.replayed_reports
    _log(ctx, reports)
    return IngestResult(reports, ctx.sink.months, _quarantine_counts(ctx), replayed)


def _ingest_input(ctx: Context, item: Input) -> None:
    try:
        _ingest_one(ctx, item)
    finally:
        if ctx.ahead is not None and ctx.ahead.item is item:  # read ahead, not read
            _drop(ctx.ahead)
            ctx.ahead = None
        item.close()


def _report(item: Input) -> FileReport:
    """The report of an input with what the listing saw of it (its identity)."""
    path = item.path
    report = FileReport(item.file)
    if isinstance(path, RemoteFile):
        report.size, report.mtime_ns = path.size, path.mtime_ns
    elif item.stat is not None:
        seen = item.stat
        report.size, report.mtime_ns = seen.st_size, seen.st_mtime_ns
        report.ctime_ns, report.inode = seen.st_ctime_ns, seen.st_ino
    return report


def _ingest_one(ctx: Context, item: Input) -> None:
    report = _report(item)
    logged = ctx.state.unchanged(report) if report.size is not None else None
    if logged is not None:  # unchanged since a run logged it: not read, not logged again
        report.status = "already_ingested" if logged in READ else logged
        report.logged = False
        ctx.sink.open(report)
        return
    if item.skip:
        report.status = item.skip
        ctx.sink.open(report)
        return
    try:
        source = item.open()
    except Changed as changed:  # not the file listed: never read, looked at again next run
        report.status = changed.status
        ctx.sink.open(report)
        return
    except OSError as err:
        if err.errno in RUN_ERRNOS:
            raise
        report.status = f"error: {err.strerror or err}"
        ctx.sink.open(report)
        return
    mark = ctx.sink.mark()
    try:
        small = _read_file(ctx, item, source, report)
        if small is None and report.delivery is not None:
            _keep_if_unreadable(ctx, ctx.sink.reports.index(report), source)
    except OSError as err:  # unreadable on disk (an I/O error, vanished): retried next run
        if err.errno in RUN_ERRNOS:
            raise
        report.status = f"error: {err.strerror or err}"
        report.lines_read = report.rows_accepted = report.rows_quarantined = 0
        report.delivery = None
        opened = [i for i, r in enumerate(ctx.sink.reports) if r is report]
        if opened:
            ctx.sink.undo(opened[0], mark)
        else:  # it failed before it was opened (hashing a possible copy)
            ctx.sink.open(report)


def _read_file(
    ctx: Context, item: Input, source: LandingFile | RemoteFile, report: FileReport
) -> _Small | None:
    """Read one file (its descriptor); returns it when it waits in a batch of small files."""
    small = None  # a small file is read whole first (its hash then tells a copy)
    pbn_file = is_pbn(item.path.name)
    if ctx.batches is not None and not pbn_file and ctx.batches.takes(report.size):
        small = _Small(FileStream(source, item.path.name, ctx.opts))
        report.sha256 = small.stream.sha256
    if report.sha256 is None and report.size in ctx.state.sizes:  # may be a copy: hash it
        report.sha256 = _sha256(source, ctx.opts.chunk_bytes)
    if report.sha256 in ctx.state.shas:
        report.status = "already_ingested"
        ctx.sink.open(report)
        return None
    report.delivery = ctx.state.next_delivery
    ctx.state.next_delivery += 1
    index = ctx.sink.open(report)
    batched = None
    if pbn_file:
        pbn.ingest_pbn(ctx, index, source, name=report.file)
    elif small is not None:
        batched = _add_small(ctx, index, small)
    else:
        _read_lines(ctx, index, item, source)
    ctx.state.read(report)
    if report.lines_read == 0:
        report.status = "empty"
    return batched


def _read_lines(ctx: Context, index: int, item: Input, source) -> None:
    report = ctx.sink.reports[index]
    reading, ctx.ahead = ctx.ahead, None
    if reading is None or reading.item is not item:
        _drop(reading)
        reading = _Reading(ctx, item, source)
    reading.check.delivery = report.delivery
    _read_ahead(ctx)  # the next file is read while this one is checked
    try:
        for chunk, prepared in reading.chunks:
            checked = ctx.validator.finish(prepared, chunk, reading.check)
            _staged(ctx, index, chunk, checked)
    finally:
        reading.close()
    report.sha256 = reading.stream.sha256


class _Reading:
    """A file read in one reader thread (bytes, hash, lines), parsed by DuckDB in another
    (with its line-level checks: `Validator.parse`) and checked in the third (all but the
    copies of earlier lines: `Validator.prepare`), a chunk ahead of each other and of the
    main thread (`Validator.finish`, staging)."""

    def __init__(self, ctx: Context, item: Input, source: LandingFile | RemoteFile):
        self.item = item
        self.stream = FileStream(source, item.path.name, ctx.opts)
        self.check = FileCheck(item.file, delivery=-1)  # its delivery: once it is read
        self.cursors = [ctx.validator.con.cursor() for _ in range(2)]
        # submitted in order: the reading starts first
        lines = Prefetch(self._lines())
        parsed = Prefetch(self._parsed(ctx.validator, lines))
        self.chunks = Prefetch(self._prepared(ctx.validator, parsed))

    def _lines(self):
        for chunk in self.stream.chunks():
            self.check.encoding = self.stream.encoding
            yield chunk

    def _parsed(self, validator: Validator, lines: Prefetch):
        # Polars imports it at the first column it makes from NumPy (~10 ms, the first time
        # in a process): imported while the first block is being read
        import numpy.ma  # noqa: F401

        try:
            for chunk in lines:
                yield chunk, validator.parse(chunk, self.check, self.cursors[0])
        finally:
            lines.close()
            release_scratch()

    def _prepared(self, validator: Validator, parsed: Prefetch):
        try:
            for chunk, parse in parsed:
                yield chunk, validator.prepare(chunk, self.check, parse, self.cursors[1])
        finally:
            parsed.close()
            release_scratch()

    def close(self) -> None:
        self.chunks.close()
        for cursor in self.cursors:
            cursor.close()


def _drop(reading: _Reading | None) -> None:
    """A reading started ahead for an input that was not read after all: stopped (its tasks
    hold the reader threads the next reading needs)."""
    if reading is not None:
        reading.close()


def _read_ahead(ctx: Context) -> None:
    """Start reading the next input now when it will be read line by line (not skipped, not
    unchanged, not PBN, not small, no size of a possible copy): its first chunk is parsed
    while the main thread checks the last ones of this file. Its report is made in its turn
    (if it then turns out not to be read, the reading is dropped)."""
    if not ctx.upcoming:
        return
    item = ctx.upcoming[0]
    path = item.path
    if item.skip or is_pbn(path.name) or isinstance(path, RemoteFile) or item.stat is None:
        return
    report = _report(item)
    if (
        ctx.state.unchanged(report) is not None
        or report.size in ctx.state.sizes
        or (ctx.batches is not None and ctx.batches.takes(report.size))
    ):
        return
    try:
        source = item.open()  # opened once: its turn reads this descriptor
    except (Changed, OSError):
        return  # said in its turn
    ctx.ahead = _Reading(ctx, item, source)


class _Small:
    """The first chunks of a small file: all of it, unless it decompresses to more."""

    def __init__(self, stream: FileStream):
        self.stream = stream
        self.rest = stream.chunks()
        self.first = next(self.rest, None)
        self.second = next(self.rest, None) if self.first is not None else None

    @property
    def batched(self) -> bool:
        """Whether it may wait in a batch: one chunk of UTF-8 lines."""
        chunk = self.first
        return (
            chunk is not None
            and self.second is None
            and not chunk.special
            and self.stream.encoding == "utf-8"
        )


def _add_small(ctx: Context, index: int, small: _Small) -> _Small | None:
    """A small file: left to wait in a batch (returned), or validated alone now."""
    report = ctx.sink.reports[index]
    if small.batched:
        report.lines_read += small.first.lines
        ctx.lines += small.first.lines
        ctx.batches.add(index, small.first, small.stream.whole)
        report.sha256 = small.stream.sha256
        return small
    if small.first is not None:
        stream = small.stream
        check = FileCheck(report.file, report.delivery, encoding=stream.encoding)
        for chunk in (small.first, *([small.second] if small.second is not None else [])):
            _add_chunk(ctx, index, chunk, check)
        for chunk in small.rest:
            check.encoding = stream.encoding
            _add_chunk(ctx, index, chunk, check)
    report.sha256 = small.stream.sha256
    return None


def _add_chunk(ctx: Context, index: int, chunk, check: FileCheck) -> None:
    _staged(ctx, index, chunk, ctx.validator.check(chunk, check))


def _staged(ctx: Context, index: int, chunk, checked) -> None:
    ctx.sink.reports[index].lines_read += chunk.lines
    ctx.lines += chunk.lines
    ctx.sink.add(index, checked, chunk)


def _sha256(source, block: int) -> str:
    digest = hashlib.sha256()
    with open_input(source) as handle:
        while data := handle.read(block):
            digest.update(data)
    return digest.hexdigest()


def _flush(ctx: Context) -> None:
    """Validate the small files waiting in a batch; keep those none of whose lines could be
    read (their bytes were kept in memory: their descriptors are closed by now)."""
    for index, whole in ctx.batches.flush():
        _keep_if_unreadable(ctx, index, whole)


def _keep_if_unreadable(ctx: Context, index: int, source) -> None:
    """A file none of whose lines could be read: quarantined whole, its bytes kept (read from
    its descriptor, or from memory for a small file)."""
    report = ctx.sink.reports[index]
    if report.lines_read == 0 or index in ctx.sink.readable or index in ctx.sink.failed:
        return
    report.status = "unreadable"
    suffix = "".join(Path(report.file).suffixes[-2:]) or ".bin"
    if isinstance(source, np.ndarray):
        data = source.tobytes()
    elif isinstance(source, RemoteFile):
        data = source.read_bytes()
    else:
        data = ctx.sink.copy_out(source, suffix)
    ctx.tx.add_bytes("quarantine", "quarantine_files", f"sha256={report.sha256}", data, suffix)


def _log(ctx: Context, reports: list[FileReport]) -> None:
    log = log_frame(ctx.tx.run_id, reports, ctx.sink.now)
    partition = ctx.sink.ingest_partition
    if log.height:
        ctx.tx.add("meta", "ingest_log", partition, log)
        _compact(ctx, "meta", "ingest_log", partition)
    if touching(ctx.tx.ops, "quarantine"):
        _compact(ctx, "quarantine", "quarantine", partition)


def _compact(ctx: Context, layer: str, table: str, partition: str) -> None:
    """One file for the partition (files written before a column was added read as nulls)."""
    files = ctx.wh.files(table, [partition], ctx.tx.ops)
    if len(files) > 1:
        scans = [ctx.wh.scan_files([f]) for f in files]
        ctx.tx.put(layer, table, partition, pl.concat(scans, how="diagonal_relaxed"))


def _quarantine_counts(ctx: Context) -> list[tuple[str, int, str, int]]:
    """This run's quarantined lines by rule: how many, one reason as an example."""
    files = [
        ctx.wh.store.uri(op.file.path)
        for op in touching(ctx.tx.ops, "quarantine")
        if isinstance(op, AddFile)
    ]
    if not files:
        return []
    counts = (
        ctx.wh.scan_files(files)
        .group_by("rule")
        .agg(
            pl.col("line_count").sum().alias("lines"),
            pl.col("reason").first().alias("example"),
            pl.col("reason").n_unique().alias("reasons"),
        )
        .sort("lines", "rule", descending=[True, False])
        .collect()
    )
    return counts.rows()
