"""The parse of a chunk by DuckDB's JSON reader is the parse of its lines one by one: the
same rows, in line order, whatever the lines hold (blank, not UTF-8, not JSON, odd values)."""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from flows.ingest import parse, validate_lines
from flows.ingest.line_split import LineSplitter as _LineSplitter
from flows.ingest.options import IngestOptions
from flows.ingest.parse import FIELDS, parse_chunk, parse_lines
from flows.ingest.validate import Validator

from .cases import deal, dumps, ff_deal, match, mutated

ODD_LINES = [b"", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b" \x0b\r", b"\xc2\xa0", b"\x00",
             b"\x1e", b"{}", b"null", b"[]", b'"x"', b"\xef\xbb\xbf{}", b'{"type":null}',
             b'{"type":1}', b'{"type":"x"} \xff', b'{"type":"x"}\r{"type":"y"}',
             b'{"type":"simultane.deal","deal_no":1,}', b'{"type":"x","type":"y"}',
             b'  {"type":"simultane.deal"}  ', b'{"type":"ff.match","x":1 /* c */}']  # fmt: skip
line = st.one_of(mutated(), st.sampled_from(ODD_LINES), st.binary(max_size=40))


def chunk_of(lines: list[bytes]):
    data = b"".join(x.replace(b"\n", b" ") + b"\n" for x in lines)
    return _LineSplitter(IngestOptions())._chunk(data)


@pytest.fixture(scope="module")
def con():
    validator = Validator(None)
    yield validator.con
    validator.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(line, min_size=1, max_size=40))
def test_the_reader_parses_as_the_lines_one_by_one(con, lines):
    chunk = chunk_of(lines)
    fast = parse_chunk(con, chunk.line_no, chunk.raw, FIELDS)
    slow = parse_lines(con, chunk.line_no, chunk.raw, FIELDS).select(fast.columns)
    assert_frame_equal(fast, slow)
    assert fast["line_no"].to_list() == list(range(1, len(lines) + 1))


def test_rows_are_the_lines_in_order_in_a_big_chunk(con):
    lines = [dumps(deal(f"p{i}", i % 20 + 1)).encode() for i in range(30_000)]
    lines[7], lines[12_345], lines[29_999] = b"", b"not json", b" \t "
    chunk = chunk_of(lines)
    fast = parse_chunk(con, chunk.line_no, chunk.raw, FIELDS)
    expected = [None if i in (7, 12_345, 29_999) else f'"p{i}"' for i in range(30_000)]
    assert fast["player_id"].to_list() == expected
    assert fast["problem"][[7, 12_345, 29_999]].to_list() == [
        "empty_line",
        "invalid_json",
        "empty_line",
    ]


def test_a_chunk_the_reader_does_not_match_line_for_line_is_parsed_line_by_line(con, monkeypatch):
    chunk = chunk_of([dumps(deal("ann")).encode(), b"", dumps(deal("bob")).encode()])
    expected = parse_lines(con, chunk.line_no, chunk.raw, FIELDS)
    # a reader that would skip one line more than the blank ones: rows no longer match lines
    monkeypatch.setattr(parse, "_skipped", lambda raw, *_: np.zeros(len(raw), bool))
    fast = parse_chunk(con, chunk.line_no, chunk.raw, FIELDS)
    assert_frame_equal(fast, expected.select(fast.columns))


def test_each_chunk_is_read_from_its_own_bytes(con):
    """The same memory-file name is used again for the next chunk: never its old content."""
    first = chunk_of([dumps(deal("ann")).encode()] * 3)
    second = chunk_of([dumps(deal("bob")).encode()] * 3)
    assert parse_chunk(con, first.line_no, first.raw, FIELDS)["player_id"].unique().to_list() == [
        '"ann"'
    ]
    assert parse_chunk(con, second.line_no, second.raw, FIELDS)["player_id"].unique().to_list() == [
        '"bob"'
    ]


def test_a_slice_of_lines_is_parsed_from_its_own_bytes(con):
    chunk = chunk_of([dumps(deal(p)).encode() for p in ("ann", "bob", "cat", "dan")])
    part = chunk.raw.slice(1, 2)
    rows = parse_chunk(con, chunk.line_no[1:3], part, FIELDS)
    assert rows["player_id"].to_list() == ['"bob"', '"cat"']
    assert rows["line_no"].to_list() == [2, 3]
    assert isinstance(part, pa.LargeBinaryArray)


def test_the_scratch_files_are_reused_and_their_memory_given_back(con):
    """Chunks are written to the same few memory files (no new file per chunk), emptied when a
    file or a run is done."""
    chunk = chunk_of([dumps(deal("ann")).encode()] * 3)
    parse_chunk(con, chunk.line_no, chunk.raw, FIELDS)
    first = list(parse._scratch().files)
    for _ in range(5):
        parse_chunk(con, chunk.line_no, chunk.raw, FIELDS)
    assert parse._scratch().files == first
    assert all(os.fstat(fd).st_size > 0 for fd, _ in first)
    parse.release_scratch()
    assert all(os.fstat(fd).st_size == 0 for fd, _ in first)


def test_a_big_chunk_of_face_a_face_lines_validates_like_its_parts():
    """A chunk of thousands of lines comes back from the reader as several batches (a Polars
    panic once came from columns of different chunkings): validated whole or in small parts,
    it gives the same rows and the same quarantine."""
    records = [
        match(f"m{i}") if i % 17 == 0 else ff_deal(f"m{i // 17 * 17}", 1 + i % 16)
        for i in range(3400)
    ]
    lines = [dumps(r).encode() for r in records]
    lines[1000:1000] = [b"{oops", b""]
    whole = validate_lines(lines, "x.jsonl")
    size = 250
    parts = [
        (start, validate_lines(lines[start : start + size], "x.jsonl"))
        for start in range(0, len(lines), size)
    ]
    assert whole.lines_read == len(lines) == sum(part.lines_read for _, part in parts)
    for name, rows in whole.frames().items():
        expected = [
            p.frames()[name].with_columns(pl.col("line_no") + start)
            for start, p in parts
            if name in p.rows
        ]
        expected = pl.concat(expected)
        assert_frame_equal(rows.sort("line_no"), expected.sort("line_no"), check_dtypes=False)
    quarantined = pl.concat(
        [
            p.quarantine_rows.with_columns(pl.col("line_no") + start)
            for start, p in parts
            if p.quarantine_rows.height
        ]
    )
    assert whole.quarantine_rows.sort("line_no")["line_no"].to_list() == (
        quarantined.sort("line_no")["line_no"].to_list()
    )
