"""Validate a file chunk by chunk: each line becomes a typed bronze row of its record type or a
quarantine row with its reason and the rule it failed (`rule`).

Per chunk: one DuckDB parse (`parse`), the line-level checks (UTF-8, blank, exact duplicate of
an earlier line of the file, JSON, object, `type`), then per record type the typing of its
fields (`decode`), the plausible window, the record type's declaration (the rules of its
dataframely schema) and the same-key duplicates of the file. Every line is screened at once
against all the rules (`screen_columns`); the few that fail are checked rule by rule, each rule a
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
from functools import cache
from typing import NamedTuple

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest import decode, screen
from flows.ingest.checked import QUARANTINE, REJECTED, RUNS, TEXTS, Checked
from flows.ingest.copies import copies_of_rejected, same_key, with_hash
from flows.ingest.file_check import FileCheck, to_files
from flows.ingest.line_split import Chunk, lines_at
from flows.ingest.options import Window
from flows.ingest.parse import FIELDS, parse_chunk, release_scratch
from flows.ingest.quarantine_runs import runs
from flows.ingest.reasons import first_of, line_reason, ordered_checks
from transforms.calendar import RAW_MONTH
from transforms.record_types import RECORD_TYPES, RecordType

SAMPLE_LINES = 1000  # lines of a file's first chunk whose types say which fields to parse


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
        return Prepared(rows, with_hash(pl.concat(rejected), chunk))

    def finish(self, prepared: Prepared, chunk: Chunk, file: FileCheck) -> Checked:
        """The checks against the file's earlier lines (same key, same text), in line order of
        the chunks: bronze and quarantine rows."""
        rows, copies = {}, []
        for type_name, accepted in prepared.rows.items():
            rt = self.types[type_name]
            accepted, same = same_key(rt, accepted, file)
            copies.append(same)
            if accepted.height:
                rows[rt.name] = _bronze(rt, accepted, file)
        quarantine = copies_of_rejected(prepared.rejected, file).select(*TEXTS)
        if any(c.height for c in copies):
            quarantine = pl.concat([quarantine, *(c.select(*TEXTS) for c in copies)])
        quarantine = runs(quarantine, file, chunk)
        if file.batch is not None:  # each row to its file, numbered in it
            rows = {k: to_files(v, file.batch) for k, v in rows.items()}
            return Checked(rows, to_files(quarantine, file.batch))
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
        reason = line_reason(file.encoding).alias("_r")
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
        rules as one column, `screen_columns`); a line that decodes, lies in the window and passes
        every rule is accepted as it is. The others (a few) take the detailed way: the slow
        decoding of odd texts (`decode.repair`), each rule of the declaration as a column and
        the reasons (`check_typed`). When the chunk is of this type `alone`, its few other
        lines (rejected already) are typed too rather than filtered out of every column."""
        texts = [pl.col(f).alias(f"_t_{f}") for f in rt.fields]
        rows = parsed.select("line_no", "_pos", "text_bytes", "h1", mine.alias("_mine"), *texts)
        if not alone:
            rows = rows.filter("_mine")
        typed = decode.typed(rt, rows, self.window).with_columns(
            screen.screen_columns(rt, self.window)
        )
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
        accepted = screen.with_extra(con, rt, accepted, chunk)
        accepted, not_finite = screen.not_finite(rt, accepted)
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
        odd = odd.with_columns(screen.may_have_extra(rt))
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
        typed = typed.with_columns(screen.rule_columns(rt))
        checks = ordered_checks(rt, self.window)
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
        place in `ordered_checks`), worded by one expression over the few checks that fail first."""
        if not rows.height:
            return pl.DataFrame(schema=REJECTED)
        rows = rows.rechunk()  # few rows; a column of several chunks made Polars 2.1 panic here
        checks = ordered_checks(rt, self.window)
        worded = []
        for k in np.unique(first):
            _, _, reason, rule = checks[k]
            wording = pl.struct(reason.alias("reason"), rule=pl.lit(rule))
            worded.append((pl.col("_check") == k, wording))
        rows = rows.with_columns(pl.Series("_check", first))
        return rows.select("line_no", "_pos", first_of(worded).alias("_r")).unnest("_r")


def _covered(types: dict[str, RecordType], fields: tuple[str, ...]) -> set[str]:
    """Record types all of whose fields are among `fields`."""
    return {name for name, rt in types.items() if set(rt.fields) <= set(fields)}


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
