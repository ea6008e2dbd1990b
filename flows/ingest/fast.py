"""The fast path: lines that are compact JSON of their record type, typed by Polars' JSON reader.

Most lines a game server writes are the compact JSON of one record (no spaces, no escapes, no
unknown or repeated key). Those are read by `pl.read_ndjson` with a schema where every value
must have its JSON type (a string field is read as `Binary`, which takes only JSON strings; an
integer as `Int64`, which takes only JSON integers; `Boolean` only `true`/`false`), and kept
on this path only when the line's length is exactly that of the compact JSON of the values
read (`compact_length`). That single test proves the line holds nothing else:

    length(line) - compact_length = Σ over the values read (written length - shortest length)
                                   + Σ over the other entries (key, colon, value, comma)
                                   + spaces,

and each term is ≥ 0 (a value read has its JSON type, and no JSON text of a value is shorter
than the compact one), each other entry ≥ 5 bytes. So an equal length means: no unknown,
repeated, null or mistyped key, no escape, no space — the values are what DuckDB's parse would
give, `extra` is null. The other lines (and any line of this path failing a check, so that its
reason is worded in one place) take the general path (`parse.parse_chunk`, `validate`).

Only record types whose fields are strings, integers, booleans, times and dates take this path
(an object field or a float has many JSON spellings of one value).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest import decode
from flows.ingest.options import Window
from transforms.record_types import RecordType

READ_AS = {
    "str": pl.Binary,
    "ts": pl.Binary,
    "date": pl.Binary,
    "int": pl.Int64,
    "bool": pl.Boolean,
}
TS_FORMAT = decode.TS_FORMAT.strip('"')  # the same layouts as the general path's fast typing
BLOCKS = 16  # a chunk the JSON reader refuses is read again in this many blocks


def fast_types(types: dict[str, RecordType]) -> dict[str, RecordType]:
    """The record types this path can read (every field a string, integer, boolean or time)."""
    return {n: rt for n, rt in types.items() if set(rt.kinds.values()) <= READ_AS.keys()}


def read_compact(
    raw: pa.Array,
    positions: pa.Array,
    text_bytes: pa.Array,
    types: dict[str, RecordType],
    fields: tuple[str, ...],
) -> dict[str, pl.DataFrame]:
    """The lines at `positions` (JSON objects by DuckDB's parse) that are the compact JSON of
    one of `types`: per record type, its fields as read (strings as Binary) and `_pos`.

    `text_bytes`: each line's length without its line end. Types with a field outside
    `fields` (the fields the file's chunks look for) are not read here.
    """
    readable = {n: rt for n, rt in fast_types(types).items() if set(rt.fields) <= set(fields)}
    if not readable or not len(positions):
        return {}
    schema = {"type": pl.Binary()}
    for rt in readable.values():
        schema |= {f: READ_AS[rt.kind(f)]() for f in rt.fields}
    frame = _read(pc.take(raw, positions), schema)
    if frame is None:
        return {}
    frame = frame.with_columns(
        pl.Series("_pos", positions, dtype=pl.UInt32),
        pl.Series("_len", pc.take(text_bytes, positions), dtype=pl.Int64),
    )
    out = {}
    for name, rt in readable.items():
        rows = frame.filter(
            (pl.col("type") == name.encode()) & (pl.col("_len") == compact_length(rt))
        )
        if rows.height:
            out[name] = rows.select("_pos", *rt.fields)
    return out


def _read(lines: pa.Array, schema: dict[str, pl.DataType]) -> pl.DataFrame | None:
    """The lines read by Polars' JSON reader (one row per line), or None when it refuses them
    (a `NaN`, a trailing comma: JSON that DuckDB accepts and Polars does not). A refused chunk is
    read again in blocks; the rows of a refused block are nulls (they take the general path)."""
    try:
        return _read_lines(lines, schema)
    except pl.exceptions.PolarsError:
        pass
    step = max(1, -(-len(lines) // BLOCKS))
    parts = []
    for start in range(0, len(lines), step):
        block = lines.slice(start, step)
        try:
            parts.append(_read_lines(block, schema))
        except pl.exceptions.PolarsError:
            parts.append(pl.DataFrame(schema=schema).clear(len(block)))
    return pl.concat(parts)


def _read_lines(lines: pa.Array, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    first, last = offsets[lines.offset], offsets[lines.offset + len(lines)]
    data = memoryview(lines.buffers()[2])[first:last]
    frame = pl.read_ndjson(bytes(data), schema=schema, ignore_errors=True)
    if frame.height != len(lines):  # never seen: then nothing of this block is trusted
        raise pl.exceptions.ComputeError("rows do not match lines")
    return frame


def compact_length(rt: RecordType) -> pl.Expr:
    """The length of the compact JSON of the values read, in declared key order or any other
    (`{`, then per value `"key":` + its shortest JSON text + a comma or the closing brace)."""
    sizes = [len(rt.name) + 2 + len("type") + 4]
    for name in rt.fields:
        v = pl.col(name)
        kind = rt.kind(name)
        if kind in ("str", "ts", "date"):
            text = v.bin.size() + 2
        elif kind == "int":
            text = v.cast(pl.String).str.len_bytes()
        else:  # bool
            text = pl.when(v).then(4).otherwise(5)
        sizes.append((text + (len(name) + 4)).fill_null(0))
    return 1 + pl.sum_horizontal(sizes)


def typed(rt: RecordType, rows: pl.DataFrame, window: Window | None) -> pl.DataFrame:
    """The rows' values in their bronze types, and `_ok`: every check of the declaration and
    the window passes (a failing row is sent to the general path, which words its reason)."""
    given, values, ok = _exprs(rt, window)
    return rows.with_columns(given).with_columns(values).with_columns(ok.alias("_ok"))


def _typed_value(rt: RecordType, name: str) -> pl.Expr:
    v = pl.col(name)
    kind = rt.kind(name)
    if kind == "str":
        return v.cast(pl.String)
    if kind == "ts":
        return v.cast(pl.String).str.to_datetime(
            TS_FORMAT, strict=False, time_unit="us", time_zone="UTC"
        )
    if kind == "date":
        return v.cast(pl.String).str.to_date("%Y-%m-%d", strict=False)
    return v


@cache
def _exprs(rt: RecordType, window: Window | None) -> tuple[list, list, pl.Expr]:
    """(times given, typed values, `_ok`): built once per record type and window."""
    times = [f for f in rt.fields if rt.kind(f) in ("ts", "date")]
    given = [pl.col(f).is_not_null().alias(f"_given_{f}") for f in times]
    values = [_typed_value(rt, f).alias(f) for f in rt.fields]
    # a time given but not read with the common layout: the general path tries the others
    decoded = [pl.col(f).is_not_null() | ~pl.col(f"_given_{f}") for f in times]
    rules = [
        rule.expr.fill_null(True)  # as dataframely's `filter` reads a rule
        for name, rule in rt.declaration._validation_rules(with_cast=False).items()
        if not name.startswith("line_no|")
    ]
    inside = [~flag for flag in decode.window_flags(rt, window)]
    return given, values, pl.all_horizontal([*decoded, *rules, *inside])
