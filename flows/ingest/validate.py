"""Validate a file chunk by chunk: each line becomes a typed bronze row of its record type or a
quarantine row with its reason and the rule it failed (`rule`).

Per chunk: one DuckDB parse (`parse`), the line-level checks (UTF-8, blank, exact duplicate of
an earlier line of the file, JSON, object, `type`), then per record type the typing of its
fields (`decode`), the plausible window, the record type's declaration (the rules of its
dataframely schema) and the same-key duplicates of the file. Every line is screened at once
against all the rules (`_screen`); the few that fail are checked rule by rule, each rule a
column as dataframely's `filter` gives it (`check_typed`). The reason of a failing line is
the first failing check in this order: field by field as declared (not decodable, missing,
its own checks, outside the window), then the cross-field rules. Reasons are worded with
expressions on the failing rows only; Python sees only lines DuckDB calls invalid JSON, to
tell a NUL byte or a lone surrogate from other errors.

`parse` and `prepare` need nothing of the file's earlier chunks (but the fields to ask for):
the ingest runs them in reader threads, a chunk ahead; `finish` (the copies of earlier lines,
by key and by text) runs in the main thread, chunk after chunk in line order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest import decode
from flows.ingest.line_split import Chunk, lines_at
from flows.ingest.options import Window
from flows.ingest.parse import (
    FIELDS,
    KEY_PATTERN,
    extra_fields,
    key_counts,
    parse_chunk,
    release_scratch,
)
from transforms.calendar import RAW_MONTH
from transforms.record_types import RECORD_TYPES, RecordType

REJECTED = {"line_no": pl.Int64(), "_pos": pl.UInt32(), "reason": pl.String(), "rule": pl.String()}
QUARANTINE = {"line_no": pl.Int64(), "raw": pl.String(), "reason": pl.String(), "rule": pl.String()}
# a quarantine row stands for a run of consecutive lines of the same text, reason and rule
RUNS = {"last_line_no": pl.Int64(), "line_count": pl.Int64()}
LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<![89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class Seen:
    """The first line of each hash pair seen so far in a file, and a value kept with it
    (32 bytes per distinct key): sorted runs of keys, one added per chunk (its new keys) and
    runs of about the same size merged (a log-structured merge), so a chunk is looked up in
    a few runs whatever the size of the file — one sorted array merged whole each chunk made
    a file of 1 M lines cost ~0.7 s."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def first_lines(
        self, h1: np.ndarray, h2: np.ndarray, line_no: np.ndarray, kept: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """For each row (rows in line order): the first line of the file with the same
        hashes (its own when it is the first), and the value kept with that first line."""
        kept = np.zeros(len(line_no), np.uint64) if kept is None else kept
        if not len(line_no):
            return line_no, kept
        order = _argsort_stable(h1)  # equal hashes stay in line order
        s1, s2, lines, values = h1[order], h2[order], line_no[order], kept[order]
        starts = np.r_[True, s1[1:] != s1[:-1]]
        head = np.maximum.accumulate(np.where(starts, np.arange(len(s1)), 0))
        same = s2 == s2[head]  # a different h2 under the same h1 is not the same key
        first = np.where(same, lines[head], lines)
        first_kept = np.where(same, values[head], values)
        new = starts | ~same
        for r1, r2, r_line, r_kept in self.runs:  # a key is in one run at most
            i = np.minimum(np.searchsorted(r1, s1), len(r1) - 1)
            hit = (r1[i] == s1) & (r2[i] == s2)
            first = np.where(hit, r_line[i], first)
            first_kept = np.where(hit, r_kept[i], first_kept)
            new &= ~hit
        if new.any():
            self.runs.append((s1[new], s2[new], lines[new], values[new]))  # sorted by h1
            self._merge()
        out, out_kept = np.empty_like(first), np.empty_like(first_kept)
        out[order], out_kept[order] = first, first_kept
        return out, out_kept

    def _merge(self) -> None:
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]):
            b, a = self.runs.pop(), self.runs.pop()
            order = np.argsort(np.concatenate([a[0], b[0]]), kind="stable")  # two sorted runs
            merged = (np.concatenate([x, y])[order] for x, y in zip(a, b, strict=True))
            self.runs.append(tuple(merged))


