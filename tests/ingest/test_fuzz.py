"""Random mutations of valid lines never crash a run and never lose a line."""

from __future__ import annotations

import gzip

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .cases import mutated, run, table


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
    quarantine = table(wh, "quarantine")
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
    for name in ("simultane_deal", "ff_match", "ff_deal", "bridge_event", "bridge_result",
                 "bridge_penalty"):  # fmt: skip
        rows = table(wh, name)
        if rows.height:
            numbers += rows.filter(pl.col("source_file") == file)["line_no"].to_list()
    if quarantine.height:
        numbers += quarantine.filter(pl.col("file") == file)["line_no"].to_list()
    return sorted(numbers)
