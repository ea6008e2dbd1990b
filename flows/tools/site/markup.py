"""The row filler: the markup of every row of a big table at once, on whole columns.

A row's markup is a *row format*: literal text and *parts*, Polars expressions of the row's
columns (escaped and formatted by `fmt`) or `Keyed` values (a key computed from the row, an
integer such as a number rounded to its decimals, and the markup of each key value). A few
thousand rows are put together by one `concat_str`. More (`DIRECT`) are coded: each part is
shown once per distinct value of what it reads (dense integer codes, `dense`; a column of ids,
nearly all distinct, is shown row by row), parts whose values make few combinations are shown
as one, and the rows are those fragments gathered by code (`join`). The rows come back to
back in one UTF-8 buffer (`Joined`: the bytes and where each row ends); the rows of one page
are a byte range of it (`groups`), which the page's template shows as a `render.Block`,
written as it is.

`Pool` and `join` also put rows together from fragments by index (the deal-by-deal grid, the
Face-à-Face articles: a row made of other rows); `positions` matches the rows of a big table to
a small one by hash, without a join.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

KEY = "_k"  # the column of distinct key values `Keyed.show` gets (`_k0`, `_k1`… for several)


@dataclass(frozen=True)
class Keyed:
    """A part shown from keys: `keys`, expressions of the row (integers, booleans, dates or a
    few distinct texts: cheap to code), and `show(*columns)`, the markup of each distinct
    combination of key values (the columns of distinct values, in the order of `keys`)."""

    keys: tuple[pl.Expr, ...]
    show: Callable[..., pl.Expr]

    @staticmethod
    def of(show: Callable[..., pl.Expr], *keys: pl.Expr) -> Keyed:
        return Keyed(tuple(keys), show)


Item = str | pl.Expr | Keyed


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


# ---------------------------------------------------------------------------- dense codes
_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def _int_like(dtype: pl.DataType) -> bool:
    return (
        dtype in _INTEGERS
        or dtype == pl.Boolean
        or isinstance(dtype, (pl.Date, pl.Datetime, pl.Duration))
    )


def _column_codes(s: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Dense codes (int64, from 0) of one column and its distinct values in code order; a
    null is a value of its own. Integers of a small range are coded by their offset from the
    smallest (no hashing); texts by their hash (checked: two texts never share a code);
    anything else through a join with its distinct values."""
    n = len(s)
    if _int_like(s.dtype):
        phys = s.cast(pl.Int8) if s.dtype == pl.Boolean else s.to_physical()
        lo, hi = phys.min(), phys.max()
        if lo is None:  # every value null
            return np.zeros(n, np.int64), pl.Series(s.name, [None], dtype=s.dtype)
        lo, hi = int(lo), int(hi)
        if hi - lo + 1 <= max(1024, 2 * n):
            if phys.null_count():
                codes = (phys.cast(pl.Int64) - (lo - 1)).fill_null(0).to_numpy()
            else:
                codes = phys.to_numpy().astype(np.int64) - (lo - 1)
            values = pl.concat(
                [
                    pl.Series([None], dtype=pl.Int64),
                    pl.int_range(lo, hi + 1, eager=True, dtype=pl.Int64),
                ]
            )
            values = (
                values.cast(pl.Int8).cast(pl.Boolean)
                if s.dtype == pl.Boolean
                else values.cast(s.dtype)
            )
            return codes, values.alias(s.name)
    if s.dtype == pl.String:
        coded = _hash_codes(s)
        if coded is not None:
            return coded
    frame = s.to_frame("v")
    distinct = frame.unique().with_row_index("_c")
    codes = frame.join(distinct, on="v", how="left", nulls_equal=True, maintain_order="left")
    return codes["_c"].to_numpy().astype(np.int64), distinct["v"].alias(s.name)


def _hash_codes(s: pl.Series) -> tuple[np.ndarray, pl.Series] | None:
    """Codes of a column of texts: its distinct values (a hash set) and each row's position
    among them (`positions`: hashes, no sort)."""
    values = s.unique()
    if values.null_count():
        values = pl.concat([values.drop_nulls(), pl.Series([None], dtype=s.dtype)])
        codes = positions(s, values.head(len(values) - 1))
        codes[codes < 0] = len(values) - 1  # the nulls
    else:
        codes = positions(s, values)
    if (codes < 0).any():  # (not expected: every value is one of the distinct values)
        return None
    return codes, values


