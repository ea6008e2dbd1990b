"""Re-delivered records: the latest delivery wins, then the later line; the rest is reported."""

from __future__ import annotations

import json

import polars as pl

from transforms.deliveries import latest_delivery


def resolve(rows: list[dict], record_type: str = "ff.match"):
    frame = pl.LazyFrame(rows).with_columns(pl.lit("2026-11").alias("month"))
    kept, issues = latest_delivery(frame, record_type)
    return kept.collect(), issues.collect()


def test_the_latest_of_three_deliveries_wins_whatever_their_order():
    rows = [
        {"match_id": "m1", "delivery": 1, "line_no": 4, "x": "first"},
        {"match_id": "m1", "delivery": 3, "line_no": 1, "x": "third"},
        {"match_id": "m1", "delivery": 2, "line_no": 9, "x": "second"},
        {"match_id": "m2", "delivery": 1, "line_no": 5, "x": "alone"},
    ]
    kept, issues = resolve(rows)
    assert kept.sort("match_id").select("match_id", "x").rows() == [
        ("m1", "third"),
        ("m2", "alone"),
    ]
    assert sorted(issues["detail"]) == [
        "ff.match line 4 (delivery 1) replaced by delivery 3",
        "ff.match line 9 (delivery 2) replaced by delivery 3",
    ]
    assert {json.loads(k)["match_id"] for k in issues["keys"]} == {"m1"}
    assert issues["kind"].unique().to_list() == ["superseded_record"]


def test_within_one_delivery_the_later_line_wins():
    rows = [
        {"tournament_id": "T", "deal_no": 1, "player_id": "a", "delivery": 2, "line_no": 4, "x": 0},
        {"tournament_id": "T", "deal_no": 1, "player_id": "a", "delivery": 2, "line_no": 9, "x": 1},
        {"tournament_id": "T", "deal_no": 2, "player_id": "a", "delivery": 1, "line_no": 1, "x": 2},
    ]
    kept, issues = resolve(rows, "simultane.deal")
    assert sorted(kept["x"]) == [1, 2] and issues.height == 1


def test_missing_key_parts_compare_equal():
    # bridge results without a section: the same traveller line delivered twice
    base = {"event_id": "E", "section": None, "board": 1, "ns_pair": "1", "ew_pair": "2"}
    rows = [
        base | {"delivery": 1, "line_no": 3, "x": 1},
        base | {"delivery": 2, "line_no": 3, "x": 2},
    ]
    kept, issues = resolve(rows, "bridge.result")
    assert kept["x"].to_list() == [2] and issues.height == 1


def test_bridge_result_needs_a_score_but_a_passed_out_board_needs_none():
    from flows.ingest import validate_lines

    base = {"type": "bridge.result", "event_id": "E", "board": 1, "ew_pair": "2"}
    lines = [
        json.dumps(base | {"ns_pair": "1", "contract": "Pass"}),
        json.dumps(base | {"ns_pair": "3", "contract": "4S"}),
        json.dumps(base | {"ns_pair": "5", "contract": "4S", "declarer": "N"}),
        json.dumps(base | {"ns_pair": "7"}),
        json.dumps(base | {"ns_pair": "9", "adjusted": "A60/A40"}),
    ]
    v = validate_lines(lines, "x")
    assert v.accepted == 2
    assert [q["reason"] for q in v.quarantine] == [
        "missing field declarer",
        "missing field result",
        "missing score: give score_ns, contract+declarer+result, or adjusted",
    ]


def test_an_identical_copy_is_dropped_without_an_issue():
    rows = [
        {"match_id": "m1", "delivery": 1, "line_no": 4, "source_file": "a", "x": "same"},
        {"match_id": "m1", "delivery": 2, "line_no": 4, "source_file": "b", "x": "same"},
        {"match_id": "m2", "delivery": 1, "line_no": 5, "source_file": "a", "x": "old"},
        {"match_id": "m2", "delivery": 2, "line_no": 5, "source_file": "b", "x": "new"},
    ]
    kept, issues = resolve(rows)
    assert sorted(kept["x"]) == ["new", "same"] and set(kept["delivery"]) == {2}
    assert issues["detail"].to_list() == ["ff.match line 5 (delivery 1) replaced by delivery 2"]


def test_each_record_type_is_declared_once():
    """The bronze schema, the decoding and the reasons all come from the declaration."""
    import dataframely as dy

    from transforms.record_types import BRONZE_META, RECORD_TYPES

    deal = RECORD_TYPES["simultane.deal"]
    assert list(deal.schema())[:3] == ["tournament_id", "tournament_start", "deals_in_tournament"]
    assert list(deal.schema())[-5:] == list(BRONZE_META)
    assert deal.schema()["started_at"] == pl.Datetime("us", "UTC")
    assert [deal.kind(f) for f in ("player_id", "deal_no", "is_bot", "started_at")] == [
        "str",
        "int",
        "bool",
        "ts",
    ]
    assert RECORD_TYPES["bridge.event"].kind("options") == "obj"
    assert issubclass(deal.declaration, dy.Schema)
    rules = [name for name, _, _ in deal.rules()]
    assert rules.index("deal_no|min") < rules.index("status|check__choices")
    assert rules[-3:] == [
        "finished_needs_points",
        "deal_no_within_tournament",
        "finished_after_started",
    ]
    assert RECORD_TYPES["ff.deal"].parent.record_type == "ff.match"


def test_timestamps_read_like_python_reads_iso_8601():
    """Every layout the fast path or a fallback reads gives Python's instant; the others
    (no offset, impossible dates) are rejected like Python rejects or misreads them."""
    from datetime import datetime

    from flows.ingest import validate_lines

    texts = [
        "2026-11-03T20:12:01Z",
        "2026-11-03T20:12:01+01:00",
        "2026-11-03T20:12:01.5-02:30",
        "2026-11-03 20:12:01+00:00",
        "2026-11-03T20:12Z",
        "2026-11-03T20:12:01+0100",
        "2026-11-03T20:12:01.123456Z",
        "2026-11-03T20:12:01+01",
    ]
    lines = [
        json.dumps(
            {"type": "ff.disconnect", "match_id": "m", "player_id": f"p{i}", "disconnected_at": t}
        )
        for i, t in enumerate(texts)
    ]
    v = validate_lines(lines + [lines[0].replace("Z", "")], "x")
    got = v.frames()["ff.disconnect"].sort("line_no")["disconnected_at"].to_list()
    assert got == [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in texts]
    assert [q["reason"] for q in v.quarantine] == [
        "field disconnected_at is not an ISO-8601 timestamp with offset"
    ]
