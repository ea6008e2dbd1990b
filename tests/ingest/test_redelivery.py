"""Re-deliveries: only rows whose content changed are flagged; the log has one row per file
per run that read it."""

from __future__ import annotations

import polars as pl

from flows.settings import Settings
from flows.steps import StepContext

from .cases import deal, dumps, run, table, write


def test_a_redelivered_file_with_one_changed_record_flags_that_record_only(tmp_path):
    lines = [dumps(deal(f"p{i:02d}", 1 + i % 2)) for i in range(30)]
    path = write(tmp_path / "day.jsonl", lines)
    run(tmp_path, path)
    lines[7] = dumps(deal("p07", 2, made=120))  # the server re-sends the day, one deal fixed
    write(path, lines)
    result, wh = run(tmp_path, path)
    assert [(f.status, f.delivery) for f in result.files] == [("ingested", 2)]
    ctx = StepContext(Settings(warehouse=wh.root), "r")
    current, superseded = ctx.current("simultane.deal", ["2026-11"])
    current, superseded = current.collect(), superseded.collect()
    assert current.height == 30 and set(current["delivery"]) == {2}
    assert superseded["detail"].to_list() == [
        "simultane.deal line 8 (delivery 1) replaced by delivery 2"
    ]
    assert current.filter(pl.col("player_id") == "p07")["points_made"].to_list() == [120]


def test_the_same_bytes_under_another_name_are_already_ingested(tmp_path):
    lines = [dumps(deal("ann")), dumps(deal("bob"))]
    first = write(tmp_path / "a.jsonl", lines)
    second = write(tmp_path / "b.jsonl", lines)
    result, wh = run(tmp_path, first, second)
    assert [f.status for f in result.files] == ["ingested", "already_ingested"]
    assert table(wh, "simultane_deal").height == 2
    log = table(wh, "ingest_log").sort("file")
    assert log.select("status", "lines_read").rows() == [("ingested", 2), ("already_ingested", 0)]


def test_one_log_row_per_file_per_run_that_read_it(tmp_path):
    path = write(tmp_path / "day.jsonl", [dumps(deal())])
    run(tmp_path, path)
    run(tmp_path, path)  # unchanged: not read
    path.touch()  # same bytes, new mtime: read, known content
    run(tmp_path, path)
    run(tmp_path, path)  # unchanged again
    _, wh = run(tmp_path, path)
    log = table(wh, "ingest_log").sort("ingested_at")
    assert log["status"].to_list() == ["ingested", "already_ingested"]
