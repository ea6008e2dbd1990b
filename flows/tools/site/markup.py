"""The row filler: the markup of every row of a big table at once, on whole columns.

A row's markup is a *row format*: literal text and Polars expressions of the row's columns
(escaped and formatted by `fmt`), put together by one `concat_str` over all the rows of a kind
of page. The rows come back back to back in one UTF-8 buffer (`Joined`: the bytes and where
each row ends); the rows of one page are a byte range of it (`groups`), which the page's
template shows as a `render.Block`, written as it is.

`Pool` and `join` put rows together from fragments by index (the deal-by-deal grid, the
Face-à-Face articles: a row made of other rows); `positions` matches the rows of a big table to
a small one by hash, without a join.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

Item = str | pl.Expr


@dataclass
class Joined:
    """Rows put together: `data`, their UTF-8 bytes back to back (a buffer), and `ends[i]`,
    the byte offset where row `i` ends (row `i` starts where row `i - 1` ends)."""

    data: object  # bytes-like (a pyarrow Buffer or bytes)
    ends: np.ndarray  # int64, one per row

    @property
    def view(self) -> memoryview:
        return memoryview(self.data)

    def starts(self) -> np.ndarray:
        out = np.empty_like(self.ends)
        if len(out):
            out[0] = 0
            out[1:] = self.ends[:-1]
        return out

    def text(self, i: int) -> str:
        start = int(self.ends[i - 1]) if i else 0
        return bytes(self.view[start : int(self.ends[i])]).decode()


EMPTY = Joined(b"", np.zeros(0, np.int64))


def rows(frame: pl.DataFrame, template: Sequence[Item]) -> Joined:
    """The markup of every row of `frame` (in its order): the `template`'s texts and
    expressions back to back (a null expression shows nothing). An expression of columns
    whose values repeat (a tournament, a rank, a yes/no) is shown once per distinct value
    (`shown_once`)."""
    frame, items = shown_once(frame, template)
    shown = [pl.lit(i) if isinstance(i, str) else i for i in items]
    return texts(frame.select(pl.concat_str(shown, ignore_nulls=True)).to_series())


REPEATS = 4  # an expression is shown once per distinct value when rows repeat them this much
NOT_PER_ROW = re.compile(
    r"over|rank|cum_|shift|diff|range|index|len|count|sum|mean|first|last|max|min|unique|sort"
)  # names in an expression that may look at other rows: shown row by row


def shown_once(frame: pl.DataFrame, template: Sequence[Item]) -> tuple[pl.DataFrame, list]:
    """`frame` with, for each group of the template's expressions that read the same columns
    (when those columns' distinct values are few), the expressions' text computed once per
    distinct value and joined back to the rows; the template with those expressions replaced
    by the columns made. Only expressions of one row's values are taken (`NOT_PER_ROW`), of
    columns a join matches (no floats: NaN matches nothing)."""
    items = list(template)
    by_columns: dict[tuple[str, ...], list[int]] = {}
    for i, item in enumerate(items):
        if isinstance(item, pl.Expr) and not NOT_PER_ROW.search(str(item)):
            names = tuple(sorted(set(item.meta.root_names())))
            if names and not any(frame.schema[n].is_float() for n in names):  # NaN ≠ NaN
                by_columns.setdefault(names, []).append(i)
    if frame.height < 64 or not by_columns:
        return frame, items
    made: dict[str, pl.Series] = {}
    for names, where in by_columns.items():
        keys = frame.select(names)
        distinct = keys.unique()
        if distinct.height * REPEATS > frame.height:
            continue
        shown = distinct.with_columns(**{f"_shown{i}": items[i] for i in where})
        joined = keys.join(
            shown, on=list(names), how="left", nulls_equal=True, maintain_order="left"
        )
        for i in where:
            made[f"_shown{i}"] = joined[f"_shown{i}"]
            items[i] = pl.col(f"_shown{i}")
    return frame.with_columns(**made), items


def texts(values: pl.Series) -> Joined:
    """A column of texts back to back (one row each; a null is empty): its Arrow buffer as
    it is."""
    text = values.fill_null("").rechunk().to_arrow()
    if isinstance(text, pa.LargeStringArray) and len(text):
        offsets = np.frombuffer(text.buffers()[1], np.int64)[
            text.offset : text.offset + len(text) + 1
        ]
        data = text.buffers()[2]
        if data is not None:
            start = int(offsets[0])
            return Joined(data.slice(start, int(offsets[-1]) - start), offsets[1:] - start)
    pool = Pool()
    pool.add(values)
    return join(pool, np.arange(len(values), dtype=np.int64))


class Pool:
    """Fragments back to back; a fragment table's base plus a position is an index into it."""

    def __init__(self) -> None:
        self.tables: list[pl.Series] = []
        self.size = 0

    def add(self, fragments: pl.Series) -> int:
        base = self.size
        self.tables.append(fragments.cast(pl.String).fill_null("").alias("f"))
        self.size += len(fragments)
        return base

    def series(self) -> pl.Series:
        if not self.tables:
            return pl.Series("f", [], dtype=pl.String)
        return pl.concat(self.tables, rechunk=True)


def join(pool: Pool, index: np.ndarray, per_row: int | np.ndarray = 1) -> Joined:
    """The fragments `pool[index]` back to back; a row is `per_row` consecutive fragments
    (a number, or the count of each row)."""
    fragments = pool.series()
    index = np.ascontiguousarray(index, dtype=np.int64).ravel()
    lengths = fragments.str.len_bytes().to_numpy().astype(np.int64)
    sizes = lengths[index]
    if isinstance(per_row, np.ndarray):  # rows of several sizes (an empty row: no fragment)
        ends = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])[np.cumsum(per_row)]
    else:
        if per_row > 1:
            sizes = sizes.reshape(-1, per_row).sum(axis=1)
        ends = np.cumsum(sizes, dtype=np.int64)
    if not len(index):
        return Joined(b"", np.asarray(ends, np.int64))
    text = fragments.gather(index).str.join("").cast(pl.Binary).to_arrow()
    data = text.buffers()[2]
    if data is None or data.size < (int(ends[-1]) if len(ends) else 0):
        data = text[0].as_py()  # (not expected: a join is one value in one buffer)
    return Joined(data, np.asarray(ends, np.int64))


