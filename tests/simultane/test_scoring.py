"""Per-deal rules of spec/simultane.md: P vs the bot, points/top/bulle, unfinished deals."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.simultane.options import SimultaneOptions
from transforms.simultane.scoring import deal_issues, score_deals

from .helpers import bot, deal_row, frame

OPTS = SimultaneOptions()


def scored(rows: list[dict], opts: SimultaneOptions = OPTS) -> dict[str, dict]:
    out = score_deals(frame(rows), opts).collect()
    return {r["player_id"]: r for r in out.iter_rows(named=True)}


def test_pct_worked_examples():
    # bot bids 100 and makes 110 card points: F_b = 210, L_b = 52
    res = scored(
        [
            bot(210, 52),
            deal_row("same_contract_120", 220, 42),
            deal_row("fails", 0, 262),
            deal_row("all_passed", 0, 0),
        ]
    )
    assert round(res["same_contract_120"]["pct"], 2) == 103.82
    assert round(res["fails"]["pct"], 2) == 19.85
    assert round(res["all_passed"]["pct"], 2) == 39.69
    assert res["BOT"]["pct"] == 100.0


def test_pct_is_100_when_nothing_at_stake_on_both_tables():
    res = scored([bot(0, 0), deal_row("a", 0, 0)])
    assert res["a"]["pct"] == 100.0 and res["a"]["points"] == 1


@pytest.mark.parametrize(
    "humans, expected_points",
    [
        # P values: bot = 100, (220, 42) -> 103.8, (0, 262) -> 19.8 ... ; None = unfinished
        ([(220, 42)], [0, 2]),  # 100, 103.8
        ([(220, 42), (220, 42)], [0, 3, 3]),  # 100, 103.8, 103.8
        ([(88, 0), None], [4, 2, 0]),  # 100, 80, unfinished
        ([None, None], [4, 0, 0]),  # 100, unfinished, unfinished
    ],
)
def test_points_table(humans, expected_points):
    rows = [bot(210, 52)]
    for i, h in enumerate(humans):
        if h is None:
            rows.append(deal_row(f"h{i}", None, None, status="timeout", seconds=None))
        else:
            rows.append(deal_row(f"h{i}", *h))
    res = scored(rows)
    got = [res["BOT"]["points"]] + [res[f"h{i}"]["points"] for i in range(len(humans))]
    if humans[0] == (88, 0):
        assert res["h0"]["pct"] == 80.0  # 100 + 100 * (88 - 158) / (88 + 262)
    assert got == expected_points
    n = len(rows)
    assert {r["top"] for r in res.values()} == {2 * (n - 1)}


def test_top_and_bulle_flags():
    res = scored(
        [
            bot(210, 52),
            deal_row("a", 220, 42),
            deal_row("b", 220, 42),
            deal_row("c", 0, 262),
            deal_row("d", None, None, status="disconnected", seconds=None),
        ]
    )
    assert {p for p, r in res.items() if r["is_top"]} == {"a", "b"}
    assert {p for p, r in res.items() if r["is_bulle"]} == {"d"}
    assert res["d"]["pct"] == 0.0 and res["d"]["points"] == 0


def test_unfinished_from_status_and_timestamps():
    res = scored(
        [
            bot(210, 52),
            # logged timeout although points and finished_at are there: unfinished
            deal_row("timeout", 220, 42, status="timeout"),
            # logged finished but no finished_at: unfinished
            deal_row("no_end", 220, 42, seconds=None),
            deal_row("at_limit", 220, 42, seconds=300),
            deal_row("over_limit", 220, 42, seconds=301),
        ]
    )
    assert [res[p]["finished"] for p in ("timeout", "no_end", "at_limit", "over_limit")] == [
        False,
        False,
        True,
        False,
    ]
    assert res["at_limit"]["pct"] == pytest.approx(103.8168, abs=1e-4)
    assert res["over_limit"]["pct"] == 0.0
    assert [res[p]["points"] for p in ("BOT", "timeout", "no_end", "at_limit", "over_limit")] == [
        6,
        0,
        0,
        8,
        0,
    ]
    # played_at falls back to started_at when finished_at is missing
    assert res["no_end"]["played_at"] == res["no_end"]["started_at"]


def test_time_limit_is_a_setting():
    res = scored(
        [bot(210, 52), deal_row("a", 220, 42, seconds=301)], SimultaneOptions(deal_time_limit_s=400)
    )
    assert res["a"]["finished"] is True


def test_finished_pct_zero_beats_unfinished():
    res = scored(
        [
            bot(262, 0),
            deal_row("zero", 0, 262),  # P = 200 (0 + 0) / 524 = 0
            deal_row("unfinished", None, None, status="quit", seconds=None),
        ]
    )
    assert res["zero"]["pct"] == 0.0 and res["unfinished"]["pct"] == 0.0
    assert res["zero"]["points"] == 2
    assert res["unfinished"]["points"] == 0
    assert res["BOT"]["points"] == 4
    assert res["zero"]["is_bulle"] is False and res["unfinished"]["is_bulle"] is True


def test_deal_without_finished_bot_row_is_not_scored_and_reported():
    rows = [
        bot(210, 52, deal_no=1, deals=3),
        deal_row("a", 220, 42, deal_no=1, deals=3),
        # deal 2: no bot row at all
        deal_row("a", 220, 42, deal_no=2, deals=3),
        # deal 3: bot row unfinished
        bot(210, 52, deal_no=3, deals=3, status="timeout"),
        deal_row("a", 220, 42, deal_no=3, deals=3),
    ]
    out = score_deals(frame(rows), OPTS).collect().sort("deal_no", "player_id")
    a = out.filter(pl.col("player_id") == "a")
    assert a["scored"].to_list() == [True, False, False]
    assert a["pct"].to_list()[1:] == [None, None]
    assert a["points"].to_list() == [2, None, None]
    assert a["top"].to_list() == [2, None, None]
    issues = deal_issues(frame(rows), OPTS).collect()
    no_bot = issues.filter(pl.col("kind") == "no_bot_reference")
    assert [json.loads(k) for k in no_bot["keys"]] == [
        {"tournament_id": "T1", "deal_no": "2"},
        {"tournament_id": "T1", "deal_no": "3"},
    ]
    assert no_bot["month"].to_list() == ["2026-11", "2026-11"]
    assert "no bot row" in no_bot["detail"][0] and "bot unfinished" in no_bot["detail"][1]


def test_several_bot_rows_and_varying_deal_counts_are_reported():
    rows = [
        deal_row("BOT1", 210, 52, is_bot=True, deals=2),
        deal_row("BOT2", 300, 0, is_bot=True, deals=2),
        deal_row("a", 220, 42, deals=2),
        bot(210, 52, deal_no=2, deals=3),  # this tournament's rows disagree: 2 or 3 deals
        deal_row("a", 220, 42, deal_no=2, deals=3),
    ]
    res = scored(rows)  # deal 1: the reference is the lowest player_id, BOT1
    assert res["BOT1"]["pct"] == 100.0 and res["a"]["pct"] == pytest.approx(103.82, abs=0.01)
    issues = deal_issues(frame(rows), OPTS).collect()
    assert issues.select("kind", "keys", "detail").rows() == [
        (
            "deals_in_tournament_varies",
            '{"tournament_id":"T1"}',
            "deals_in_tournament given as 2, 3: 3 is used",
        ),
        (
            "several_bot_rows",
            '{"tournament_id":"T1","deal_no":"1"}',
            "2 bot rows (BOT1, BOT2): scored against the finished one of the lowest player_id",
        ),
    ]


def test_float_noise_does_not_break_ties():
    # 100 + 100 * 1 / 3 computed from different stakes: equal P, shared points
    res = scored([bot(100, 50), deal_row("a", 125, 25), deal_row("b", 125, 25)])
    assert res["a"]["points"] == res["b"]["points"] == 3


# --- properties ----------------------------------------------------------------------------

side = st.tuples(st.integers(0, 700), st.integers(0, 700))


def brute_points(pcts: list[float | None]) -> list[int]:
    """The spec's formula, pair by pair (None = unfinished)."""
    out = []
    for i, p in enumerate(pcts):
        if p is None:
            out.append(0)
            continue
        out.append(
            sum(
                2
                if q is None or round(q, 9) < round(p, 9)
                else 1
                if round(q, 9) == round(p, 9)
                else 0
                for j, q in enumerate(pcts)
                if j != i
            )
        )
    return out


