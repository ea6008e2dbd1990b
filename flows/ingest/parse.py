"""Parse a chunk of JSON Lines once, with DuckDB, into the JSON text of every known field.

For each line: whether it is UTF-8 (`try(decode(raw))`) and valid JSON (`json_valid`), the JSON
text of each field its record type declares (`json_transform` to `JSON` fields: one parse per
line; the typing is done on these short texts by `validate`), and a 64-bit hash of its bytes
(is a line with the key of an earlier one the same text?). Whether a line is blank or an
object comes from its first bytes (numpy), and its unknown fields (`extra`) from a second
DuckDB pass over the few lines that may have some (`extra_fields`).

DuckDB is lenient where strict JSON is not: `NaN`/`Infinity` are accepted (the field decoding
names them), trailing commas are accepted, and a key given twice keeps its first value.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest.read import lines_at
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
    hash(raw) as h1,
    txt is not null as utf8,
    valid,
    case when valid then json_transform(txt, '{spec}') end as f
from parsed
"""
FIELDS_QUERY = """
select
    line_no,
    json_transform(decode(raw), '{spec}') as f
from chunk
"""
EXTRA_QUERY = """
select
    line_no,
    nullif(json_merge_patch(decode(raw), $patch), '{}') as extra
from chunk
"""
WHITESPACE = np.array([0x20, 0x09, 0x0D, 0x0A], dtype=np.uint8)


def _spec(fields) -> str:
    """The `json_transform` structure: each field as its JSON text (a constant, quoted)."""
    return json.dumps(dict.fromkeys(fields, "JSON")).replace("'", "''")


def parse_chunk(
    con: duckdb.DuckDBPyConnection,
    line_no: np.ndarray,
    raw: pa.Array,
    fields: tuple[str, ...] = FIELDS,
) -> pl.DataFrame:
    """One row per line: line_no, h1 (a hash of the line), problem (null for a JSON
    object; else `not_utf8`, `empty_line`, `invalid_json` or `not_object`), the JSON text of
    each of `fields` (null when absent or null; `type` always), text_bytes (the line's length
    without its line end)."""
    chunk = _batches(line_no, raw)  # noqa: F841
    query = QUERY.format(spec=_spec(sorted({"type", *fields})))
    frame = pl.from_arrow(con.sql(query).to_arrow_table()).unnest("f")
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
    offsets = np.frombuffer(raw.buffers()[1], dtype=np.int64)[
        raw.offset : raw.offset + len(raw) + 1
    ]
    data = np.frombuffer(raw.buffers()[2], dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    first = data[np.minimum(starts, len(data) - 1)] if len(data) else np.zeros(len(raw), np.uint8)
    length = ends - starts - 1  # every line ends with its `\\n`
    cr = (length > 0) & (data[np.maximum(ends - 2, 0)] == 0x0D)
    return np.where(length > 0, first, 0).astype(np.uint8), length - cr


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


def more_fields(
    con: duckdb.DuckDBPyConnection, line_no: np.ndarray, raw: pa.Array, fields: list[str]
) -> pl.DataFrame:
    """(line_no, JSON text of `fields`) of some valid JSON lines: the fields a first parse
    did not ask for (a record type appearing late in a file)."""
    chunk = pa.table({"line_no": pa.array(line_no, pa.int64()), "raw": raw})  # noqa: F841
    query = FIELDS_QUERY.format(spec=_spec(fields))
    return pl.from_arrow(con.sql(query).to_arrow_table()).unnest("f")


def extra_fields(
    con: duckdb.DuckDBPyConnection, line_no: np.ndarray, raw: pa.Array, known: list[str]
) -> pl.DataFrame:
    """(line_no, extra) of some lines: each object without the `known` fields (null if none
    is left) — `json_merge_patch` with a null for each known field removes them."""
    chunk = pa.table({"line_no": pa.array(line_no, pa.int64()), "raw": raw})  # noqa: F841
    patch = json.dumps(dict.fromkeys(known))
    return pl.from_arrow(con.sql(EXTRA_QUERY, params={"patch": patch}).to_arrow_table())
