"""Implausible and unrepresentable values: each line gets its exact reason, the other lines of
its file and the other files of the night are published, nothing is lost."""

from __future__ import annotations

import pytest

from .cases import (
    WINDOW,
    accepted,
    assert_total,
    deal,
    dumps,
    event,
    ff_deal,
    good_file,
    match,
    penalty,
    reasons,
    result,
    run,
    table,
    write,
)

CASES = [
    # (bad line, reason)
    (dumps(deal(made=2**63)), "points_made 9223372036854775808 out of range 0..3000"),
    (dumps(deal()).replace('"points_made": 100', '"points_made": 1e30'),
     "points_made 1e30 out of range 0..3000"),
    (dumps(deal(made=-(2**63) - 1)), "negative points made"),
    (dumps(deal(made=2**63 - 1)), "points_made 9223372036854775807 out of range 0..3000"),
    (dumps(deal(started_at="0001-01-01T00:30:00+01:00")),
     f"started_at 0001-01-01T00:30:00+01:00 outside the plausible window {WINDOW}"),
    (dumps(deal(started_at="9999-12-31T23:30:00-01:00")),
     f"started_at 9999-12-31T23:30:00-01:00 outside the plausible window {WINDOW}"),
    (dumps(deal(tournament_start="1999-12-31T23:59:59Z")),
     f"tournament_start 1999-12-31T23:59:59Z outside the plausible window {WINDOW}"),
    (dumps(deal(finished_at="2026-12-03T00:00:00Z")),
     f"finished_at 2026-12-03T00:00:00Z outside the plausible window {WINDOW}"),
    (dumps(deal()).replace('"points_made": 100', '"points_made": NaN'),
     "field points_made is NaN: not a number"),
    (dumps(deal()).replace('"points_made": 100', '"points_made": -Infinity'),
     "field points_made is -Infinity: not a number"),
    (dumps(deal(comment=float("inf"))), "field comment is Infinity: not a number"),
    (dumps(deal(comment={"a": [1, float("nan")]})), "field comment contains NaN: not a number"),
    (dumps(deal(deals_in_tournament=10**12)),
     "deals_in_tournament 1000000000000 out of range 1..200"),
    (dumps(deal(deal_no=3)), "deal_no 3 out of range 1..2"),
    (dumps(deal(made=4000)), "points_made 4000 out of range 0..3000"),
    (dumps(deal(made=17.5)), "field points_made must be an integer"),
    (dumps(deal(is_bot="false")), "field is_bot must be true or false"),
    (dumps(deal(player_id=7)), "field player_id must be a string"),
    (dumps(deal(started_at="2026-11-03T18:00:05")),
     "field started_at is not an ISO-8601 timestamp with offset"),
    (dumps(deal(started_at=1762192805)), "field started_at must be an ISO-8601 timestamp"),
    ('{"type": 123}', "field type must be a string (got 123)"),
    ('{"type": ["simultane.deal"]}', 'field type must be a string (got ["simultane.deal"])'),
    ('{"tournament_id": "T1"}', "missing field type"),
    ('{"type": "simultane.deal", "player_id": "\\ud800"}',
     "lone surrogate \\ud800 in a string: not valid Unicode"),
    ('{"type": "simultane.deal", "player_id": "\\udc00x"}',
     "lone surrogate \\udc00 in a string: not valid Unicode"),
    ('"just a string"', "not a JSON object"),
    ("[1, 2]", "not a JSON object"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "reason"), CASES, ids=[r for _, r in CASES])
def test_a_bad_value_spoils_its_line_only(tmp_path, line, reason):
    path = write(tmp_path / "day.jsonl", [dumps(deal("bob")), line, dumps(deal("cat"))])
    other = good_file(tmp_path)
    _, wh = run(tmp_path, path, other)
    assert reasons(wh, path) == [(2, reason)]
    assert accepted(wh, "simultane_deal", path) == [1, 3]
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    assert_total(wh, path, other)


def test_values_that_are_fine(tmp_path):
    lines = [
        dumps(deal("a", made=17.0)),  # an integral number is an integer
        dumps(deal("b", started_at="2026-11-03T19:00:05.250+01:00")),
        dumps(deal("c", started_at="2026-11-03 18:00:05Z")),
        dumps(deal("d", started_at="2026-11-03T19:00+0100")),
        dumps(deal("e", finished_at=None, status="timeout", points_made=None)),
        dumps(deal("f")).replace('"player_id": "f"', '"player_id": "\\u0066"'),  # escaped
        dumps(deal("g", made=3000, conceded=0)),
        dumps(deal("h")).replace('"simultane.deal"', '"simultane\\u002edeal"'),  # escaped type
    ]
    path = write(tmp_path / "day.jsonl", lines)
    _, wh = run(tmp_path, path)
    assert reasons(wh) == []
    rows = table(wh, "simultane_deal").sort("line_no")
    assert rows["player_id"].to_list() == list("abcdefgh")
    assert rows["points_made"].to_list()[0] == 17
    started = rows["started_at"].dt.to_string("%H:%M:%S%.3f").to_list()
    assert started[1:4] == ["18:00:05.250", "18:00:05.000", "18:00:00.000"]


