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
