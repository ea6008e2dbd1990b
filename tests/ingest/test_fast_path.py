"""The fast path (`flows.ingest.fast`: compact JSON lines read by Polars' JSON reader) gives
exactly what the general path gives: the same bronze rows, the same quarantine reasons."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.ingest import IngestOptions, Window, fast, validate_lines
from transforms.record_types import RECORD_TYPES

from .cases import AS_OF, deal, event, ff_deal, match, penalty, result
from .test_fuzz import ODD_VALUES

WINDOW = Window.around(IngestOptions(), AS_OF)
RECORDS = [deal("ann"), deal("bob", 2), deal("BOT"), match(), ff_deal(), event(), result(),
           penalty(amount=1.5)]  # fmt: skip


def compact(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def both_paths(monkeypatch, lines: list[str | bytes], window: Window | None = WINDOW):
    """(fast path on, fast path off, lines the fast path read) of the same lines."""
    taken = []
    read = fast.read_compact

    def spy(*args, **kwargs):
        out = read(*args, **kwargs)
        taken.extend(n for rows in out.values() for n in rows["_pos"].to_list())
        return out

    with monkeypatch.context() as m:
        m.setattr(fast, "read_compact", spy)
        on = validate_lines(lines, "f.jsonl", window=window)
    with monkeypatch.context() as m:
        m.setattr(fast, "read_compact", lambda *args, **kwargs: {})
        off = validate_lines(lines, "f.jsonl", window=window)
    return on, off, taken


def assert_same(on, off) -> None:
    assert on.lines_read == off.lines_read
    a, b = on.frames(), off.frames()
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name].equals(b[name], null_equal=True), name
    assert on.quarantine == off.quarantine


EDGE_CASE_TEXTS = [
    compact(deal("ann")),
    compact(deal("été")),  # raw UTF-8 in a string: read on the fast path
    compact(deal("\u00e9t\\u00e9")),  # an escape: general path
    compact(deal("a\\\"b")),
    compact(deal("ann", made=-0)),
    compact(deal("ann")).replace('"points_made":100', '"points_made":-0'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":1e2'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":100.0'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":"100"'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":null'),
    compact(deal("ann")).replace('"points_made":100,', ""),
    compact(deal("ann")).replace('"points_made":100', '"points_made":100,"points_made":7'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":100,"zzz":1'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":9223372036854775808'),
    compact(deal("ann")).replace('"points_made":100', '"points_made":NaN'),
    compact(deal("ann")).replace('"is_bot":false', '"is_bot":0'),
    compact(deal("ann")).replace('"player_id":"ann"', '"player_id":1'),
    compact(deal("ann")).replace('"player_id":"ann"', '"player_id":""'),
    compact(deal("ann", made=99999999)),
    compact(deal("ann", deal_no=3)),  # beyond deals_in_tournament
    compact(deal("ann", finished_at="2026-11-03T18:01:05+01:00")),  # another time layout
    compact(deal("ann", finished_at="2026-11-03 18:01:05")),
    compact(deal("ann", finished_at="9999-12-31T23:30:00Z")),  # outside the window
    compact(deal("ann", finished_at="2026-13-45T99:00:00Z")),
    compact(deal("ann", status="quit")),
    compact({k: v for k, v in deal("ann").items() if k != "finished_at"}),
    compact(dict(reversed(list(deal("bob").items())))),  # any key order
    compact(deal("ann")) + " ",
    " " + compact(deal("ann")),
    compact(deal("ann"))[:-1] + ',"x":{}}',
    compact(deal("ann"))[:-1] + ',}',
    compact(deal("ann")),  # (line 31) the same record as line 0: a same-key copy
    compact(match()),
    compact(match(ranked=1)),
    compact(ff_deal()),
    compact(ff_deal(points_made=-1)),
    compact(event()),
    compact(event(date="2026-02-30")),
    compact(result()),
    compact(result(score=9000)),
    compact(penalty(amount=1.5)),
    '{"type":"simultane.deal"}',
    '{"type":123}',
    "[1,2]",
    "{",
    "",
]
# each deal its own player (else most would be same-key copies of the first, whatever they hold)
EDGE_CASES = [line.replace('"player_id":"ann"', f'"player_id":"p{0 if n == 31 else n}"')
              for n, line in enumerate(EDGE_CASE_TEXTS)]  # fmt: skip


def test_edge_cases_read_the_same_on_both_paths(monkeypatch):
    on, off, taken = both_paths(monkeypatch, EDGE_CASES)
    assert_same(on, off)
    assert on.accepted > 5 and len(taken) >= on.accepted - 5  # the fast path does read


def test_without_a_window_too(monkeypatch):
    on, off, _ = both_paths(monkeypatch, EDGE_CASES, window=None)
    assert_same(on, off)


def test_a_chunk_polars_refuses_is_read_in_blocks(monkeypatch):
    """A NaN (valid for DuckDB, refused by Polars' reader) spoils only its block."""
    lines = [compact(deal(f"p{n}")) for n in range(200)]
    lines[17] = lines[17].replace('"points_made":100', '"points_made":NaN')
    on, off, taken = both_paths(monkeypatch, lines)
    assert_same(on, off)
    assert len(taken) >= 180


@st.composite
def compact_mutated(draw) -> str:
    record = dict(draw(st.sampled_from(RECORDS)))
    if "player_id" in record and draw(st.booleans()):  # mostly not a same-key copy
        record["player_id"] = f"p{draw(st.integers(0, 10**6))}"
    kind = draw(st.sampled_from(["same", "odd", "drop", "order", "text"]))
    key = draw(st.sampled_from(sorted(record)))
    if kind == "odd":
        line = compact(record).replace(
            f'"{key}":{compact(record[key])}', f'"{key}":{draw(st.sampled_from(ODD_VALUES))}'
        )
        return line
    if kind == "drop":
        record.pop(key)
    elif kind == "order":
        items = list(record.items())
        record = dict(draw(st.permutations(items)))
    elif kind == "text" and isinstance(record[key], str):
        record[key] = draw(st.text(max_size=12))
    return compact(record)


@settings(max_examples=30, deadline=None)
@given(st.lists(compact_mutated(), min_size=1, max_size=40))
def test_mutated_compact_lines_read_the_same_on_both_paths(lines):
    with pytest.MonkeyPatch.context() as monkeypatch:
        on, off, _ = both_paths(monkeypatch, lines)
    assert_same(on, off)


def test_the_fast_path_takes_only_plain_types():
    names = set(fast.fast_types(RECORD_TYPES))
    assert "simultane.deal" in names and "bridge.penalty" not in names  # a float: many spellings
