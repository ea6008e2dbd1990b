"""Printing a query's rows: table (a page, cut to width), CSV, JSON and JSON Lines, batch by
batch as they stream from DuckDB."""

from __future__ import annotations

import io
import os
import unicodedata
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

import duckdb

from flows.settings import SqlLimits
from flows.tools.query.statement import bind

if TYPE_CHECKING:  # `duplirank sql` streams DuckDB's Arrow batches: Polars is not loaded
    import polars as pl
    import pyarrow as pa

FORMATS = ("table", "csv", "json", "jsonl")
BATCH_ROWS = 100_000  # rows per Arrow batch read from DuckDB and printed at once
TABLE_ROWS = 200  # rows `--format table` shows when no --max-rows is given
TABLE_COLUMNS = 30  # columns `--format table` shows (the first and last halves)
TABLE_CELL = 60  # characters of a value `--format table` shows (then `…`)


@dataclass(frozen=True)
class Printed:
    """What `print_sql` wrote: its rows, and whether --max-rows (or the table's size) cut it."""

    rows: int
    truncated: bool


NESTED = frozenset({"list", "struct", "map", "array", "union", "tuple"})


def print_rows(con, statement, params, fmt: str, limits: SqlLimits, out: IO[str]) -> Printed:
    relation = bind(con, statement, params)
    names = _unique(relation.columns)
    if fmt == "table" and statement.type == duckdb.StatementType.EXPLAIN:
        plans = relation.project("#2").fetchall()
        _write(out, "".join(f"{plan}\n" for (plan,) in plans))
        return Printed(len(plans), False)
    shaped = relation.project(_shape(names, relation.types, fmt))
    cap = limits.max_rows or (TABLE_ROWS if fmt == "table" else 0)
    if fmt == "table":  # the rows it shows, as Python values (no Arrow stream to set up)
        shown = shaped.limit(cap + 1).fetchall()
        truncated = len(shown) > cap
        rows = min(len(shown), cap)
        if not _write(out, _table_page(names, shown[:cap], rows, truncated, limits.max_rows)):
            return Printed(0, False)
        return Printed(rows, truncated)
    sink = {"csv": _Csv, "json": _Json, "jsonl": _Json}[fmt](names, fmt, out)
    rows, truncated = 0, False
    reader = shaped.to_arrow_reader(BATCH_ROWS)
    try:
        for batch in reader:
            if cap and rows + batch.num_rows > cap:  # there are more rows than the cap
                truncated = True
                batch = batch.slice(0, cap - rows)
            if batch.num_rows and not sink.write(batch):
                return Printed(rows, False)  # the reader of our output went away (`| head`)
            rows += batch.num_rows
            if truncated:
                break
    finally:
        reader.close()
    sink.close(rows, truncated, limits.max_rows)
    return Printed(rows, truncated)


def _shape(names: list[str], types, fmt: str) -> str:
    """The projection that makes rows printable, in DuckDB (which knows every type it has):
    text for the table (DuckDB's own text; nested values as JSON), one CSV line per row for CSV
    (fields quoted when needed), one JSON object per row for JSON (NaN and infinities, which
    JSON lacks, as null). Columns by position (`#3`)."""
    quoted = [_quote(n) for n in names]
    if fmt in ("json", "jsonl"):
        fields = []
        for i, (name, kind) in enumerate(zip(quoted, types, strict=True), 1):
            value = (
                f"case when isfinite(#{i}) then #{i} end"
                if kind.id in ("float", "double")
                else f"#{i}"
            )
            fields.append(f"{name} := {value}")
        return f"to_json(struct_pack({', '.join(fields)}))::varchar as json"
    texts = [
        f"to_json(#{i})::varchar" if kind.id in NESTED else f"#{i}::varchar"
        for i, kind in enumerate(types, 1)
    ]
    if fmt == "csv":
        cells = [
            f"coalesce(case when regexp_matches({text}, '^$|[\",\\r\\n]') then "
            f"'\"' || replace({text}, '\"', '\"\"') || '\"' else {text} end, '')"
            for text in texts
        ]
        return " || ',' || ".join(cells) + " as csv"
    return ", ".join(f"{text} as {name}" for text, name in zip(texts, quoted, strict=True))


