"""Copies of a file's earlier lines: a rejected line with the text of an earlier rejected
line (`copies_of_rejected`, by the hash of its text: `with_hash`), and an accepted line with
the key of an earlier one (`same_key`: the same text, or a conflicting duplicate)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest.checked import TEXTS
from flows.ingest.file_check import FileCheck
from flows.ingest.hash_index import Seen
from flows.ingest.line_split import Chunk, lines_at, text_lengths
from transforms.record_types import RecordType

NOT_COPIES = ("not_utf8", "empty_line", "duplicate_line", "duplicate_key")


def copies_of_rejected(rows: pl.DataFrame, file: FileCheck) -> pl.DataFrame:
    """`duplicate of line N` for rejected lines whose text an earlier rejected line had
    (an accepted line's copy is found by its key, `same_key`); `with_hash` hashed them."""
    eligible = ~rows["rule"].is_in(NOT_COPIES).to_numpy()
    if not eligible.any():
        return rows
    line_no = rows["line_no"].to_numpy()
    first = line_no.copy()
    first[eligible], _ = file.lines.first_lines(
        file.mix(rows["_h1"].to_numpy()[eligible], line_no[eligible]),
        rows["_h2"].to_numpy()[eligible],
        line_no[eligible],
    )
    copy = pl.Series(first < line_no)
    return rows.with_columns(
        pl.when(copy)
        .then(pl.format("duplicate of line {}", pl.Series(file.local(first))))
        .otherwise("reason")
        .alias("reason"),
        pl.when(copy).then(pl.lit("duplicate_line")).otherwise("rule").alias("rule"),
    )


FEW = 1024  # rejected lines of a chunk copied out to be hashed (more: taken in place)


def with_hash(rejected: pl.DataFrame, chunk: Chunk) -> pl.DataFrame:
    """Rejected rows with a 128-bit hash of their text without its line end (`_h1`, `_h2`:
    is it the same text as an earlier rejected line of the file?), computed on the column."""
    if not rejected.height:
        return rejected.with_columns(
            pl.lit(None, pl.UInt64).alias("_h1"), pl.lit(None, pl.UInt64).alias("_h2")
        )
    positions = rejected["_pos"].to_numpy().astype(np.int64)
    if len(positions) <= FEW:  # their bytes copied out
        lines = pa.array(lines_at(chunk.raw, positions), pa.large_binary())
        taken = pl.from_arrow(pa.table({"t": lines}))["t"]
    else:  # the chunk's lines seen by Polars in place, some of them taken
        taken = pl.from_arrow(pa.table({"t": chunk.raw}))["t"].gather(positions)
    text = taken.bin.head(pl.Series(text_lengths(chunk.raw, positions)))
    return rejected.with_columns(
        text.hash(seed=0).alias("_h1").cast(pl.UInt64),
        text.hash(seed=1).alias("_h2").cast(pl.UInt64),
    )


def same_key(
    rt: RecordType, rows: pl.DataFrame, file: FileCheck
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows whose key an earlier line of the file already had: `duplicate of line N` when the
    line is the same text (its hash, `h1`), else `conflicting duplicate of line N`."""
    key = pl.struct(list(rt.key))
    hashes = rows.select(key.hash(seed=0).alias("k1"), key.hash(seed=1).alias("k2"))
    seen = file.keys.setdefault(rt.name, Seen())
    line_no = rows["line_no"].to_numpy()
    first, first_text = seen.first_lines(
        file.mix(hashes["k1"].to_numpy(), line_no),
        hashes["k2"].to_numpy(),
        line_no,
        rows["h1"].to_numpy(),
    )
    rows = rows.with_columns(
        pl.Series("_first", first, dtype=pl.Int64),
        pl.Series("_first_here", file.local(first), dtype=pl.Int64),
        (pl.Series(first_text) == pl.col("h1")).alias("_same_text"),
    )
    copy = pl.col("_first") < pl.col("line_no")
    if not (first < line_no).any():  # no copy: no filter (it copies all)
        return rows.drop("_first", "_first_here", "_same_text"), pl.DataFrame(schema=TEXTS)
    same = ", ".join(rt.key)
    copies = rows.filter(copy).select(
        "line_no",
        "_pos",
        pl.col("h1").alias("_h1"),
        pl.lit(0, pl.UInt64).alias("_h2"),
        pl.when("_same_text")
        .then(pl.format("duplicate of line {}", "_first_here"))
        .otherwise(pl.format(f"conflicting duplicate of line {{}} (same {same})", "_first_here"))
        .alias("reason"),
        pl.when("_same_text")
        .then(pl.lit("duplicate_line"))
        .otherwise(pl.lit("duplicate_key"))
        .alias("rule"),
    )
    return rows.filter(~copy).drop("_first", "_first_here", "_same_text"), copies