def series(joined: Joined) -> pl.Series:
    """The rows of `joined` as a column of texts (to put them together again: `take`)."""
    offsets = np.concatenate([[0], joined.ends]).astype(np.int64)
    data = joined.data if isinstance(joined.data, pa.Buffer) else pa.py_buffer(joined.data)
    array = pa.LargeStringArray.from_buffers(len(joined.ends), pa.py_buffer(offsets), data)
    return pl.from_arrow(array).alias("f")


def take(joined: Joined, index: np.ndarray, per_row: int | np.ndarray = 1) -> Joined:
    """Rows `index` of `joined`, back to back (`per_row` of them make a new row): the same
    rows in another order or grouping (a match's row in its month's list and in the pages
    of its two players)."""
    pool = Pool()
    pool.add(series(joined))
    return join(pool, index, per_row)


def groups(frame: pl.DataFrame, keys: list[str], joined: Joined) -> pl.DataFrame:
    """keys…, `_s`, `_e`: the byte range of each group of rows of `frame` in `joined` (the
    markup of `frame`'s rows). The rows of a group must be consecutive (sort by the keys)."""
    if frame.is_empty():
        schema = {k: frame.schema[k] for k in keys} | {"_s": pl.Int64, "_e": pl.Int64}
        return pl.DataFrame(schema=schema)
    ranges = (
        frame.select(keys)
        .with_row_index("_i")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("_i").first().alias("_a"), pl.col("_i").last().alias("_b"), pl.len())
    )
    if (ranges["_b"] - ranges["_a"] + 1 != ranges["len"]).any():
        raise ValueError(f"rows of a group of {keys} are not consecutive: sort them first")
    starts = joined.starts()
    return ranges.select(
        *keys,
        _s=pl.Series(starts[ranges["_a"].to_numpy()], dtype=pl.Int64),
        _e=pl.Series(joined.ends[ranges["_b"].to_numpy()], dtype=pl.Int64),
    )


def positions(values: pl.Series, table: pl.Series) -> np.ndarray:
    """For each of `values`, its position in `table` (distinct values), or -1 when it is not
    there (or null): the rows of a big table matched to a small one without a join. Values in
    long runs (a table sorted by that column) are looked up once per run; others by their
    64-bit hash, looked up in a direct table of the low bits of `table`'s hashes (a sorted
    search for the few slots two of them share), a second hash checked equal too."""
    n = len(values)
    if len(table) == 0 or n == 0:
        return np.full(n, -1, np.int64)
    if n > 4096:
        head = values.head(4096)
        if (head != head.shift(1)).sum() * 8 < len(head):  # runs, by the look of its start
            runs = values.rle()
            if len(runs) * 8 < n:
                found = positions(runs.struct.field("value"), table)
                return np.repeat(found, runs.struct.field("len").to_numpy())
    both = pl.DataFrame({"v": table}).select(a=pl.col("v").hash(), b=pl.col("v").hash(seed=1))
    table_a, table_b = both["a"].to_numpy(), both["b"].to_numpy()
    if len(np.unique(table_a)) < len(table_a) or table.null_count():
        return _positions_by_join(values, table)
    bits = int(min(22, max(12, np.ceil(np.log2(len(table))) + 8)))
    mask = (1 << bits) - 1
    slot_of = (table_a & np.uint64(mask)).astype(np.int64)
    slots = np.full(1 << bits, -1, np.int32)
    slots[slot_of] = np.arange(len(table), dtype=np.int32)
    slots[np.bincount(slot_of, minlength=1 << bits) > 1] = -2  # shared by two of `table`
    hashed = pl.DataFrame({"v": values}).select(
        a=pl.col("v").hash(),
        b=pl.col("v").hash(seed=1),
        slot=(pl.col("v").hash() & mask).cast(pl.Int64),
    )
    a, b = hashed["a"].to_numpy(), hashed["b"].to_numpy()
    where = slots[hashed["slot"].to_numpy()].astype(np.int64)
    crowded = where == -2
    if crowded.any():  # the values that fell in a shared slot: a sorted search
        order = np.argsort(table_a)
        sorted_a = table_a[order]
        some = a[crowded]
        at = np.minimum(np.searchsorted(sorted_a, some), len(table) - 1)
        where[crowded] = np.where(sorted_a[at] == some, order[at], -1)
    safe = np.maximum(where, 0)
    where[(table_a[safe] != a) | (table_b[safe] != b)] = -1  # not that value: absent
    if values.null_count():
        where[values.is_null().to_numpy()] = -1
    return where


def _positions_by_join(values: pl.Series, table: pl.Series) -> np.ndarray:
    lookup = table.to_frame("v").with_row_index("_p")
    found = values.to_frame("v").join(lookup, on="v", how="left", maintain_order="left")
    return found["_p"].fill_null(-1).cast(pl.Int64).to_numpy()
