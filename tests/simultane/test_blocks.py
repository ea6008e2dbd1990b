"""% cumul blocks of 20 deals and the % actuel moving average (spec/simultane.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.simultane.blocks import blocks, numbered_deals, open_deals, pct_actuel_at
from transforms.simultane.options import SimultaneOptions

OPTS = SimultaneOptions()
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
TS = pl.Datetime("us", "UTC")

DEAL_SCHEMA = {
    "tournament_id": pl.String,
    "deal_no": pl.Int64,
    "player_id": pl.String,
    "is_bot": pl.Boolean,
    "scored": pl.Boolean,
    "played_at": TS,
    "pct": pl.Float64,
}


def deal(tournament, deal_no, minute, pct, player="x", is_bot=False, scored=True) -> dict:
    return {
        "tournament_id": tournament,
        "deal_no": deal_no,
        "player_id": player,
        "is_bot": is_bot,
        "scored": scored,
        "played_at": T0 + timedelta(minutes=minute),
        "pct": pct if scored else None,
    }


def deal_frame(rows) -> pl.LazyFrame:
    return pl.DataFrame(rows, schema=DEAL_SCHEMA, orient="row").lazy()


def test_block_cut_across_tournaments_with_ordering_ties():
    rows = []
    for i in range(1, 16):
        # T1 deal i and T2 deal i end at the same minute: T1 first (tournament_id)
        rows.append(deal("T2", i, i, 50.0))
        # T1 deal 11 ends at the same minute as deal 10: after it (deal_no)
        rows.append(deal("T1", i, 10 if i == 11 else i, 100.0 + i))
    rows.append(deal("T0", 1, 0, 0.0, scored=False))  # not scored: not in any block
    rows.append(deal("T1", 1, 1, 100.0, player="BOT", is_bot=True))  # the bot: no blocks
    out = blocks(deal_frame(rows), OPTS).collect()
    # 30 scored deals: one full block; the last 10 deals are pending
    assert out.height == 1
    block = out.row(0, named=True)
    # block 1 = T1 deals 1..11 (101..111) and T2 deals 1..9 (50)
    assert block["pct_cumul"] == pytest.approx((sum(range(101, 112)) + 9 * 50) / 20)
    assert block["pct_cumul"] == pytest.approx(80.8)
    assert block["block_no"] == 1 and block["player_id"] == "x"
    assert block["started_at"] == T0 + timedelta(minutes=1)
    assert block["ended_at"] == T0 + timedelta(minutes=10)
    assert block["month"] == "2026-11"
    assert block["k"] == 1 and block["pct_actuel"] == pytest.approx(80.8)
    assert block["representative"] is False and block["in_window"] is True


def test_unfinished_deals_count_zero_in_the_block():
    rows = [deal("T1", i, i, 0.0 if i <= 5 else 100.0) for i in range(1, 21)]
    out = blocks(deal_frame(rows), OPTS).collect()
    assert out["pct_cumul"].to_list() == [75.0]


def results_frame(values: list[float], dates: list[datetime], player: str = "x") -> pl.LazyFrame:
    return pl.DataFrame(
        {
            "player_id": [player] * len(values),
            "block_no": list(range(1, len(values) + 1)),
            "ended_at": dates,
            "pct_cumul": values,
        },
        schema={
            "player_id": pl.String,
            "block_no": pl.Int64,
            "ended_at": TS,
            "pct_cumul": pl.Float64,
        },
    ).lazy()


def actuel(results: pl.LazyFrame, as_of: datetime, player: str = "x") -> dict:
    points = pl.LazyFrame(
        {"player_id": [player], "as_of": [as_of]}, schema={"player_id": pl.String, "as_of": TS}
    )
    return pct_actuel_at(results, points, OPTS).collect().row(0, named=True)


DAYS = [T0 + timedelta(days=i) for i in range(25)]
# 25 results, one a day: 70, 71, ..., 94 with a few extremes placed inside
VALUES = [70.0 + i for i in range(25)]
VALUES[7] = 150.0  # best of the last 20 (from result 6 on)
VALUES[12] = 10.0  # worst


@pytest.mark.parametrize(
    "k, expected",
    [
        (1, 70.0),  # plain mean
        (2, 70.5),  # plain mean of 70, 71
        (3, 71.0),  # drop 72 and 70: 71
        (20, (sum(VALUES[:20]) - 150.0 - 10.0) / 18),  # drop best and worst, 18 others
        (25, (sum(VALUES[5:25]) - 150.0 - 10.0) / 18),  # the 20 most recent only
    ],
)
def test_pct_actuel_by_number_of_results(k, expected):
    got = actuel(results_frame(VALUES, DAYS), DAYS[k - 1])
    assert got["k"] == min(k, 20)
    assert got["pct_actuel"] == pytest.approx(expected)
    assert got["representative"] is (k >= 20)


def test_pct_actuel_window_is_45_days_boundary_excluded():
    t = T0 + timedelta(days=60)
    dates = [
        t - timedelta(days=45, seconds=1),  # older: out
        t - timedelta(days=45),  # exactly t - 45 days: out
        t - timedelta(days=45) + timedelta(microseconds=1),  # in
        t,  # t itself: in
        t + timedelta(microseconds=1),  # after t: out
    ]
    got = actuel(results_frame([10.0, 20.0, 30.0, 40.0, 50.0], dates), t)
    assert got["k"] == 2 and got["pct_actuel"] == 35.0


def test_pct_actuel_without_results_in_window():
    got = actuel(results_frame([10.0], [T0]), T0 + timedelta(days=50))
    assert got["k"] == 0 and got["pct_actuel"] is None and got["representative"] is False
    got = actuel(results_frame([10.0], [T0]), T0 - timedelta(days=1))
    assert got["k"] == 0 and got["pct_actuel"] is None


def test_blocks_publish_pct_actuel_as_of_each_result_and_in_window():
    # 25 blocks of 20 deals, one block a day, block i all at pct VALUES[i]
    rows = []
    for b, value in enumerate(VALUES):
        for d in range(1, 21):
            rows.append(deal(f"T{b:02d}", d, b * 1440 + d, value))
    out = blocks(deal_frame(rows), OPTS).collect()
    assert out["block_no"].to_list() == list(range(1, 26))
    assert out["pct_cumul"].to_list() == VALUES
    assert out["k"].to_list() == [*range(1, 21), 20, 20, 20, 20, 20]
    assert out["pct_actuel"][2] == pytest.approx(71.0)
    assert out["pct_actuel"][24] == pytest.approx((sum(VALUES[5:25]) - 160.0) / 18)
    # as of the latest result: the 20 most recent are in the window
    assert out["in_window"].to_list() == [False] * 5 + [True] * 20
    # as of 45 days after block 10's date: only blocks 11.. are within (t - 45 d, t]
    later = out["ended_at"][9] + timedelta(days=45)
    out_later = blocks(deal_frame(rows), OPTS, as_of=later).collect()
    assert out_later["in_window"].to_list() == [False] * 10 + [True] * 15


def brute_blocks(rows: list[dict], opts: SimultaneOptions) -> list[tuple]:
    """The spec's blocks and % actuel for one player, by plain Python."""
    mine = sorted(
        (r for r in rows if r["scored"] and not r["is_bot"]),
        key=lambda r: (r["played_at"], r["tournament_id"], r["deal_no"]),
    )
    size = opts.block_deals
    full = [mine[i : i + size] for i in range(0, len(mine) - size + 1, size)]
    dated = [(b[-1]["played_at"], sum(r["pct"] for r in b) / size) for b in full]
    out = []
    for t, value in dated:
        window = [v for d, v in dated if t - timedelta(days=opts.window_days) < d <= t]
        window = window[-opts.window_results :]
        k = len(window)
        actuel = (sum(window) - max(window) - min(window)) / (k - 2) if k >= 3 else sum(window) / k
        out.append((t, value, actuel, k))
    return out


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 400), st.floats(0, 200), st.booleans()),
        min_size=0,
        max_size=90,
    )
)
def test_blocks_match_the_rule_by_hand(plays):
    opts = SimultaneOptions(block_deals=4, window_results=5, window_days=3)
    rows, seen = [], set()
    for tournament, hour, pct, scored in plays:
        deal_no = sum(1 for t, _ in seen if t == tournament) + 1
        seen.add((tournament, deal_no))
        # hours collide often: ties by tournament_id then deal_no
        rows.append(deal(f"T{tournament}", deal_no, hour * 60, pct, scored=scored))
    out = blocks(deal_frame(rows), opts).collect()
    expected = brute_blocks(rows, opts)
    assert out.height == len(expected)
    for got, (t, value, actuel_value, k) in zip(out.iter_rows(named=True), expected, strict=True):
        assert got["ended_at"] == t
        assert got["pct_cumul"] == pytest.approx(value, abs=1e-8)
        assert got["pct_actuel"] == pytest.approx(actuel_value, abs=1e-8)
        assert got["k"] == k


