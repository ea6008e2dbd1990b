"""Parse a chunk of JSON Lines once, with DuckDB, into the JSON text of every known field.

The chunk's bytes are handed to DuckDB's JSON reader (`read_json`, newline-delimited, every
field asked for as `JSON`: its JSON text; the typing is done on these short texts by
`decode`). The reader is parallel and ~2x cheaper than DuckDB's JSON functions applied line
by line, and it keeps the lines in order: row *i* is the *i*-th line that is not blank
(`read_json` skips lines made only of spaces, tabs, CR, VT and FF; an unreadable line — not
UTF-8, not JSON, not an object — is a row of nulls). A line whose `type` comes back null (and
every skipped line) is parsed again on its own (`parse_lines`: `try(decode(raw))`,
`json_valid`, `json_transform`) to tell which it is; if the rows ever do not match the lines
one for one, the whole chunk is parsed line by line.

Each line also gets a 64-bit hash of its bytes (is a line with the key of an earlier one the
same text?); whether a line is blank or an object comes from its first bytes (numpy), and its
unknown fields (`extra`) from a second DuckDB pass over the few lines that may have some
(`extra_fields`). Which lines may have some: a line longer than the compact JSON of its known
fields (`validate`), whose keys (`key_counts`, numpy over its bytes) outnumber theirs — JSON
written with spaces (`", "`, `": "`) or escaped characters is longer, not richer in keys.

DuckDB is lenient where strict JSON is not: `NaN`/`Infinity` are accepted (the field decoding
names them), trailing commas are accepted, and a key given twice keeps its first value.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest.line_split import lines_at
from transforms.record_types import RECORD_TYPES

FIELDS = tuple(sorted({"type", *(f for rt in RECORD_TYPES.values() for f in rt.fields)}))
QUERY = """
with lines as (
    select
        line_no,
        raw,
        try(decode(raw)) as txt
    from chunk
),
parsed as (
    select
        line_no,
        raw,
        txt,
        json_valid(txt) as valid
    from lines
)
select
    line_no,
    txt is not null as utf8,
    valid,
    case when valid then json_transform(txt, '{spec}') end as f
from parsed
"""
EXTRA_QUERY = """
select
    line_no,
    nullif(json_merge_patch(decode(raw), $patch), '{}') as extra