@settings(max_examples=60, deadline=None)
@given(
    deals=st.lists(
        st.tuples(side, st.lists(st.tuples(side, st.booleans()), min_size=0, max_size=7)),
        min_size=1,
        max_size=4,
    )
)
def test_properties_points_pct_bot(deals):
    rows = []
    for deal_no, (bot_side, humans) in enumerate(deals, start=1):
        kw = {"deal_no": deal_no, "deals": len(deals), "tournament": f"T{deal_no % 2}"}
        rows.append(bot(*bot_side, **kw))
        for i, (h, unfinished) in enumerate(humans):
            if unfinished:
                rows.append(deal_row(f"p{i}", None, None, status="timeout", seconds=None, **kw))
            else:
                rows.append(deal_row(f"p{i}", *h, **kw))
    out = score_deals(frame(rows), OPTS).collect()
    assert out.height == len(rows)
    assert out["scored"].all()
    assert out.filter("is_bot")["pct"].to_list() == [100.0] * len(deals)
    assert out["pct"].min() >= 0.0 and out["pct"].max() <= 200.0
    for _, group in out.group_by(["tournament_id", "deal_no"]):
        group = group.sort("player_id")
        n = group.height
        pcts = [p if f else None for p, f in zip(group["pct"], group["finished"], strict=True)]
        assert group["points"].to_list() == brute_points(pcts)
        assert set(group["top"]) == {2 * (n - 1)}
        if group["finished"].all():
            assert group["points"].sum() == n * (n - 1)
        finished = group.filter("finished")
        best = finished["pct"].round(9).max()
        assert set(group.filter("is_top")["player_id"]) == set(
            finished.filter(pl.col("pct").round(9) == best)["player_id"]
        )