def test_bridge_and_face_a_face_bounds(tmp_path):
    bridge = write(
        tmp_path / "bridge.jsonl",
        [
            dumps(event()),
            dumps(result(1, score=7600)),
            dumps(result(2, score=-7610)),
            dumps(penalty(amount=float("nan"))),
            dumps(penalty(pair="2", amount=1e30)),
            dumps(penalty(pair="3", amount=2.5)),
            dumps(event("E2", options={"vp": float("nan")})),
            dumps(event("E3", date="9999-12-31")),
            dumps(result(1000, ns="3")),
            dumps(result(3, ns="4", ew="4")),
        ],
    )
    ff = write(
        tmp_path / "ff.jsonl",
        [
            dumps(match()),
            dumps(ff_deal(deal_no=17)),
            dumps(ff_deal(deal_no=2, points_made=2**64)),
            dumps(ff_deal(deal_no=3)),
        ],
    )
    _, wh = run(tmp_path, bridge, ff)
    assert reasons(wh, bridge) == [
        (3, "score_ns -7610 out of range -7600..7600"),
        (4, "field amount is NaN: not a number"),
        (5, "amount 1e+30 out of range -1000..1000"),
        (7, "field options contains NaN: not a number"),
        (8, f"date 9999-12-31 outside the plausible window {WINDOW}"),
        (9, "board 1000 out of range 1..999"),
        (10, "ns_pair and ew_pair are the same"),
    ]
    assert reasons(wh, ff) == [
        (2, "deal_no 17 out of range 1..16"),
        (3, "points_made 18446744073709551616 out of range 0..3000"),
    ]
    assert_total(wh, bridge, ff)


def test_timestamps_read_the_fast_way_as_the_general_layout_reads_them():
    """`decode.typed` reads `"…Z"` timestamps with Polars' fixed-layout parser and the others
    with TS_FORMAT: the same value, or the same null, as TS_FORMAT alone gives every text."""
    import polars as pl

    from flows.ingest import decode
    from transforms.record_types import RECORD_TYPES

    texts = [
        '"2026-07-27T08:00:17Z"', '"2026-07-27T10:00:00+02:00"', '"2026-07-27T10:00:00-00:00"',
        '"2024-02-29T10:00:00Z"', '"2026-02-29T10:00:00Z"', '"2026-07-27T24:00:00Z"',
        '"2026-12-31T23:59:60Z"', '"0000-01-01T00:00:00Z"', '"9999-12-31T23:59:59Z"',
        '"2026-13-01T00:00:00Z"', '"2026-01-01T00:60:00Z"', '"2026-01-01T00:00:00z"',
        '"2026-01-01t00:00:00Z"', '"2026-01-01 00:00:00Z"', '"2026-01-01T00:00:00.5Z"',
        '"2026-01-01T00:00:00.123456789Z"', '"2026-01-01T00:00:00+0200"', '"2026-01-01T00:00Z"',
        '"2026-1-01T00:00:00Z"', '"+2026-01-01T00:00:00Z"', '" 2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00 Z"', '"2026-01-01T00:00:00ZZ"', '2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00Z', '"Z"', '""', "17", "null", None,
    ]  # fmt: skip
    rt = RECORD_TYPES["simultane.deal"]
    field = next(f for f in rt.fields if rt.kind(f) == "ts")
    rows = pl.DataFrame(
        {f"_t_{f}": texts if f == field else [None] * len(texts) for f in rt.fields},
        schema={f"_t_{f}": pl.String for f in rt.fields},
    )
    got = decode.typed(rt, rows, None)[field]
    general = pl.col(f"_t_{field}").str.to_datetime(
        decode.TS_FORMAT, strict=False, time_unit="us", time_zone="UTC"
    )
    expected = rows.select(general).to_series()
    assert got.dtype == expected.dtype
    assert got.cast(pl.Int64).to_list() == expected.cast(pl.Int64).to_list()  # year 0 too
    assert got.is_not_null().sum() >= 10  # the valid ones are read