def test_open_block_at_each_month_end_with_ties_and_late_deals_of_a_partition():
    """The open block at a month's end: the deals after the last full block ending by then
    (a tie at the block's last minute falls after it by tournament_id), and the deals played
    later of the partitions up to that month (a tournament started on November 30 UTC whose
    deal is played in December, Paris time)."""
    opts = SimultaneOptions(block_deals=3)
    nov = T0 + timedelta(days=10)
    rows = [
        deal("A", 1, 0, 10.0),
        deal("A", 2, 1, 20.0),
        deal("A", 3, 2, 30.0),  # block 1 ends here, in November
        deal("B", 1, 2, 40.0),  # same minute, after A by tournament_id: open in November
        {**deal("C", 1, 0, 50.0), "played_at": datetime(2026, 11, 30, 23, 30, tzinfo=UTC)},
        {**deal("D", 1, 0, 60.0), "played_at": datetime(2026, 12, 20, tzinfo=UTC)},
    ]
    raw = {"A": "2026-11", "B": "2026-11", "C": "2026-11", "D": "2026-12"}
    frame = deal_frame(rows).with_columns(
        played_at=pl.when(pl.col("tournament_id").is_in(["A", "B"]))
        .then(pl.col("played_at") + (nov - T0))
        .otherwise("played_at"),
        raw_month=pl.col("tournament_id").replace_strict(raw),
    )
    numbered = numbered_deals(frame, opts)
    got = open_deals(numbered, opts, "2026-10", "2027-01").collect()
    by_month = {
        m: sorted(part["tournament_id"].to_list())
        for (m,), part in got.group_by("month", maintain_order=True)
    }
    # C is played on December 1 in Paris but belongs to November's partition; block 2
    # (B, C, D) ends in December, so nothing is open after it
    assert by_month == {"2026-11": ["B", "C"]}
    assert got.columns == ["player_id", "played_at", "tournament_id", "deal_no", "pct",
                           "raw_month", "month"]  # fmt: skip