def _unique(names: list[str]) -> list[str]:
    """Column names made unique as DuckDB does (`a`, `a_1`, `A_2`: case does not count)."""
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, k = name, 0
        while candidate.lower() in seen:
            k += 1
            candidate = f"{name}_{k}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _write(out: IO[str], text: str) -> bool:
    """Write and flush; False when the reader of our output has gone (a closed pipe)."""
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        try:  # nothing more can be written; keep the interpreter's final flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return False
    return True


def _csv_field(text: str) -> str:
    """A CSV field as `_shape` quotes them: when empty, or holding `"`, `,` or a line break."""
    if text == "" or any(c in text for c in '",\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


class _Csv:
    """A header line, then the rows' CSV lines as DuckDB made them (`_shape`)."""

    def __init__(self, names: list[str], fmt: str, out: IO[str]):
        self.out = out
        self.open = _write(out, ",".join(_csv_field(n) for n in names) + "\n")

    def write(self, batch: pa.RecordBatch) -> bool:
        return self.open and _write(self.out, "\n".join(batch.column(0).to_pylist()) + "\n")

    def close(self, rows: int, truncated: bool, max_rows: int) -> None:
        pass


class _Json:
    """`jsonl`: one object per line; `json`: the same lines as one array (`[`, `,`, `]`)."""

    def __init__(self, names: list[str], fmt: str, out: IO[str]):
        self.out, self.array, self.rows = out, fmt == "json", 0

    def write(self, batch: pa.RecordBatch) -> bool:
        lines = (",\n" if self.array else "\n").join(batch.column(0).to_pylist())
        if self.array:
            text = ("[\n" if self.rows == 0 else ",\n") + lines
        else:
            text = lines + "\n"
        self.rows += batch.num_rows
        return _write(self.out, text)

    def close(self, rows: int, truncated: bool, max_rows: int) -> None:
        if self.array:
            _write(self.out, "\n]\n" if self.rows else "[]\n")


def _table_page(
    names: list[str], shown: list[tuple], rows: int, truncated: bool, max_rows: int
) -> str:
    """The first rows in a box (`table_text`), then a line saying how many and why no more."""
    if truncated and max_rows:
        footer = f"(first {rows} rows: --max-rows {max_rows})"
    elif truncated:
        footer = f"(first {rows} rows; more with --max-rows N, or all with --format csv)"
    else:
        footer = f"({rows} row{'' if rows == 1 else 's'})"
    return f"{table_text(names, shown)}\n{footer}\n"


def table_text(names: list[str], rows: list[tuple]) -> str:
    """Rows of text values (None: `null`) in a box, one line per row: at most TABLE_COLUMNS
    columns (the first and last halves, `…` between) and TABLE_CELL characters a value."""
    shown: list[int | None] = list(range(len(names)))
    if len(names) > TABLE_COLUMNS:
        half = TABLE_COLUMNS // 2
        shown = [*range(half), None, *range(len(names) - half, len(names))]
    header = [_cell(names[i]) if i is not None else "…" for i in shown]
    body = [[_cell(row[i]) if i is not None else "…" for i in shown] for row in rows]
    widths = [max(_width(t) for t in column) for column in zip(header, *body, strict=True)]

    def line(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right

    def cells(texts: list[str]) -> str:
        padded = (f" {t}{' ' * (w - _width(t))} " for t, w in zip(texts, widths, strict=True))
        return "│" + "┆".join(padded) + "│"

    return "\n".join(
        [line("┌", "─", "┬", "┐"), cells(header), line("╞", "═", "╪", "╡")]
        + [cells(texts) for texts in body]
        + [line("└", "─", "┴", "┘")]
    )


def _cell(value: str | None) -> str:
    if value is None:
        return "null"
    text = value.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= TABLE_CELL else text[:TABLE_CELL] + "…"


def _width(text: str) -> int:
    """Columns `text` takes on a terminal: wide (East Asian) characters two, combining none."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def format_frame(frame: pl.DataFrame, fmt: str) -> str:
    """An in-memory frame as text (the reports of `duplirank nightly`)."""
    import polars as pl

    if fmt == "csv":
        return frame.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        frame.write_json(buffer)
        return buffer.getvalue() + "\n"
    with pl.Config(
        tbl_rows=200,
        tbl_cols=30,
        fmt_str_lengths=60,
        tbl_width_chars=200,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        return str(frame) + f"\n({frame.height} rows)\n"