def dense(keys: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """Dense codes of the rows of `keys` (one or more columns) and the distinct rows, row `c`
    of the second having code `c`."""
    n = keys.height
    per_column = [_column_codes(keys.to_series(i)) for i in range(keys.width)]
    if len(per_column) == 1:
        codes, values = per_column[0]
        return codes, values.to_frame()
    sizes = [len(values) for _, values in per_column]
    if float(np.prod(sizes, dtype=np.float64)) <= max(1024, 2 * n):  # mixed radix: all combos
        combined = np.zeros(n, np.int64)
        stride = 1
        strides = []
        for size in reversed(sizes):
            strides.append(stride)
            stride *= size
        strides.reverse()
        for (codes, _), step in zip(per_column, strides, strict=True):
            combined += codes * step
        every = np.arange(stride, dtype=np.int64)
        columns = {
            name: values.gather((every // step) % size)
            for name, (_, values), step, size in zip(
                keys.columns, per_column, strides, sizes, strict=True
            )
        }
        return combined, pl.DataFrame(columns)
    # many combinations: the distinct rows of the column codes, through a join
    coded = pl.DataFrame({f"c{i}": codes for i, (codes, _) in enumerate(per_column)})
    distinct = coded.unique().with_row_index("_c")
    codes = coded.join(distinct, on=coded.columns, how="left", maintain_order="left")["_c"]
    columns = {
        name: values.gather(distinct[f"c{i}"])
        for i, (name, (_, values)) in enumerate(zip(keys.columns, per_column, strict=True))
    }
    return codes.to_numpy().astype(np.int64), pl.DataFrame(columns)


@dataclass
class _Part:
    prefix: str
    item: pl.Expr | Keyed
    suffix: str = ""


def _parts(template: Sequence[Item]) -> tuple[list[_Part], str]:
    """The parts of a template with the literal text before each fused in (and after the
    last); expressions of the same columns one after the other (literal text between them
    included) make one part. (parts, text of a template with no part)."""
    parts: list[_Part] = []
    pending = ""
    for item in template:
        if isinstance(item, str):
            pending += item
            continue
        if isinstance(item, pl.Expr):
            roots = frozenset(item.meta.root_names())
            if not roots:  # a constant: literal text
                value = pl.select(item.cast(pl.String)).item()
                pending += "" if value is None else value
                continue
            last = parts[-1] if parts else None
            if (
                last is not None
                and isinstance(last.item, pl.Expr)
                and frozenset(last.item.meta.root_names()) == roots
            ):
                last.item = pl.concat_str([last.item, pl.lit(pending), item], ignore_nulls=True)
                pending = ""
                continue
        parts.append(_Part(pending, item))
        pending = ""
    if parts:
        parts[-1].suffix = pending
        return parts, ""
    return parts, pending


DIRECT = 16_384  # rows below which a template is shown row by row (no coding to pay for)


def rows(frame: pl.DataFrame, template: Sequence[Item], *, distinct: bool | None = None) -> Joined:
    """The markup of every row of `frame` (in its order) as `template` gives it.

    Each part's distinct values (those the rows use) are shown once; parts one after the other
    whose values make few combinations are then shown as one (a row of the grid or of a table
    of matches is a few fragments, not one per cell). Few rows are cheaper shown row by row
    (`distinct=False`, the default below `DIRECT` rows): the same markup."""
    n = frame.height
    if distinct is None:
        distinct = n >= DIRECT
    if not distinct:
        shown = [
            pl.lit(i) if isinstance(i, str) else (i.show(*i.keys) if isinstance(i, Keyed) else i)
            for i in template
        ]
        return texts(frame.select(pl.concat_str(shown, ignore_nulls=True)).to_series())
    parts, constant = _parts(template)
    pool = Pool()
    if not parts:
        base = pool.add(pl.Series([constant]))
        return join(pool, np.full(n, base, np.int64))
    if n == 0:
        return Joined(b"", np.zeros(0, np.int64))
    # every key of every part in one select
    exprs: list[pl.Expr] = []
    selected: set[str] = set()
    names: list[list[str]] = []
    for p, part in enumerate(parts):
        if isinstance(part.item, Keyed):
            cols = [f"_p{p}_{i}" for i in range(len(part.item.keys))]
            exprs += [k.alias(c) for k, c in zip(part.item.keys, cols, strict=True)]
        else:  # an expression of the row's columns, shown on their distinct combinations
            cols = sorted(set(part.item.meta.root_names()))
            exprs += [pl.col(c) for c in cols if c not in selected]
        selected |= set(cols)
        names.append(cols)
    keys = frame.select(exprs)
    limit = max(4096, 2 * n)
    groups: list[tuple[np.ndarray, pl.Series]] = []
    coded: dict[tuple[str, ...], tuple[np.ndarray, pl.DataFrame]] = {}
    for part, cols in zip(parts, names, strict=True):
        if tuple(cols) not in coded:  # (expressions of the same columns: coded once)
            some = keys.select(cols)
            if _mostly_distinct(some):  # (an id: each row shown as it is, not coded)
                coded[tuple(cols)] = np.arange(n, dtype=np.int64), some
            else:
                coded[tuple(cols)] = _used(*dense(some))
        codes, values = coded[tuple(cols)]
        if isinstance(part.item, Keyed):
            shown = part.item.show(*[pl.col(c) for c in cols])
        else:
            shown = part.item
        fragments = values.select(
            pl.concat_str([pl.lit(part.prefix), shown, pl.lit(part.suffix)], ignore_nulls=True)
        ).to_series()
        if groups and len(groups[-1][1]) * len(fragments) <= limit:
            groups[-1] = _combined(groups[-1], (codes, fragments))
        else:
            groups.append((codes, fragments))
    columns = [codes + pool.add(fragments) for codes, fragments in groups]
    index = np.column_stack(columns) if len(columns) > 1 else columns[0]
    return join(pool, index, per_row=len(columns))


def _mostly_distinct(keys: pl.DataFrame, head: int = 4096) -> bool:
    """Whether a column of `keys` has a value of its own on most rows (by an estimate of its
    distinct values, when its first rows have): coding them costs more than showing every
    row."""
    if max(keys.head(head).select(pl.all().n_unique()).row(0)) * 2 <= min(head, keys.height):
        return False
    return max(keys.select(pl.all().approx_n_unique()).row(0)) * 2 > keys.height


def _used(codes: np.ndarray, values: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """`codes` and `values` of only the values some row has (a range of integers codes every
    value between the smallest and the largest)."""
    counts = np.bincount(codes, minlength=values.height)
    if (counts > 0).all():
        return codes, values
    used = np.flatnonzero(counts)
    renumber = np.cumsum(counts > 0) - 1
    return renumber[codes], values[used]


def _combined(
    first: tuple[np.ndarray, pl.Series], second: tuple[np.ndarray, pl.Series]
) -> tuple[np.ndarray, pl.Series]:
    """Two parts one after the other as one: a code per combination some row has, its
    fragment the two fragments back to back."""
    (codes_a, frags_a), (codes_b, frags_b) = first, second
    width = len(frags_b)
    combined = codes_a * width + codes_b
    counts = np.bincount(combined, minlength=len(frags_a) * width)
    used = np.flatnonzero(counts)
    renumber = np.cumsum(counts > 0) - 1
    fragments = pl.DataFrame(
        {"a": frags_a.gather(used // width), "b": frags_b.gather(used % width)}
    )
    return renumber[combined], fragments.select(pl.concat_str("a", "b")).to_series()


def texts(values: pl.Series) -> Joined:
    """A column of texts back to back (one row each; a null is empty): its Arrow buffer as
    it is."""
    found = _buffer(values.fill_null(""))
    if found is not None:
        data, offsets = found
        return Joined(data, offsets[1:] - offsets[0])
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
    index = np.ascontiguousarray(index, dtype=np.int64).ravel()
    gathered = pool.series().gather(index)
    found = _buffer(gathered)
    if found is not None:  # the fragments as the gathered column holds them, and their ends
        data, offsets = found
        fragment_ends = offsets[1:]
    else:  # (no fragment, or not in one buffer)
        lengths = gathered.str.len_bytes().to_numpy().astype(np.int64)
        fragment_ends = np.cumsum(lengths, dtype=np.int64)
        text = gathered.str.join("").cast(pl.Binary).to_arrow()
        data = text[0].as_py() if len(index) else b""
    if isinstance(per_row, np.ndarray):  # rows of several sizes (an empty row: no fragment)
        ends = np.concatenate([[0], fragment_ends])[np.cumsum(per_row)]
    else:
        ends = fragment_ends[per_row - 1 :: per_row]
    return Joined(data, np.asarray(ends, np.int64))


def _buffer(values: pl.Series) -> tuple[pa.Buffer, np.ndarray] | None:
    """The texts of `values` (no null) back to back as they are in its Arrow array, and
    their offsets into it (the first 0); None when they are not in one buffer."""
    text = values.rechunk().to_arrow()
    if not isinstance(text, pa.LargeStringArray) or not len(text) or text.null_count:
        return None
    offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset : text.offset + len(text) + 1]
    data = text.buffers()[2]
    if data is None:
        return None
    start = int(offsets[0])
    return data.slice(start, int(offsets[-1]) - start), offsets - start


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
