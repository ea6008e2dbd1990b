"""Random mutations of valid lines never crash a run and never lose a line."""

from __future__ import annotations

import gzip
from types import SimpleNamespace

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.artifacts import quarantine_reasons
from flows.ingest.stage import Sink

from .cases import VALID, mutated, quarantined, run, table, write


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.tuples(
            st.lists(mutated(), min_size=1, max_size=30),
            st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gzip", "gzip-cut"]),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_lines_never_crash_a_run_nor_get_lost(tmp_path_factory, files):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    paths, lines_of, cut = [], {}, set()
    for n, (lines, encoding) in enumerate(files):
        data = b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines)
        path = tmp_path / f"f{n}.jsonl"
        if encoding == "utf-8-sig":
            data = b"\xef\xbb\xbf" + data
        elif encoding == "utf-16":
            data = data.decode("utf-8", "replace").encode("utf-16")
        elif encoding.startswith("gzip"):
            path = path.with_suffix(".jsonl.gz")
            data = gzip.compress(data, mtime=0)
            if encoding == "gzip-cut":
                data = data[: max(1, len(data) * 2 // 3)]
                cut.add(str(path))
        path.write_bytes(data)
        paths.append(path)
        lines_of[str(path)] = len(lines)
    result, wh = run(tmp_path, *paths)
    log = table(wh, "ingest_log")
    quarantine = quarantined(wh)
    for report in result.files:
        assert report.lines_read == report.rows_accepted + report.rows_quarantined, report
        if report.status == "already_ingested":  # the same bytes as an earlier file
            continue
        if report.file in cut:  # what decompressed, and one line for the unreadable rest
            assert report.lines_read <= lines_of[report.file] + 1, report
        else:
            assert report.lines_read == lines_of[report.file], report
        numbers = _line_numbers(wh, quarantine, report.file)
        assert numbers == list(range(1, report.lines_read + 1)), (report, numbers)
        logged = log.filter(pl.col("file") == report.file).row(0, named=True)
        assert logged["lines_read"] == report.lines_read
    if quarantine.height:
        assert quarantine["reason"].str.len_chars().min() > 0


def _line_numbers(wh, quarantine: pl.DataFrame, file: str) -> list[int]:
    """Every line number a file has in bronze or quarantine (each line exactly once)."""
    numbers = []
    for name in (
        "simultane_deal",
        "ff_match",
        "ff_deal",
        "bridge_event",
        "bridge_result",
        "bridge_penalty",
    ):
        rows = table(wh, name)
        if rows.height:
            numbers += rows.filter(pl.col("source_file") == file)["line_no"].to_list()
    if quarantine.height:
        numbers += quarantine.filter(pl.col("file") == file)["line_no"].to_list()
    return sorted(numbers)


SHORT = [b"", b"", b"x", b"{", b"1", b" ", b"\r", b"\xff"]  # empty and one-byte lines


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    runs=st.lists(
        st.tuples(st.sampled_from(SHORT + [v.encode() for v in VALID[:3]]), st.integers(1, 300)),
        min_size=1,
        max_size=8,
    ),
    chunk_lines=st.sampled_from([64, 100, 1000]),
    gz=st.booleans(),
)
def test_line_count_extremes_are_chunked_by_lines_and_every_line_accounted(
    tmp_path_factory, monkeypatch, runs, chunk_lines, gz
):
    """Files of empty and one-byte lines (runs of the same line, copies of valid lines among
    them): chunks of at most `chunk_lines` lines, a run of identical rejects kept compactly,
    and every line in bronze or quarantine exactly once."""
    tmp_path = tmp_path_factory.mktemp("short")
    chunks = _chunk_sizes(monkeypatch)
    lines = [line for line, count in runs for _ in range(count)]
    path = write(tmp_path / ("f.jsonl.gz" if gz else "f.jsonl"), lines, gz=gz)
    result, wh = run(tmp_path, path, ingest={"chunk_lines": chunk_lines})
    (report,) = result.files
    assert report.lines_read == len(lines) == report.rows_accepted + report.rows_quarantined
    quarantine = table(wh, "quarantine")
    assert _line_numbers(wh, quarantined(wh), report.file) == list(range(1, len(lines) + 1))
    assert max(chunks) <= chunk_lines
    if quarantine.height:  # a run of the same line: its first and its copies, a row per chunk
        assert quarantine.height <= 2 * len(runs) + len(chunks)
        assert quarantine["line_count"].sum() == report.rows_quarantined


def test_a_gzip_bomb_of_empty_lines_is_read_in_bounded_chunks(tmp_path, monkeypatch):
    """A gzip of 1 KiB that decompresses to half a million empty lines: read `chunk_lines` at a
    time, quarantined as a few rows (one per chunk), every line accounted for."""
    chunks = _chunk_sizes(monkeypatch)
    lines = 500_000
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" * lines, compresslevel=9))
    assert path.stat().st_size < 2048
    result, wh = run(tmp_path, path, ingest={"chunk_lines": 1 << 15})
    (report,) = result.files
    assert (report.lines_read, report.rows_quarantined, report.rows_accepted) == (lines, lines, 0)
    assert report.status == "unreadable"
    assert max(chunks) == 1 << 15 and sum(chunks) == lines
    rows = table(wh, "quarantine").sort("line_no")
    assert rows.height == len(chunks)
    assert set(rows["reason"]) == {"empty line"} and rows["line_count"].sum() == lines
    assert rows["line_no"][0] == 1 and rows["last_line_no"][-1] == lines
    assert (rows["line_no"][1:] == rows["last_line_no"][:-1] + 1).all()
    # the run's summary counts lines, not rows
    assert quarantine_reasons(wh.root, SimpleNamespace(ingest=result)) == {"empty line": lines}


def _chunk_sizes(monkeypatch) -> list[int]:
    """The lines of each chunk the run stages (filled as it runs)."""
    sizes: list[int] = []
    real = Sink.add

    def add(self, index, checked, chunk):
        if chunk is not None:
            sizes.append(chunk.lines)
        return real(self, index, checked, chunk)

    monkeypatch.setattr(Sink, "add", add)
    return sizes
