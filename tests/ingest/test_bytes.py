"""Bad bytes spoil their line, never their file; a file is quarantined whole only when none of
its lines can be read, and then its bytes are kept."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import polars as pl

from flows.ingest import line_split
from flows.ingest.options import IngestOptions

from .cases import (
    accepted,
    assert_total,
    deal,
    dumps,
    good_file,
    reasons,
    run,
    table,
    write,
)

GOOD = [dumps(deal(f"p{i}", 1 + i % 2)) for i in range(40)]


def test_a_nul_byte_in_the_first_4_kib_spoils_its_line_only(tmp_path):
    lines = [line.encode() for line in GOOD]
    lines[2] = lines[2][:30] + b"\x00" + lines[2][31:]
    path = write(tmp_path / "day.jsonl", lines)
    other = good_file(tmp_path)
    result, wh = run(tmp_path, path, other)
    assert reasons(wh, path) == [(3, "NUL byte at column 31: not JSON text")]
    assert accepted(wh, "simultane_deal", path) == [n for n in range(1, 41) if n != 3]
    assert [f.status for f in result.files] == ["ingested", "ingested"]
    assert_total(wh, path, other)


def test_flipped_bytes_spoil_their_lines_only(tmp_path):
    data = bytearray(b"".join(line.encode() + b"\n" for line in GOOD))
    rng = random.Random(3)
    flipped_lines = set()
    for _ in range(5):
        at = rng.randrange(len(data))
        if data[at] == 10:  # keep the line structure: a flipped newline is another case
            continue
        data[at] ^= 0xFF
        flipped_lines.add(data[:at].count(b"\n") + 1)
    path = tmp_path / "day.jsonl"
    path.write_bytes(bytes(data))
    _, wh = run(tmp_path, path)
    bad = {n for n, _ in reasons(wh, path)}
    assert bad == flipped_lines
    assert {r for _, r in reasons(wh, path)} <= {"not UTF-8", "invalid JSON"}
    assert len(accepted(wh, "simultane_deal", path)) == 40 - len(flipped_lines)
    assert_total(wh, path)


def test_a_truncated_gzip_ingests_what_decompresses(tmp_path):
    lines = [dumps(deal(f"p{i:04d}", 1 + i % 2, made=i % 500)) for i in range(3000)]
    data = gzip.compress("".join(x + "\n" for x in lines).encode(), mtime=0)
    path = tmp_path / "day.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    other = good_file(tmp_path)
    result, wh = run(tmp_path, path, other)
    read = accepted(wh, "simultane_deal", path)
    assert 500 < len(read) < 3000 and read == list(range(1, len(read) + 1))
    [(line, reason)] = reasons(wh, path)
    assert line == len(read) + 1
    assert reason == (
        "truncated gzip: the file ends inside compressed data; the rest of the file is unreadable"
    )
    raw = table(wh, "quarantine")["raw"][0]
    assert lines[line - 1].startswith(raw)  # the part of the cut line that decompressed
    assert result.files[0].status == "ingested"
    assert_total(wh, path, other, lines={path: line})


def test_several_gzip_members_and_crlf_line_ends(tmp_path):
    first = gzip.compress(b"".join(x.encode() + b"\r\n" for x in GOOD[:20]))
    second = gzip.compress(b"".join(x.encode() + b"\r\n" for x in GOOD[20:]))
    path = tmp_path / "day.JSONL.GZ"  # upper case suffixes too
    path.write_bytes(first + second)
    _, wh = run(tmp_path, path)
    assert reasons(wh) == [] and len(accepted(wh, "simultane_deal", path)) == 40
    assert_total(wh, path, lines={path: 40})


def test_a_bom_is_dropped_and_utf16_is_decoded(tmp_path):
    text = "".join(x + "\n" for x in GOOD[:4]).replace('"p0"', '"Zoé"')
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    utf16 = tmp_path / "utf16.jsonl"
    utf16.write_bytes(text.encode("utf-16"))  # with its BOM
    utf16_be = tmp_path / "utf16be.jsonl"
    utf16_be.write_bytes(text.replace("Zoé", "Zoë").encode("utf-16-be"))  # without one
    _, wh = run(tmp_path, bom, utf16, utf16_be)
    assert reasons(wh) == []
    players = table(wh, "simultane_deal").sort("source_file", "line_no")["player_id"].to_list()
    assert players == ["Zoé", "p1", "p2", "p3"] * 2 + ["Zoë", "p1", "p2", "p3"]
    assert_total(wh, bom, utf16, utf16_be, lines={bom: 4, utf16: 4, utf16_be: 4})


def test_utf16_text_starting_with_a_nul_is_not_taken_for_utf32(tmp_path):
    """UTF-16 text starting with a NUL character begins with the UTF-32 BOM (FF FE 00 00):
    it is read as the UTF-16 it decodes as (found by the fuzz test: read as UTF-32, the
    decoder raised UnicodeDecodeError and stopped the run)."""
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(("\x00" + GOOD[0] + "\n" + GOOD[1] + "\n").encode("utf-16"))
    other = good_file(tmp_path)
    _, wh = run(tmp_path, odd, other)
    assert reasons(wh, odd) == [(1, "NUL byte at column 1: not JSON text")]
    assert accepted(wh, "simultane_deal", odd) == [2]
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    assert_total(wh, odd, other, lines={odd: 2})


def test_bytes_that_do_not_decode_in_the_files_encoding_spoil_their_line(tmp_path):
    """A lone surrogate in UTF-16 (`00 D8` then `A`): `surrogateescape` alone raised on it."""
    odd = tmp_path / "odd.jsonl"
    first, last = ((x + "\n").encode("utf-16-le") for x in GOOD[:2])
    odd.write_bytes(b"\xff\xfe" + first + b"\x00\xd8A\x00\n\x00" + last)
    other = good_file(tmp_path)
    _, wh = run(tmp_path, odd, other)
    assert reasons(wh, odd) == [(2, "not valid UTF-16-LE")]
    assert accepted(wh, "simultane_deal", odd) == [1, 3]
    assert_total(wh, odd, other, lines={odd: 3})


def test_a_line_too_long_is_quarantined_without_being_read_whole(tmp_path):
    long_line = dumps(deal("big", comment="x" * 5000))
    path = write(tmp_path / "day.jsonl", [GOOD[0], long_line, GOOD[1], "", "  "])
    _, wh = run(tmp_path, path, ingest={"max_line_bytes": 1000, "chunk_bytes": 256})
    rows = reasons(wh, path)
    assert rows[0] == (
        2,
        f"line of {len(long_line)} bytes is longer than the limit "
        "(1000 bytes, setting ingest.max_line_bytes)",
    )
    assert rows[1:] == [(4, "empty line"), (5, "empty line")]
    head = table(wh, "quarantine").sort("line_no")["raw"][0]  # kept: the start of the line
    assert long_line.startswith(head) and 1000 <= len(head) <= 1024
    assert accepted(wh, "simultane_deal", path) == [1, 3]
    assert_total(wh, path)


def test_a_file_no_line_of_which_can_be_read_is_kept_whole(tmp_path):
    binary = tmp_path / "image.jsonl"
    binary.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(20000)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress("".join(x + "\n" for x in GOOD).encode())[:15])
    other = good_file(tmp_path)
    result, wh = run(tmp_path, binary, cut, other)
    status = {f.file: f.status for f in result.files}
    assert status == {str(binary): "unreadable", str(cut): "unreadable", str(other): "ingested"}
    kept = {Path(p).read_bytes() for p in wh.files("quarantine_files")}
    assert kept == {binary.read_bytes(), cut.read_bytes()}
    assert reasons(wh, cut) == [
        (
            1,
            "truncated gzip: the file ends inside compressed data; the rest of the file is "
            "unreadable",
        )
    ]
    assert {r for _, r in reasons(wh, binary)} <= {"not UTF-8", "invalid JSON", "empty line"} | {
        r for _, r in reasons(wh, binary) if r.startswith(("duplicate of line", "NUL byte"))
    }
    text = result.text()
    assert f"quarantined whole (bytes kept for --replay-quarantine): {binary}" in text
    assert f"quarantined whole (bytes kept for --replay-quarantine): {cut}" in text
    assert "quarantined by reason: " in text
    assert_total(wh, binary, other, lines={binary: binary.read_bytes().count(b"\n") + 1})
    log = table(wh, "ingest_log").filter(pl.col("file") == str(cut)).row(0, named=True)
    assert (log["lines_read"], log["rows_quarantined"]) == (1, 1)


def test_a_plain_text_file_named_gz_is_read_as_text(tmp_path):
    """A delivery named `.gz` that is not gzip data (no gzip magic, text bytes) is read as the
    text it is; one that is neither gzip nor text stays a corrupt gzip, kept whole."""
    plain = write(tmp_path / "day.jsonl.gz", GOOD[:5] + ["{"])
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(b"\x00\x01\x02 not gzip \xff\xfe\x03" * 50)
    result, wh = run(tmp_path, plain, junk)
    assert accepted(wh, "simultane_deal", plain) == [1, 2, 3, 4, 5]
    assert reasons(wh, plain) == [(6, "invalid JSON")]
    status = {Path(f.file).name: f.status for f in result.files}
    assert status == {"day.jsonl.gz": "ingested", "junk.jsonl.gz": "unreadable"}
    assert reasons(wh, junk)[0][1].startswith("corrupt gzip data at byte 0")
    assert_total(wh, plain, junk)


def test_an_unreadable_delivery_is_quarantined_once(tmp_path):
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(b"\x1f\x8b\x08\x00garbage")
    run(tmp_path, cut)
    cut.touch()  # same bytes, new mtime: read again, known content
    result, wh = run(tmp_path, cut)
    assert [f.status for f in result.files] == ["already_ingested"]
    assert len(reasons(wh)) == 1 and len(wh.files("quarantine_files")) == 1


def test_an_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result, wh = run(tmp_path, path)
    assert [(f.status, f.lines_read) for f in result.files] == [("empty", 0)]
    assert not wh.files("quarantine")


def test_copies_are_found_across_chunks_of_a_file(tmp_path):
    missing = dumps({k: v for k, v in deal("x").items() if k != "player_id"})
    lines = [GOOD[0], "{bad", missing, *GOOD[1:30]]
    lines += [GOOD[0], "{bad", dumps(deal("p0", made=1)), missing, "", "", GOOD[1]]
    path = write(tmp_path / "day.jsonl", lines)
    _, wh = run(tmp_path, path, ingest={"chunk_bytes": 512})
    assert reasons(wh, path) == [
        (2, "invalid JSON"),
        (3, "missing field player_id"),
        (33, "duplicate of line 1"),
        (34, "duplicate of line 2"),
        (35, "conflicting duplicate of line 1 (same tournament_id, deal_no, player_id)"),
        (36, "duplicate of line 3"),
        (37, "empty line"),
        (38, "empty line"),
        (39, "duplicate of line 4"),
    ]
    assert_total(wh, path)


def test_lines_keep_their_number_when_a_chunk_is_parsed_in_parallel_batches(tmp_path):
    """A chunk of thousands of lines is parsed by DuckDB in several batches: each reason and
    each row stays with its own line (the parse result is aligned with the lines by position)."""
    lines = []
    for i in range(1, 6001):
        if i % 7 == 0:
            lines.append(f"[{i}]")
        elif i % 11 == 0:
            lines.append(f'{{"type": {i}')
        else:
            lines.append(dumps(deal(f"p{i:05d}", 1 + i % 2, made=i % 500)))
    path = write(tmp_path / "day.jsonl", lines)
    _, wh = run(tmp_path, path)
    bad = {
        i: "not a JSON object" if i % 7 == 0 else "invalid JSON"
        for i in range(1, 6001)
        if i % 7 == 0 or i % 11 == 0
    }
    assert dict(reasons(wh, path)) == bad
    rows = table(wh, "simultane_deal").select("line_no", "player_id", "points_made")
    assert rows.height == 6000 - len(bad)
    assert rows.filter(
        (pl.col("player_id") != pl.format("p{}", pl.col("line_no").cast(pl.String).str.zfill(5)))
        | (pl.col("points_made") != pl.col("line_no") % 500)
    ).is_empty()
    assert_total(wh, path)


def test_line_ends_are_found_across_the_search_blocks(monkeypatch):
    """The `\\n` search a block at a time finds what one pass over the chunk finds, a line
    end on either side of a block's edge included."""
    monkeypatch.setattr(line_split, "LINE_END_BLOCK", 64)
    rng = np.random.default_rng(3)
    for size in (0, 1, 63, 64, 65, 1000):
        for density in (0.0, 0.05, 0.5):
            data = np.where(rng.random(size) < density, 10, 65).astype(np.uint8)
            assert line_split.line_ends(data).tolist() == (np.flatnonzero(data == 10) + 1).tolist()
    edges = np.full(200, 65, np.uint8)
    edges[[0, 63, 64, 127, 128, 199]] = 10
    assert line_split.line_ends(edges).tolist() == [1, 64, 65, 128, 129, 200]


def test_a_line_s_text_ends_before_its_run_of_cr_and_lf():
    """The text of a line (what a rejected line's copies are told by) ends before every CR and
    LF that ends it, however many: what `bytes.rstrip(b"\\r\\n")` keeps, for any lines of a
    chunk, a chunk sliced from a larger one included."""
    rng = np.random.default_rng(5)
    pieces = [b"a", b"\r", b" ", b"\xff", b"{}"]
    lines = [b"", b"\r", b"x\ry", b"\r" * 9, b"z" + b"\r" * 40]
    lines += [b"".join(rng.choice(pieces, rng.integers(0, 8))) for _ in range(300)]
    chunk = line_split.LineSplitter(IngestOptions())._chunk(b"".join(x + b"\n" for x in lines))
    for raw, start in ((chunk.raw, 0), (chunk.raw.slice(7), 7)):
        positions = np.sort(rng.choice(len(raw), 120, replace=False))
        lengths = line_split.text_lengths(raw, positions)
        assert lengths.tolist() == [len(lines[start + i].rstrip(b"\r\n")) for i in positions]