from chunk
"""
READ_JSON = """
select *
from read_json(
    $paths,
    format = 'newline_delimited',
    records = true,
    ignore_errors = true,
    compression = 'uncompressed',
    maximum_object_size = $size,
    columns = {columns}
)
"""
WHITESPACE = np.array([0x20, 0x09, 0x0D, 0x0A], dtype=np.uint8)
QUOTE, COLON, SPACE, TAB = 0x22, 0x3A, 0x20, 0x09
KEY_SPACES = 4  # spaces or tabs looked past between a key's closing `"` and its `:`
SKIPPED = b" \t\r\x0b\x0c\n"  # the bytes of a line `read_json` skips (measured, DuckDB 2.0)
SKIPPED_FIRST = np.frombuffer(SKIPPED, dtype=np.uint8)


def _spec(fields) -> str:
    """The `json_transform` structure: each field as its JSON text (a constant, quoted)."""
    return json.dumps(dict.fromkeys(fields, "JSON")).replace("'", "''")


def parse_chunk(
    con: duckdb.DuckDBPyConnection,
    line_no: np.ndarray,
    raw: pa.Array,
    fields: tuple[str, ...] = FIELDS,
) -> pl.DataFrame:
    """One row per line, in line order: line_no, h1 (a hash of the line), problem (null for
    a JSON object; else `not_utf8`, `empty_line`, `invalid_json` or `not_object`), the JSON
    text of each of `fields` (null when absent or null; `type` always), text_bytes (the
    line's length without its line end)."""
    fields = tuple(sorted({"type", *fields}))
    first, text_bytes = _first_bytes(raw)
    skipped = _skipped(raw, first, text_bytes)
    frame = _read_json(con, raw, fields)
    if frame is None or frame.height != len(raw) - int(skipped.sum()):
        return parse_lines(con, line_no, raw, fields)  # never seen: the safe way
    if skipped.any():  # a row of nulls where the reader skipped a line
        take = np.where(skipped, -1, np.cumsum(~skipped) - 1)
        frame = frame.select(pl.all().gather(pl.Series(take).replace(-1, None)))
    frame = frame.with_columns(
        pl.Series("line_no", line_no, pl.Int64),
        _hash(raw),
        pl.lit(None, pl.String).alias("problem"),
        pl.Series("text_bytes", text_bytes),
    )
    again = np.flatnonzero(skipped | frame["type"].is_null().to_numpy())
    if not len(again):
        return frame
    # why the reader has no type for these lines: their fields do not matter (no type, no
    # record: `validate` rejects them whatever they hold)
    lines = pa.array(lines_at(raw, again), pa.large_binary())
    redone = parse_lines(con, line_no[again], lines, ("type",))
    positions = pl.Series(again)
    return frame.with_columns(
        frame[name].scatter(positions, redone[name]) for name in ("problem", "type")
    )


def _skipped(raw: pa.Array, first: np.ndarray, text_bytes: np.ndarray) -> np.ndarray:
    """The lines `read_json` skips: empty, or only spaces, tabs, CR, VT, FF."""
    skipped = np.zeros(len(raw), bool)
    maybe = np.flatnonzero((text_bytes == 0) | np.isin(first, SKIPPED_FIRST))
    if len(maybe):
        skipped[maybe] = [not line.strip(SKIPPED) for line in lines_at(raw, maybe)]
    return skipped


def _read_json(
    con: duckdb.DuckDBPyConnection, raw: pa.Array, fields: tuple[str, ...]
) -> pl.DataFrame | None:
    """DuckDB's JSON reader over the bytes of the lines, each field as its JSON text (rows in
    line order); None when there is no line to read. The bytes are written to one scratch
    file: DuckDB reads it with all its threads and keeps the rows in order (measured on a
    32 MiB chunk: one file or two halves read in parallel cost the same)."""
    offsets = _offsets(raw)
    if not len(raw) or offsets[-1] == offsets[0]:
        return None
    buffer = memoryview(raw.buffers()[2])
    paths = _scratch().write([buffer[offsets[0] : offsets[-1]]])
    longest = int(np.diff(offsets).max())
    columns = "{" + ", ".join(f"{_quote(f)}: 'JSON'" for f in fields) + "}"
    params = {"paths": paths, "size": max(longest + 1, 1 << 20)}
    table = con.sql(READ_JSON.format(columns=columns), params=params).to_arrow_table()
    # one chunk per column: the files come back as several batches, and columns of different
    # chunkings (these beside new ones) made Polars 2.1 panic (`i < self.len()`) on a batch
    # of small files
    return pl.from_arrow(table).rechunk()


def _quote(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


class _Scratch:
    """Files DuckDB can open, for the bytes of a chunk: anonymous memory files (`memfd`,
    Linux: nothing is ever left behind, even by a killed process), else private temporary
    files; kept open by the thread that uses them and rewritten for each chunk (their pages
    stay allocated: writing over them costs half of writing new ones)."""

    def __init__(self) -> None:
        self.files: list[tuple[int, str]] = []

    def write(self, parts: list[memoryview]) -> list[str]:
        while len(self.files) < len(parts):
            self.files.append(_open_scratch_file())
        for (fd, _), data in zip(self.files, parts, strict=False):
            written = 0
            while written < len(data):
                written += os.pwrite(fd, data[written:], written)
            os.ftruncate(fd, len(data))
        return [path for _, path in self.files[: len(parts)]]

    def release(self) -> None:
        """Give the files' memory back (between deliveries; they are kept open)."""
        for fd, _ in self.files:
            os.ftruncate(fd, 0)

    def __del__(self) -> None:
        for fd, path in self.files:
            os.close(fd)
            if not path.startswith("/proc/"):
                os.unlink(path)


def _open_scratch_file() -> tuple[int, str]:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("duplirank-chunk", os.MFD_CLOEXEC)
        return fd, f"/proc/self/fd/{fd}"
    fd, path = tempfile.mkstemp(prefix="duplirank-chunk-", suffix=".jsonl")
    return fd, path


_LOCAL = threading.local()


def _scratch() -> _Scratch:
    """This thread's scratch files (the reader thread parses while the main thread checks)."""
    if not hasattr(_LOCAL, "scratch"):
        _LOCAL.scratch = _Scratch()
    return _LOCAL.scratch


def release_scratch() -> None:
    """The memory of this thread's scratch files and mask given back (after a file, a run)."""
    if hasattr(_LOCAL, "scratch"):
        _LOCAL.scratch.release()
    _LOCAL.__dict__.pop("mask", None)


def _mask(size: int) -> np.ndarray:
    """This thread's boolean array of `size` items, used again from chunk to chunk (new
    memory is zeroed by the kernel as it is first written: as costly as the comparison)."""
    mask = getattr(_LOCAL, "mask", None)
    if mask is None or len(mask) < size:
        mask = _LOCAL.mask = np.empty(size, bool)
    return mask[:size]


def _hash(raw: pa.Array) -> pl.Series:
    """A 64-bit hash of each line's bytes (one function for every line of a file). The lines
    come to Polars as a table's column: an Arrow array made a Series imports pyarrow.compute,
    which the ingest needs nowhere else."""
    return pl.from_arrow(pa.table({"h1": raw}))["h1"].hash().cast(pl.UInt64)


def parse_lines(
    con: duckdb.DuckDBPyConnection,
    line_no: np.ndarray,
    raw: pa.Array,
    fields: tuple[str, ...] = FIELDS,
) -> pl.DataFrame:
    """`parse_chunk` line by line with DuckDB's JSON functions: what `read_json` leaves
    unexplained (blank, not UTF-8, not JSON, not an object, no type)."""
    chunk = _batches(line_no, raw)  # noqa: F841
    query = QUERY.format(spec=_spec(sorted({"type", *fields})))
    frame = pl.from_arrow(con.sql(query).to_arrow_table()).unnest("f")
    frame = frame.with_columns(_hash(raw))
    first, text_bytes = _first_bytes(raw)
    opens = first == ord("{")
    problem = (
        pl.when(~pl.col("utf8"))
        .then(pl.lit("not_utf8"))
        .when(pl.col("_blank"))
        .then(pl.lit("empty_line"))
        .when(~pl.col("valid"))
        .then(pl.lit("invalid_json"))
        .when(~pl.col("_opens"))
        .then(pl.lit("not_object"))
    )
    frame = frame.with_columns(
        pl.Series("_opens", opens), pl.Series("text_bytes", text_bytes), _blank=pl.lit(False)
    )
    utf8 = frame["utf8"].to_numpy()  # the others are `not_utf8` whatever they start with
    starts_blank = (np.isin(first, WHITESPACE) | (text_bytes == 0)) & utf8
    if starts_blank.any():  # a line starting with a space: look past the spaces (rare)
        frame = _past_spaces(frame, raw, starts_blank)
    return frame.with_columns(problem.alias("problem")).drop("utf8", "valid", "_opens", "_blank")


def _batches(line_no: np.ndarray, raw: pa.Array, batches: int = 2) -> pa.Table:
    """The lines as a table of a few record batches: DuckDB scans the batches of an Arrow
    table in parallel (a batch is parsed by one thread) and, keeping insertion order (its
    default, `preserve_insertion_order`), returns the rows in line order — the parse is
    aligned with the lines by position. Measured: the parse's wall time −40 %, its CPU +5 %."""
    table = pa.table({"line_no": pa.array(line_no, pa.int64()), "raw": raw})
    size = max(1024, -(-len(table) // batches))
    return pa.Table.from_batches(table.to_batches(max_chunksize=size), table.schema)


def _first_bytes(raw: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The first byte of each line (0 for an empty one) and its length without `\\r\\n`."""
    offsets = _offsets(raw)
    data = np.frombuffer(raw.buffers()[2], dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    first = data[np.minimum(starts, len(data) - 1)] if len(data) else np.zeros(len(raw), np.uint8)
    length = ends - starts - 1  # every line ends with its `\\n`
    cr = (length > 0) & (data[np.maximum(ends - 2, 0)] == 0x0D)
    return np.where(length > 0, first, 0).astype(np.uint8), length - cr


def _offsets(raw: pa.Array) -> np.ndarray:
    """Where each line starts in the data buffer (and where the last one ends)."""
    return np.frombuffer(raw.buffers()[1], dtype=np.int64)[raw.offset : raw.offset + len(raw) + 1]


def _past_spaces(frame: pl.DataFrame, raw: pa.Array, rows: np.ndarray) -> pl.DataFrame:
    """Blank and object flags of the lines that start with a space (or are empty)."""
    index = np.flatnonzero(rows)
    text = pl.Series([line.decode() for line in lines_at(raw, index)], dtype=pl.String)
    stripped = text.str.strip_chars_start(" \t\r\n")
    update = pl.DataFrame(
        {
            "_i": index.astype(np.uint32),
            "_blank2": stripped == "",
            "_opens2": stripped.str.starts_with("{"),
        }
    )
    return (
        frame.with_row_index("_i")
        .join(update, on="_i", how="left")
        .with_columns(
            pl.coalesce("_blank2", "_blank").alias("_blank"),
            pl.coalesce("_opens2", "_opens").alias("_opens"),
        )
        .drop("_i", "_blank2", "_opens2")
    )


def extra_fields(
    con: duckdb.DuckDBPyConnection, line_no: np.ndarray, raw: pa.Array, known: list[str]
) -> pl.DataFrame:
    """(line_no, extra) of some lines: each object without the `known` fields (null if none
    is left) — `json_merge_patch` with a null for each known field removes them."""
    chunk = pa.table({"line_no": pa.array(line_no, pa.int64()), "raw": raw})  # noqa: F841
    patch = json.dumps(dict.fromkeys(known))
    return pl.from_arrow(con.sql(EXTRA_QUERY, params={"patch": patch}).to_arrow_table())


def key_counts(raw: pa.Array, positions: np.ndarray) -> np.ndarray:
    """The keys in each line at `positions` of the chunk, nested objects' included: each `:`
    whose last byte before it (past up to KEY_SPACES spaces or tabs) is a `"`. A string may
    hold such a pair only escaped (`\\":`), which the JSON text of the value holds as well
    (`KEY_PATTERN` counts it there). Lines are looked at in place when they are many, else
    copied out first. Whole-buffer passes: the `":` pairs, then the rare colons after a blank
    walked back; each line's count is the keys between its start and its end."""
    offsets = _offsets(raw)
    data = np.frombuffer(raw.buffers()[2], dtype=np.uint8)
    given = np.asarray(positions, dtype=np.int64)
    order = np.argsort(given, kind="stable")
    positions = given[order]
    starts, ends = offsets[positions], offsets[positions + 1]
    if len(positions) * 8 < len(raw):  # a few lines: their bytes side by side
        data = np.concatenate([data[s:e] for s, e in zip(starts, ends, strict=True)] or [data[:0]])
        ends = np.cumsum(ends - starts)
        starts = ends - (offsets[positions + 1] - offsets[positions])
        low, high = 0, int(ends[-1]) if len(ends) else 0
    else:
        low, high = int(offsets[0]), int(offsets[-1])
    keys = _keys(data, low, high)
    counts = np.empty(len(given), np.int64)
    counts[order] = np.searchsorted(keys, ends) - np.searchsorted(keys, starts)
    return counts


def _keys(data: np.ndarray, low: int, high: int) -> np.ndarray:
    """Sorted positions in data[low:high] of the colons that end a key (`key_counts`)."""
    if high - low < 2:
        return np.empty(0, np.int64)
    found = np.equal(data[low + 1 : high], COLON, out=_mask(high - low - 1))
    colons = np.flatnonzero(found) + (low + 1)  # one pass: few colons
    prev = data[colons - 1]
    direct = colons[prev == QUOTE]
    after_blank = colons[(prev == SPACE) | (prev == TAB)]
    if not len(after_blank):
        return direct
    before = after_blank - 1
    for _ in range(KEY_SPACES):
        blank = (data[before] == SPACE) | (data[before] == TAB)
        before = np.maximum(before - blank, 0)
    return np.sort(np.concatenate([direct, after_blank[data[before] == QUOTE]]))


KEY_PATTERN = r'"[ \t]*:'  # what `key_counts` counts, as a regular expression (JSON texts)
