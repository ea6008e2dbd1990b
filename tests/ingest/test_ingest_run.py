"""Ingest: nothing lost, every reject has a reason, re-delivery is a no-op, months assigned."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flows.ingest import IngestOptions, validate_lines
from flows.ingest.file_stream import FileStream
from flows.ingest.gzip_stream import GZIP_MAGIC
from flows.ingest.text_encoding import sniff_encoding
from flows.runs import ingest_run as run_ingest
from flows.settings import Settings
from flows.steps import StepContext, simultane
from flows.storage.warehouse import Warehouse
from tests.ingest.lines import deal, tournament, write
from tests_support import read_table

START = datetime(2026, 11, 3, 19, 0, tzinfo=UTC)
GOOD = tournament("T1", START, {"BOT": [(210, 52), (0, 162)], "ann": [(220, 42), (162, 0)]})


def ingest(tmp_path, *files):
    settings = Settings(warehouse=tmp_path / "wh")
    return run_ingest(settings, list(files)), Warehouse(settings.warehouse)


def test_corrupted_files_lose_nothing_and_keep_the_good_rows(tmp_path):
    bad = [
        "{not json",
        json.dumps(deal("T1", 1, "bob", 100, 62) | {"points_made": None}),
        json.dumps(deal("T1", 2, "bob", -5, 62)),
        json.dumps(deal("T1", 1, "cat", "120", 42)),
        json.dumps(deal("T1", 1, "dan", 1, 1) | {"deal_no": 0}),
        json.dumps({"type": "chess.move", "x": 1}),
        GOOD[0],  # the same line again
    ]
    plain = tmp_path / "a.jsonl"
    write(plain, GOOD + bad)
    (tmp_path / "b.jsonl").write_bytes(b'{"type": "simultane.deal", "player_id": "\xff"}\n')
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress("\n".join(GOOD).encode())[:60])
    summary, wh = ingest(tmp_path, tmp_path)
    log = read_table(wh, "ingest_log").sort("file")
    assert (log["lines_read"] == log["rows_accepted"] + log["rows_quarantined"]).all()
    assert log.select("file", "status", "lines_read", "rows_accepted").rows() == [
        (str(plain), "ingested", 11, 4),
        (str(tmp_path / "b.jsonl"), "unreadable", 1, 0),  # its one line is not UTF-8
        (str(tmp_path / "c.jsonl.gz"), "unreadable", 1, 0),  # cut before its first line
    ]
    reasons = read_table(wh, "quarantine").sort("file", "line_no")["reason"].to_list()
    assert reasons == [
        "invalid JSON",
        "missing field points_made",
        "negative points made",
        "field points_made must be an integer",
        "deal_no 0 out of range 1+",
        "unknown type 'chess.move'",
        "duplicate of line 1",
        "not UTF-8",
        reasons[-1],
    ]
    assert reasons[-1].startswith("truncated gzip")
    assert len(wh.files("quarantine_files")) == 2  # their bytes, kept for a replay
    bronze = read_table(wh, "simultane_deal")
    assert bronze.height == 4 and set(bronze["raw_month"]) == {"2026-11"}


def test_redelivered_file_is_a_no_op_and_new_content_is_a_new_delivery(tmp_path):
    path = tmp_path / "day.jsonl"
    write(path, GOOD)
    ingest(tmp_path, path)
    summary, wh = ingest(tmp_path, path)
    assert [f.status for f in summary.ingest.files] == ["already_ingested"]
    assert read_table(wh, "simultane_deal").height == 4
    changed = [GOOD[0].replace('"points_made": 210', '"points_made": 200')] + GOOD[1:]
    write(path, changed)
    summary, wh = ingest(tmp_path, path)
    assert [f.status for f in summary.ingest.files] == ["ingested"]
    bronze = read_table(wh, "simultane_deal")
    assert bronze.height == 8 and sorted(set(bronze["delivery"])) == [1, 2]


def test_month_is_the_platform_months_of_the_tournament_start(tmp_path):
    # 23:30 UTC on Nov 30 is already December 1st in Paris
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    path = tmp_path / "x.jsonl"
    write(path, tournament("T9", late, {"BOT": [(1, 1)], "ann": [(2, 0)]}))
    _, wh = ingest(tmp_path, path)
    # stored by the UTC month of the start (no setting moves it), published in Paris's month
    assert wh.months("simultane_deal", key="raw_month") == ["2026-11"]
    ctx = StepContext(Settings(warehouse=wh.root), "r2")
    ops = simultane.month_step(ctx, "2026-11")
    results = wh.scan("simultane_deal_results", pending=ops).collect()
    assert set(results["month"]) == {"2026-12"}


def test_children_take_their_parents_month_or_are_quarantined(tmp_path):
    match = {
        "type": "ff.match",
        "match_id": "m1",
        "match_type": "attaque",
        "player_a": "ann",
        "player_b": "BOT",
        "ranked": True,
        "created_at": "2026-10-31T22:50:00Z",
        "started_at": "2026-10-31T22:55:00Z",
        "ended_at": "2026-10-31T23:40:00Z",
    }
    child = {
        "type": "ff.deal",
        "match_id": "m1",
        "deal_no": 1,
        "role": "attack",
        "player_id": "ann",
        "started_at": "2026-10-31T23:10:00Z",
        "finished_at": "2026-10-31T23:12:00Z",
        "points_made": 100,
        "points_conceded": 62,
    }
    orphan = child | {"match_id": "nope"}
    path = tmp_path / "ff.jsonl"
    write(path, [json.dumps(match), json.dumps(child), json.dumps(orphan)])
    _, wh = ingest(tmp_path, path)
    parts = [wh.months(t, key="raw_month") for t in ("ff_match", "ff_deal")]
    assert parts == [["2026-10"], ["2026-10"]]
    q = read_table(wh, "quarantine")
    assert q.select("line_no", "reason").rows() == [(3, "unknown match nope")]
    assert json.loads(q["raw"][0])["match_id"] == "nope"


def test_truncated_gzip_gives_its_lines_and_one_for_the_rest():
    data = gzip.compress(b"".join(b'{"a": %d}\n' % i for i in range(5000)))
    chunks = list(FileStream(data[: len(data) // 2], "x.jsonl.gz", IngestOptions()).chunks())
    lines = [line for c in chunks for line in c.raw.to_pylist()]
    assert 100 < len(lines) < 5000 and lines[:2] == [b'{"a": 0}\n', b'{"a": 1}\n']
    [rest] = [s for c in chunks for s in c.special]
    assert rest.line_no == len(lines) + 1 and rest.reason.startswith("truncated gzip")


LINE = st.one_of(
    st.sampled_from(GOOD),
    st.binary(max_size=40),
    st.text(max_size=40).map(str.encode),
    st.sampled_from(GOOD).map(lambda s: s[: len(s) // 2].encode()),
    st.dictionaries(
        st.sampled_from(list(json.loads(GOOD[0]))), st.integers() | st.text(), max_size=6
    ).map(lambda d: json.dumps({"type": "simultane.deal", **d}).encode()),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, min_size=1, max_size=200))
def test_fuzzed_lines_are_all_accounted_for(lines):
    lines = [line.replace(b"\n", b" ") for line in lines if isinstance(line, bytes)] or [b""]
    # a plain UTF-8 file: content that starts like gzip or UTF-16/32 is read as such (tested
    # in tests/ingest/test_bytes.py)
    head = b"\n".join(lines)[:4096]
    assume(not head.startswith(GZIP_MAGIC) and sniff_encoding(head) in (None, "utf-8"))
    v = validate_lines(lines, "fuzz")
    assert v.lines_read == len(lines) == v.accepted + len(v.quarantine)
    assert all(q["reason"] for q in v.quarantine)
    numbered = sorted(
        [q["line_no"] for q in v.quarantine]
        + [n for rows in v.rows.values() for n in rows["line_no"]]
    )
    assert numbered == list(range(1, len(lines) + 1))


def test_thousands_of_corrupted_lines_through_ingest(tmp_path):
    import random

    rng = random.Random(7)
    lines = []
    for i in range(3000):
        row = deal(f"T{i // 40}", i % 2 + 1, f"p{i % 40}", rng.randint(0, 200), rng.randint(0, 200))
        text = json.dumps(row)
        roll = rng.random()
        if roll < 0.1:
            text = text[: rng.randint(1, len(text) - 1)]
        elif roll < 0.2:
            row[rng.choice(list(row))] = rng.choice([None, -1, "x", 1.5, [], {}])
            text = json.dumps(row)
        lines.append(text)
    write(tmp_path / "big.jsonl", lines)
    _, wh = ingest(tmp_path, tmp_path / "big.jsonl")
    log = read_table(wh, "ingest_log")
    assert log["lines_read"].to_list() == [3000]
    accepted = read_table(wh, "simultane_deal").height
    quarantined = read_table(wh, "quarantine").height
    assert accepted + quarantined == 3000 and quarantined >= 300
    assert log["rows_accepted"].to_list() == [accepted]


def test_a_match_started_too_late_is_cancelled_in_its_creation_month(tmp_path):
    # created 23:55 Paris on Oct 31, started 20 min later (Nov 1): cancelled, so October
    match = {
        "type": "ff.match",
        "match_id": "late",
        "match_type": "classique",
        "player_a": "ann",
        "player_b": "bob",
        "ranked": True,
        "created_at": "2026-10-31T22:55:00Z",
        "started_at": "2026-10-31T23:15:00Z",
    }
    on_time = match | {"match_id": "ok", "started_at": "2026-10-31T23:04:00Z"}
    path = tmp_path / "ff.jsonl"
    write(path, [json.dumps(match), json.dumps(on_time)])
    _, wh = ingest(tmp_path, path)
    # stored by the UTC month of their creation: no setting (time rules, time zone) moves them;
    # the published month (start, or creation when cancelled) is computed when scoring
    parts = dict(read_table(wh, "ff_match").select("match_id", "raw_month").iter_rows())
    assert parts == {"late": "2026-10", "ok": "2026-10"}


def test_unchanged_files_are_not_read_again(tmp_path, monkeypatch):
    path = tmp_path / "day.jsonl"
    write(path, GOOD)
    ingest(tmp_path, path)
    reads = []
    real_chunks = FileStream.chunks
    monkeypatch.setattr(FileStream, "chunks", lambda s: reads.append(s.name) or real_chunks(s))
    summary, _ = ingest(tmp_path, path)
    assert [f.status for f in summary.ingest.files] == ["already_ingested"] and reads == []
    write(path, GOOD[:2])  # new content under the same name: read, and a new delivery
    summary, wh = ingest(tmp_path, path)
    assert [f.status for f in summary.ingest.files] == ["ingested"] and reads == [path.name]
