"""The landing folder: every file has a status, PBN files are bridge events, symlinks leading
out are refused, a night with nothing new stages nothing."""

from __future__ import annotations

import os

import polars as pl

from flows.runs import ingest_run
from flows.settings import Settings
from flows.storage.warehouse import Warehouse

from .cases import (
    accepted,
    assert_readers_free,
    assert_total,
    deal,
    dumps,
    failing_blocks,
    good_file,
    reasons,
    run,
    table,
    write,
)

PBN = r"""% PBN 2.1
[Event "Club"]
[Date "2026.11.03"]
[Board "1"]
[Vulnerable "None"]
[ScoreTable "PairId_NS\2R;PairId_EW\2R;Contract\5L;Declarer\1R;Result\2R;Score_NS\6R"]
 1  2 "4S"  N 10    -
 3  4 "4S"  N  9    -
 5  6 -     - -     -

[Board "x"]
[Contract "3NT"]
"""


def test_every_file_of_the_folder_gets_a_status_once(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    good = good_file(landing, "UPPER.JSONL")
    (landing / "notes.txt").write_text("hello\n")
    (landing / "day.jsonl.part").write_text(dumps(deal()) + "\n")
    (landing / "passwd.jsonl").symlink_to("/etc/passwd")
    (landing / "etc").symlink_to("/etc")
    (landing / "gone.jsonl").symlink_to(landing / "nothing-there")
    (landing / "inside.jsonl").symlink_to(good)
    result, wh = run(tmp_path, landing)
    status = {os.path.basename(f.file): f.status for f in result.files}
    assert status == {
        "UPPER.JSONL": "ingested",
        "notes.txt": "skipped: unknown suffix",
        "day.jsonl.part": "skipped: unknown suffix",
        "passwd.jsonl": "refused: symlink outside the landing folder",
        "etc": "refused: symlink outside the landing folder",
        "gone.jsonl": "skipped: broken symlink",
        "inside.jsonl": "already_ingested",  # a link inside the folder: its content is known
    }
    quarantined = table(wh, "quarantine")
    assert not quarantined.height or not quarantined["raw"].str.contains("root:").any()
    assert accepted(wh, "simultane_deal", good) == [1, 2]
    assert_total(wh, good)
    log_rows = table(wh, "ingest_log").height
    assert log_rows == 7
    result, wh = run(tmp_path, landing)  # nothing changed: nothing read, nothing logged
    assert table(wh, "ingest_log").height == log_rows
    assert not any(f.logged for f in result.files)


def test_pbn_files_in_the_landing_folder_are_bridge_events(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    pbn = landing / "club-1103.pbn"
    pbn.write_text(PBN)
    other = good_file(landing)
    result, wh = run(tmp_path, landing)
    assert table(wh, "bridge_event").select("event_id", "date", "raw_month").rows()[0][::2] == (
        "club-1103",
        "2026-11",
    )
    assert sorted(table(wh, "bridge_result")["ns_pair"]) == ["1", "3"]
    assert reasons(wh, pbn) == [
        (2, "board 1: traveller line without a result"),  # the parser names the game
        (11, "board 'x' is not a number"),
    ]
    # a PBN "line" is a record (event, traveller lines) or a skipped game
    report = next(f for f in result.files if f.file == str(pbn))
    assert (report.lines_read, report.rows_accepted, report.rows_quarantined) == (5, 3, 2)
    assert_total(wh, pbn, other, lines={pbn: 5})
    assert result.touched("bridge.event", "bridge.result") == {"2026-11"}


def test_a_night_with_nothing_new_stages_nothing(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    good_file(landing)
    settings = Settings(warehouse=tmp_path / "wh")
    run(tmp_path, landing)
    wh = Warehouse(settings.warehouse)
    before = wh.version()
    tx = wh.transaction("again")
    from flows.ingest import ingest

    result = ingest(wh, tx, [landing], settings.ingest)
    assert tx.ops == [] and [f.status for f in result.files] == ["already_ingested"]
    ingest_run(settings, [landing])
    assert Warehouse(settings.warehouse).version() == before  # no commit at all


def test_a_file_that_cannot_be_read_is_reported_and_read_next_time(tmp_path, monkeypatch):
    """An I/O error (a file gone or not readable while the run reads it) is an `error: …`
    status, logged every run until the file can be read."""
    from flows.ingest.file_stream import FileStream

    landing = tmp_path / "landing"
    landing.mkdir()
    path = write(landing / "day.jsonl", [dumps(deal())])
    real = FileStream._blocks

    def vanish(self):
        raise FileNotFoundError(2, "No such file or directory")
        yield from real(self)

    monkeypatch.setattr(FileStream, "_blocks", vanish)
    result, wh = run(tmp_path, landing)
    assert [f.status for f in result.files] == ["error: No such file or directory"]
    monkeypatch.setattr(FileStream, "_blocks", real)
    result, wh = run(tmp_path, landing)
    assert [f.status for f in result.files] == ["ingested"]
    log = table(wh, "ingest_log").sort("ingested_at")
    assert log["status"].to_list() == ["error: No such file or directory", "ingested"]
    assert accepted(wh, "simultane_deal", path) == [1]
    assert log.filter(pl.col("status") == "ingested")["lines_read"].to_list() == [1]


def test_a_file_failing_in_the_middle_stages_nothing_of_it(tmp_path, monkeypatch):
    """An I/O error after some chunks were staged: none of its rows are published (the next
    run reads it whole), the other files are."""
    from flows.ingest.file_stream import FileStream

    landing = tmp_path / "landing"
    landing.mkdir()
    lines = [dumps(deal(f"p{i:03d}", 1 + i % 2)) for i in range(300)] + ["{bad"]
    path = write(landing / "a.jsonl", lines)
    other = good_file(landing, "b.jsonl")
    real = FileStream._blocks
    monkeypatch.setattr(FileStream, "_blocks", failing_blocks("a.jsonl", 3))
    result, wh = run(tmp_path, landing, ingest={"chunk_bytes": 4096})
    assert [f.status for f in result.files] == ["error: Input/output error", "ingested"]
    assert accepted(wh, "simultane_deal", path) == [] and reasons(wh, path) == []
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    monkeypatch.setattr(FileStream, "_blocks", real)
    _, wh = run(tmp_path, landing, ingest={"chunk_bytes": 4096})
    assert accepted(wh, "simultane_deal", path) == list(range(1, 301))
    assert reasons(wh, path) == [(301, "invalid JSON")]


def test_the_next_file_is_read_ahead_and_errors_or_copies_stay_its_own(tmp_path, monkeypatch):
    """While a file is checked the next one is already read (reader threads): a copy found
    in its turn is `already_ingested` (its reading dropped), an I/O error of the file read
    ahead is that file's, and the others are ingested whole."""
    from flows.ingest import run as ingest_run
    from flows.ingest.file_stream import FileStream

    landing = tmp_path / "landing"
    landing.mkdir()
    first = write(landing / "a.jsonl", [dumps(deal(f"p{i:03d}", 1 + i % 2)) for i in range(200)])
    copy = landing / "b.jsonl"
    copy.write_bytes(first.read_bytes())
    failing = write(landing / "c.jsonl", [dumps(deal(f"q{i:03d}", 1 + i % 2)) for i in range(200)])
    last = write(landing / "d.jsonl", [dumps(deal(f"r{i:03d}", 1 + i % 2)) for i in range(200)])
    started = []
    real_reading = ingest_run._Reading.__init__

    def reading(self, ctx, item, source):
        started.append(item.path.name)
        real_reading(self, ctx, item, source)

    monkeypatch.setattr(FileStream, "_blocks", failing_blocks("c.jsonl", 2))
    monkeypatch.setattr(ingest_run._Reading, "__init__", reading)
    result, wh = run(tmp_path, landing, ingest={"chunk_bytes": 4096})
    assert [f.status for f in result.files] == [
        "ingested",
        "already_ingested",
        "error: Input/output error",
        "ingested",
    ]
    assert started == ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"]  # each read ahead of its turn
    assert accepted(wh, "simultane_deal", first) == list(range(1, 201))
    assert accepted(wh, "simultane_deal", failing) == [] and reasons(wh, failing) == []
    assert accepted(wh, "simultane_deal", last) == list(range(1, 201))
    assert_readers_free()