def _argsort_stable(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")`, ~5x faster on random 64-bit keys: numpy's SIMD
    quicksort, then the few runs of equal keys (copies) put back in their first order."""
    order = np.argsort(keys)
    ties = keys[order[1:]] == keys[order[:-1]]
    if ties.any():
        tied = np.flatnonzero(np.r_[ties, False] | np.r_[False, ties])  # every member of a run
        # runs of equal keys are contiguous in `order`: sorting their members by (key, place)
        # reorders each run by place and leaves the runs where they are
        members = order[tied]
        order[tied] = members[np.lexsort((members, keys[members]))]
    return order


SAMPLE_LINES = 1000  # lines of a file's first chunk whose types say which fields to parse
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


class Parsed(NamedTuple):
    """A chunk parsed and checked line by line (`Validator.parse`)."""

    frame: pl.DataFrame  # `parse_chunk`'s rows, `_pos` (place in the chunk), `_type`, `_record`
    fields: tuple[str, ...]  # the fields the parse asked for
    rejected: pl.DataFrame  # REJECTED rows of the lines that are no record of a known type
    present: list[str]  # the record types of its records


class Prepared(NamedTuple):
    """A chunk checked but for the copies of the file's earlier lines (`Validator.prepare`)."""

    rows: dict[str, pl.DataFrame]  # record type -> accepted rows (fields, `line_no`, `_pos`, …)
    rejected: pl.DataFrame  # REJECTED columns and the text's hash (`_h1`, `_h2`)


@dataclass
class Checked:
    rows: dict[str, pl.DataFrame]  # record type -> bronze-shaped rows (`month` null, `_pos`)
    quarantine: pl.DataFrame  # QUARANTINE and RUNS columns: a row per run of the same line

    @property
    def accepted(self) -> int:
        return sum(f.height for f in self.rows.values())


class Validator:
    """Validates chunks of lines against the record types (one DuckDB connection)."""

    def __init__(self, window: Window | None, types: dict[str, RecordType] | None = None):
        self.con = duckdb.connect(config={"enable_external_file_cache": False})
        self.window = window
        self.types = RECORD_TYPES if types is None else types

    def close(self) -> None:
        self.con.close()
        release_scratch()

    def parse(
        self, chunk: Chunk, file: FileCheck, con: duckdb.DuckDBPyConnection | None = None
    ) -> Parsed:
        """The DuckDB parse of a chunk and its line-level checks (`con`: a cursor of this
        validator's connection, when it runs in another thread: the next chunk is parsed while
        this one is checked). The fields asked of the file's next chunks are those of the
        record types seen so far."""
        con = con or self.con
        fields = file.fields or self._sampled_fields(con, chunk)
        frame = parse_chunk(con, chunk.line_no, chunk.raw, fields).with_row_index("_pos")
        frame, rejected = self._line_checks(frame, file)
        present = sorted(frame.select(pl.col("_type").filter("_record").unique())["_type"])
        file.fields = tuple(sorted({*fields, *(f for t in present for f in self.types[t].fields)}))
        return Parsed(frame, fields, rejected, present)

    def _sampled_fields(self, con: duckdb.DuckDBPyConnection, chunk: Chunk) -> tuple[str, ...]:
        """The fields of the record types of a file's first lines (a file holds one or a few
        types: asking for the fields of all of them made its first chunk cost ~2x). Lines of
        a type first seen later get their fields from a second parse (`_all_fields`)."""
        lines = min(len(chunk.line_no), SAMPLE_LINES)
        if lines == len(chunk.line_no):
            return FIELDS
        sample = parse_chunk(con, chunk.line_no[:lines], chunk.raw.slice(0, lines), ("type",))
        types = sample.select(_type_of(tuple(self.types)).drop_nulls().unique())["_type"]
        return tuple(sorted({"type", *(f for t in types for f in self.types[t].fields)}))

    def check(self, chunk: Chunk, file: FileCheck, parsed: Parsed | None = None) -> Checked:
        return self.finish(self.prepare(chunk, file, parsed), chunk, file)

    def prepare(
        self,
        chunk: Chunk,
        file: FileCheck,
        parsed: Parsed | None = None,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> Prepared:
        """Every check of a chunk that needs none of the file's earlier lines (all of them but
        the copies of earlier lines): run in a reader thread (`con`, its cursor) while the
        main thread finishes the chunk before."""
        con = con or self.con
        parsed = parsed or self.parse(chunk, file, con)
        present = parsed.present
        frame = self._all_fields(con, parsed.frame, present, parsed.fields, chunk)
        rejected, rows = [parsed.rejected], {}
        for type_name in present:
            rt = self.types[type_name]
            mine = pl.col("_record") & (pl.col("_type") == type_name)
            accepted, bad = self._check_type(con, rt, frame, mine, chunk, alone=len(present) == 1)
            rejected.append(bad)
            rows[type_name] = accepted
        return Prepared(rows, _with_hash(pl.concat(rejected), chunk))

    def finish(self, prepared: Prepared, chunk: Chunk, file: FileCheck) -> Checked:
        """The checks against the file's earlier lines (same key, same text), in line order of
        the chunks: bronze and quarantine rows."""
        rows, copies = {}, []
        for type_name, accepted in prepared.rows.items():
            rt = self.types[type_name]
            accepted, same = _same_key(rt, accepted, file)
            copies.append(same)
            if accepted.height:
                rows[rt.name] = _bronze(rt, accepted, file)
        quarantine = _copies_of_rejected(prepared.rejected, file).select(*TEXTS)
        if any(c.height for c in copies):
            quarantine = pl.concat([quarantine, *(c.select(*TEXTS) for c in copies)])
        quarantine = _runs(quarantine, file, chunk)
        if file.batch is not None:  # each row to its file, numbered in it
            rows = {k: _to_files(v, file.batch) for k, v in rows.items()}
            return Checked(rows, _to_files(quarantine, file.batch))
        if chunk.special:
            specials = pl.DataFrame(
                [(s.line_no, s.raw, s.reason, s.rule, s.line_no, 1) for s in chunk.special],
                schema=QUARANTINE | RUNS,
                orient="row",
            )
            quarantine = pl.concat([quarantine, specials])
        return Checked(rows, quarantine)

    def _all_fields(
        self,
        con: duckdb.DuckDBPyConnection,
        parsed: pl.DataFrame,
        present: list[str],
        fields: tuple[str, ...],
        chunk: Chunk,
    ) -> pl.DataFrame:
        """Lines of a record type first seen in this chunk (the parse asked only for the
        fields of the types seen before): their missing fields, from a second parse."""
        missing = sorted({f for t in present for f in self.types[t].fields} - set(fields))
        if not missing:
            return parsed
        covered = list(_covered(self.types, fields))
        late = parsed.filter(pl.col("_record") & ~pl.col("_type").is_in(covered))
        lines = pa.array(lines_at(chunk.raw, late["_pos"]), pa.large_binary())
        texts = parse_chunk(con, late["line_no"].to_numpy(), lines, missing)
        texts = texts.select("line_no", *missing)
        return parsed.join(texts, on="line_no", how="left", maintain_order="left")

    # ------------------------------------------------------------------ line level
    def _line_checks(
        self, parsed: pl.DataFrame, file: FileCheck
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(the lines with `_type` and `_record`: a record of a known type; the other lines'
        REJECTED rows: not text, blank, not JSON, no known type). No line is filtered out
        of the first: a filter copies every column, and most chunks are one record type."""
        parsed = parsed.with_columns(_type_of(tuple(self.types)))
        odd = parsed.select(pl.col("_type").is_null() & pl.col("type").is_not_null()).to_series()
        if odd.any():
            # a type written another way than its plain JSON text (escapes), or no known type:
            # those few decoded (decoding the whole column cost ~5 ms a chunk)
            rows = odd.arg_true()
            texts = parsed["type"].gather(rows).to_frame()
            names = texts.select(decode.string_value(pl.col("type"))).to_series()
            parsed = parsed.with_columns(parsed["_type"].scatter(rows, names))
        known = pl.col("_type").is_in(list(self.types)).fill_null(False)
        parsed = parsed.with_columns((pl.col("problem").is_null() & known).alias("_record"))
        bad = parsed.select("line_no", "_pos", "problem", "type", "_type", "_record")
        bad = bad.filter(~pl.col("_record"))
        reason = _line_reason(file.encoding).alias("_r")
        return parsed, bad.select("line_no", "_pos", reason).unnest("_r")

    # ------------------------------------------------------------------ record level
    def _check_type(
        self,
        con: duckdb.DuckDBPyConnection,
        rt: RecordType,
        parsed: pl.DataFrame,
        mine: pl.Expr,
        chunk: Chunk,
        alone: bool,
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(accepted rows, rejected rows) of the lines of one record type (`mine`), before the
        same-key check (`finish`).

        Every line is typed and screened at once (`decode.typed`, then the declaration's
        rules as one column, `_screen`); a line that decodes, lies in the window and passes
        every rule is accepted as it is. The others (a few) take the detailed way: the slow
        decoding of odd texts (`decode.repair`), each rule of the declaration as a column and
        the reasons (`check_typed`). When the chunk is of this type `alone`, its few other
        lines (rejected already) are typed too rather than filtered out of every column."""
        texts = [pl.col(f).alias(f"_t_{f}") for f in rt.fields]
        rows = parsed.select("line_no", "_pos", "text_bytes", "h1", mine.alias("_mine"), *texts)
        if not alone:
            rows = rows.filter("_mine")
        typed = decode.typed(rt, rows, self.window).with_columns(_screen(rt, self.window))
        keep = ["h1", "_extra?", *(f"_t_{f}" for f in rt.fields if rt.kind(f) == "obj")]
        columns = [*rt.fields, "line_no", "_pos", *keep]
        passed = pl.col("_passed") & pl.col("_mine")
        if typed.select(passed.all()).item():
            accepted, rejected = typed.select(columns), pl.DataFrame(schema=REJECTED)
        else:
            odd = typed.filter(~pl.col("_passed") & pl.col("_mine"))
            accepted, rejected = self._check_odd(rt, odd, keep)
            fast = typed.select(*columns, "_passed", "_mine").filter(passed).select(columns)
            if accepted.height:  # rows stay in line order (same-key copies name the first)
                accepted = pl.concat([fast, accepted.select(columns)]).sort("_pos")
            else:
                accepted = fast
        accepted = _with_extra(con, rt, accepted, chunk)
        accepted, not_finite = _not_finite(rt, accepted)
        return accepted, pl.concat([rejected, not_finite])

    def _check_odd(
        self, rt: RecordType, odd: pl.DataFrame, keep: list[str]
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The lines the screen did not pass: texts decoded the slow way where they can be,
        then checked against the declaration one rule at a time (with the reasons)."""
        flags = [c for c in odd.columns if c.startswith(("_bad_", "_out_"))]
        flagged = odd.filter(pl.any_horizontal(flags))
        if flagged.height:  # decode the rare texts the slow way, then check them again
            repaired = decode.repair(rt, flagged, self.window)
            odd = pl.concat([odd.filter(~pl.any_horizontal(flags)), repaired], rechunk=True)
        odd = odd.with_columns(_may_have_extra(rt))
        return self.check_typed(rt, odd, keep)

    def check_typed(
        self, rt: RecordType, typed: pl.DataFrame, keep: list[str] = ()
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Typed rows against the declaration and the window: (accepted rows with the fields,
        `line_no`, `_pos` and the `keep` columns; rejected rows, each with the first check
        it fails).

        `typed` has the fields, `line_no`, `_pos`, and `_t_<field>` / `_bad_<field>` (the
        JSON texts and their decoding failures) when the rows come from JSON. Each rule of
        the declaration is a column (true: valid), as dataframely's `filter` gives it (whose
        own bookkeeping cost ~15 ms a call, paid by the few odd lines of every chunk)."""
        missing = [f for f in rt.fields if f"_t_{f}" not in typed.columns]
        typed = typed.with_columns(
            *(pl.lit(None, pl.String).alias(f"_t_{f}") for f in missing),
            *(pl.lit(False).alias(f"_bad_{f}") for f in missing),
        )
        if not any(c.startswith("_out_") for c in typed.columns):
            typed = typed.with_columns(decode.window_flags(rt, self.window))
        typed = typed.with_columns(_rule_columns(rt))
        checks = _checks(rt, self.window)
        failed = typed.select(column for column, _, _, _ in checks).to_numpy()
        failed ^= np.array([negate for _, negate, _, _ in checks])  # a rule column: valid
        failing = failed.any(axis=1)
        rejected = self._reasons(rt, typed.filter(failing), np.argmax(failed[failing], axis=1))
        columns = [*rt.fields, "line_no", "_pos", *keep, *(c for c in typed.columns if c[0] != "_")]
        accepted = typed.select(list(dict.fromkeys(columns)))
        if rejected.height:  # a filter copies every column: only when a row goes
            accepted = accepted.filter(~failing)
        return accepted, rejected

    def _reasons(self, rt: RecordType, rows: pl.DataFrame, first: np.ndarray) -> pl.DataFrame:
        """The reason of each rejected row: its first failing check (`first`, the check's
        place in `_checks`), worded by one expression over the few checks that fail first."""
        if not rows.height:
            return pl.DataFrame(schema=REJECTED)
        rows = rows.rechunk()  # few rows; a column of several chunks made Polars 2.1 panic here
        checks = _checks(rt, self.window)
        worded = []
        for k in np.unique(first):
            _, _, reason, rule = checks[k]
            wording = pl.struct(reason.alias("reason"), rule=pl.lit(rule))
            worded.append((pl.col("_check") == k, wording))
        rows = rows.with_columns(pl.Series("_check", first))
        return rows.select("line_no", "_pos", _first_of(worded).alias("_r")).unnest("_r")


@cache
def _rule_columns(rt: RecordType) -> list[pl.Expr]:
    """Each rule of the declaration as a column named after it: true when valid (null is
    valid, as dataframely counts it)."""
    return [expr.fill_null(True).alias(name) for name, expr in rt.rule_exprs().items()]


@cache
def _checks(rt: RecordType, window: Window | None) -> list[tuple[str, bool, pl.Expr, str]]:
    """(column, negate, reason, rule) of every check in the order reasons are chosen: field
    by field as declared (not decodable, missing, its own rules, outside the window), then
    the cross-field rules. The check fails where its boolean column is true (`_bad_`, `_out_`
    flags), or false when `negate` (a rule column: true when valid)."""
    checks = []
    rules = rt.rules()
    for name in rt.fields:
        checks.append((f"_bad_{name}", False, decode.decode_reason(rt, name), f"{name}|type"))
        checks += [(rule, True, reason, rule) for rule, f, reason in rules if f == name]
        if window is not None and rt.kind(name) in ("ts", "date"):
            reason = decode.window_reason(name, window)
            checks.append((f"_out_{name}", False, reason, f"{name}|window"))
    checks += [(rule, True, reason, rule) for rule, f, reason in rules if f is None]
    return checks


def _covered(types: dict[str, RecordType], fields: tuple[str, ...]) -> set[str]:
    """Record types all of whose fields are among `fields`."""
    return {name for name, rt in types.items() if set(rt.fields) <= set(fields)}


def _to_files(rows: pl.DataFrame, batch: Batch) -> pl.DataFrame:
    """Rows of a batch with their file (`_file`, its place in the batch) and its line number;
    bronze rows with their file's name and delivery."""
    line_no = rows["line_no"].to_numpy()
    files = pl.Series("_file", batch.file_of(line_no), pl.Int64)
    local = batch.local(line_no)
    rows = rows.with_columns(files, pl.Series("line_no", local, pl.Int64))
    if "last_line_no" in rows.columns:  # a run stays in its file (`_runs`)
        rows = rows.with_columns(pl.col("last_line_no") - pl.Series(line_no - local))
    if "source_file" not in rows.columns:
        return rows
    return rows.with_columns(
        pl.Series(batch.sources, dtype=pl.String).gather(files).alias("source_file"),
        pl.Series(batch.deliveries, dtype=pl.Int64).gather(files).alias("delivery"),
    )


def _bronze(rt: RecordType, accepted: pl.DataFrame, file: FileCheck) -> pl.DataFrame:
    """Bronze-shaped rows (month unknown yet), with `_pos` (where the line is in the chunk)."""
    return accepted.select(
        *rt.fields,
        pl.lit(None, pl.String).alias(RAW_MONTH),
        "extra",
        pl.lit(file.source).alias("source_file"),
        "line_no",
        pl.lit(file.delivery, pl.Int64).alias("delivery"),
        "_pos",
    )


@cache
def _type_of(types: tuple[str, ...]) -> pl.Expr:
    """`_type`: the record type named by a line's `type` when it is written as the plain JSON
    string of a known type (every line but a few), else null."""
    names = {json.dumps(name): name for name in types}
    return pl.col("type").replace_strict(names, default=None, return_dtype=pl.String).alias("_type")


@cache
def _line_reason(encoding: str) -> pl.Expr:
    """(reason, rule) of a line that is no record of a known type (built once)."""
    problem, type_text, type_name = pl.col("problem"), pl.col("type"), pl.col("_type")
    encoding = "UTF-8" if encoding == "utf-8" else f"valid {encoding.upper()}"
    checks = [
        (problem == "not_utf8", pl.lit(f"not {encoding}"), "not_utf8"),
        (problem == "empty_line", pl.lit("empty line"), "empty_line"),
        (problem == "invalid_json", pl.lit("invalid JSON"), "invalid_json"),
        (problem == "not_object", pl.lit("not a JSON object"), "not_object"),
        (type_text.is_null(), pl.lit("missing field type"), "type|nullability"),
        (
            type_name.is_null(),
            pl.format("field type must be a string (got {})", type_text.str.slice(0, 40)),
            "type|type",
        ),
        (pl.lit(True), pl.format("unknown type '{}'", type_name.str.slice(0, 40)), "unknown_type"),
    ]
    return _first_of([(c, pl.struct(r.alias("reason"), rule=pl.lit(k))) for c, r, k in checks])


def _first_of(cases: list[tuple[pl.Expr, pl.Expr]]) -> pl.Expr:
    """The value of the first case whose condition holds (null when none does)."""
    expr = pl.when(cases[0][0].fill_null(False)).then(cases[0][1])
    for condition, then in cases[1:]:
        expr = expr.when(condition.fill_null(False)).then(then)
    return expr


def raw_texts(raw: pa.Array, positions: np.ndarray) -> pl.Series:
    """The text of some lines without their line end (invalid UTF-8 shown with U+FFFD)."""
    return _texts(lines_at(raw, positions))  # quarantined lines: few


def _texts(lines: list[bytes]) -> pl.Series:
    text = pl.Series([b.decode("utf-8", "replace") for b in lines], dtype=pl.String)
    return text.str.strip_suffix("\n").str.strip_suffix("\r")


NOT_COPIES = ("not_utf8", "empty_line", "duplicate_line", "duplicate_key")


def _copies_of_rejected(rows: pl.DataFrame, file: FileCheck) -> pl.DataFrame:
    """`duplicate of line N` for rejected lines whose text an earlier rejected line had
    (an accepted line's copy is found by its key, `_same_key`); `_with_hash` hashed them."""
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


TEXTS = REJECTED | {"_h1": pl.UInt64(), "_h2": pl.UInt64()}
LINE_END = r"[\r\n]+\z"


def _with_hash(rejected: pl.DataFrame, chunk: Chunk) -> pl.DataFrame:
    """Rejected rows with a 128-bit hash of their text without its line end (`_h1`, `_h2`:
    is it the same text as an earlier rejected line of the file?), computed on the column."""
    positions = pa.array(rejected["_pos"].to_numpy().astype(np.int64))
    text = pl.Series(pc.replace_substring_regex(chunk.raw.take(positions), LINE_END, b""))
    return rejected.with_columns(
        text.hash(seed=0).alias("_h1").cast(pl.UInt64),
        text.hash(seed=1).alias("_h2").cast(pl.UInt64),
    )


def _runs(rows: pl.DataFrame, file: FileCheck, chunk: Chunk) -> pl.DataFrame:
    """One quarantine row per run of consecutive lines with the same text (hash), reason and
    rule in one file: `line_no` its first line, `last_line_no`, `line_count` (a million
    identical rejects are one row, not a million); then the text of each row, and the
    reason of invalid JSON in words (`invalid_json_reason`)."""
    rows = rows.sort("line_no")
    if rows.height > 1:
        line_no = rows["line_no"].to_numpy()
        place = file.batch.file_of(line_no) if file.batch is not None else np.zeros(len(rows))
        keys = rows.select("_h1", "_h2", "reason", "rule").with_columns(_f=pl.Series(place))
        same = pl.all_horizontal(pl.all() == pl.all().shift(1)).fill_null(False)
        starts = ~keys.select(same).to_series().to_numpy() | (np.diff(line_no, prepend=0) != 1)
        if not starts.all():
            rows = (
                rows.with_columns(_run=pl.Series(np.cumsum(starts)))
                .group_by("_run", maintain_order=True)
                .agg(
                    pl.col("line_no", "_pos", "reason", "rule").first(),
                    pl.col("line_no").last().alias("last_line_no"),
                    pl.len().cast(pl.Int64).alias("line_count"),
                )
            )
    if "line_count" not in rows.columns:
        rows = rows.with_columns(
            pl.col("line_no").alias("last_line_no"), pl.lit(1, pl.Int64).alias("line_count")
        )
    rows = rows.with_columns(raw=raw_texts(chunk.raw, rows["_pos"].to_numpy()))
    json_rows = rows["rule"] == "invalid_json"
    if json_rows.any():
        explained = [invalid_json_reason(t) for t in rows.filter(json_rows)["raw"]]
        rows = rows.with_columns(
            pl.when(json_rows)
            .then(pl.Series(_spread(json_rows, explained)))
            .otherwise("reason")
            .alias("reason")
        )
    return rows.select(*QUARANTINE, *RUNS)


def _spread(mask: pl.Series, values: list[str]) -> list[str | None]:
    it = iter(values)
    return [next(it) if m else None for m in mask]


def invalid_json_reason(text: str) -> str:
    """Name what makes a line invalid JSON when it is one of the usual suspects."""
    nul = text.find("\x00")
    if nul >= 0:
        return f"NUL byte at column {nul + 1}: not JSON text"
    surrogate = LONE_SURROGATE.search(text)
    if surrogate:
        return f"lone surrogate {surrogate.group(0)} in a string: not valid Unicode"
    return "invalid JSON"


@cache
def _may_have_extra(rt: RecordType, decoded: bool = False) -> pl.Expr:
    """Whether a line may have fields its type does not declare.

    A line is compact JSON of its known fields when its length is theirs (`"k":` and the
    value's JSON text, a comma or brace each); the others (extra keys, but also spaces,
    escapes, nulls, or a number DuckDB may write longer than it was: `1E2` is `100.0`, hence
    the `.` test) are looked at again (`_with_extra`).
    """
    sizes = [pl.col(f"_t_{k}").str.len_bytes() + (len(k) + 4) for k in rt.fields]
    kinds = ("num", "obj") if decoded else ("int", "num", "obj")  # `decoded`: an integer's
    numbers = [  # text read by the fast decoding is digits only (`decode.fast_value`)
        pl.col(f"_t_{k}").str.contains(".", literal=True).fill_null(False)
        for k in rt.fields
        if rt.kind(k) in kinds
    ]
    type_size = len(json.dumps(rt.name)) + len('"type":') + 1
    compact = pl.sum_horizontal(sizes) + type_size + 1
    floats = pl.any_horizontal(numbers) if numbers else pl.lit(False)
    return ((pl.col("text_bytes") != compact) | floats).fill_null(True).alias("_extra?")


@cache
def _screen(rt: RecordType, window: Window | None) -> list[pl.Expr]:
    """`_passed`: the line decodes, its times lie in the window and every rule of the
    declaration holds (dataframely's own rule expressions, null counted as valid as
    dataframely does); and `_extra?` (`_may_have_extra`). A line that passes is accepted
    as it is; what `check_typed` would say of it is nothing (tested)."""
    flags = [pl.col(f"_bad_{f}") for f in rt.fields]
    if window is not None:
        flags += [pl.col(f"_out_{f}") for f in rt.fields if rt.kind(f) in ("ts", "date")]
    rules = [expr.fill_null(True) for expr in rt.rule_exprs().values()]
    passed = pl.all_horizontal(rules) & ~pl.any_horizontal(flags).fill_null(True)
    return [passed.alias("_passed"), _may_have_extra(rt, decoded=True)]


def _with_extra(
    con: duckdb.DuckDBPyConnection, rt: RecordType, rows: pl.DataFrame, chunk: Chunk
) -> pl.DataFrame:
    """`extra`: the line's fields its type does not declare (a JSON object), or null.
    Only lines that `_may_have_extra` are parsed again (by DuckDB's `json_merge_patch`)."""
    look = rows.filter(pl.col("_extra?"))
    rows = rows.drop("_extra?")
    if look.height:  # longer than compact (spaces, escapes…): more keys than its fields'?
        known = 1 + pl.sum_horizontal(
            *(pl.col(f).is_not_null() for f in rt.fields),
            *(
                pl.col(f"_t_{f}").str.count_matches(KEY_PATTERN).fill_null(0)
                for f in rt.fields
                if rt.kind(f) == "obj"
            ),
        )
        keys = key_counts(chunk.raw, look["_pos"].to_numpy())
        look = look.filter(pl.Series(keys != look.select(known).to_series().to_numpy()))
    if not look.height:  # the common case: no line has fields its type does not declare
        return rows.with_columns(pl.lit(None, pl.String).alias("extra"))
    lines = pa.array(lines_at(chunk.raw, look["_pos"]), pa.large_binary())
    extra = extra_fields(con, look["line_no"].to_numpy(), lines, ["type", *rt.fields])
    return rows.join(extra, on="line_no", how="left")


def _not_finite(rt: RecordType, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows with NaN or Infinity inside an object field or an unknown field: rejected."""
    objects = ["extra", *(f"_t_{k}" for k in rt.fields if rt.kind(k) == "obj")]
    suspect = pl.any_horizontal(pl.col(c).str.contains("(?i)nan|inf") for c in objects)
    found = rows.filter(suspect.fill_null(False))
    reasons = []
    for row in found.select("line_no", "_pos", *objects).iter_rows(named=True):
        reason = next(filter(None, (_non_finite_in(row[c], c) for c in objects)), None)
        if reason:
            reasons.append((row["line_no"], row["_pos"], reason, "not_finite"))
    bad = pl.DataFrame(reasons, schema=REJECTED, orient="row")
    if not bad.height:
        return rows, bad
    return rows.filter(~pl.col("line_no").is_in(bad["line_no"].implode())), bad


class _Constant(float):
    """NaN or Infinity as read by Python's json (which accepts them)."""


def _non_finite_in(text: str | None, column: str) -> str | None:
    """`field X is NaN: not a number` when the JSON text holds NaN or ±Infinity."""
    if text is None:
        return None
    found: list[str] = []

    def constant(name: str) -> _Constant:
        found.append(name)
        return _Constant(0.0)

    value = json.loads(text, parse_constant=constant)
    if not found:
        return None
    if column != "extra":
        return f"field {column[3:]} contains {found[0]}: not a number"
    key = next(k for k, v in value.items() if _holds_constant(v))
    verb = "is" if isinstance(value[key], _Constant) else "contains"
    return f"field {key} {verb} {found[0]}: not a number"


def _holds_constant(value) -> bool:
    if isinstance(value, dict):
        return any(_holds_constant(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_constant(v) for v in value)
    return isinstance(value, _Constant)


def _same_key(
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
