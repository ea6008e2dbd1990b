"""Indice and Victoire per month and per day, % actuel at month end (spec/simultane.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.simultane.monthly import daily, monthly
from transforms.simultane.options import SimultaneOptions

OPTS = SimultaneOptions()
TS = pl.Datetime("us", "UTC")
NOV = datetime(2026, 11, 2, 18, 0, tzinfo=UTC)

RESULT_SCHEMA = {
    "tournament_id": pl.String,
    "month": pl.String,
    "tournament_start": TS,
    "player_id": pl.String,
    "is_bot": pl.Boolean,
    "points": pl.Int64,
    "is_winner": pl.Boolean,
    "completed": pl.Boolean,
}
BLOCK_SCHEMA = {
    "player_id": pl.String,
    "block_no": pl.Int64,
    "ended_at": TS,
    "pct_cumul": pl.Float64,
}
NO_BLOCKS = pl.LazyFrame(schema=BLOCK_SCHEMA)


def result(points, player="x", day=0, won=False, completed=True, is_bot=False, start=None):
    start = start or NOV + timedelta(days=day)
    return {
        "tournament_id": f"T{day}-{points}-{player}",
        "month": "2026-11",
        "tournament_start": start,
        "player_id": player,
        "is_bot": is_bot,
        "points": points,
        "is_winner": won,
        "completed": completed,
    }


def results_frame(rows) -> pl.LazyFrame:
    return pl.DataFrame(rows, schema=RESULT_SCHEMA, orient="row").lazy()


def month_row(rows, blocks=NO_BLOCKS, player="x", **kw) -> dict:
    out = monthly(results_frame(rows), blocks, OPTS, **kw).collect()
    return out.filter(pl.col("player_id") == player).row(0, named=True)


def test_indice_before_20_results_is_sum_over_20():
    row = month_row([result(10), result(20), result(30)])
    assert row["indice"] == 3.0 and row["tournaments"] == 3


def test_indice_from_the_21st_result_replaces_the_worst_if_better():
    twenty = [result(10, day=i % 28) for i in range(20)]
    assert month_row(twenty)["indice"] == 10.0
    assert month_row([*twenty, result(5)])["indice"] == 10.0  # worse: does not enter
    assert month_row([*twenty, result(30)])["indice"] == 11.0  # (190 + 30) / 20
    assert month_row([*twenty, result(30)])["tournaments"] == 21


def test_only_completed_human_results_count():
    row = month_row(
        [result(40), result(100, completed=False), result(200, player="BOT", is_bot=True)]
    )
    assert row["indice"] == 2.0 and row["tournaments"] == 1
    out = monthly(
        results_frame([result(40), result(9, player="BOT", is_bot=True)]), NO_BLOCKS, OPTS
    ).collect()
    assert out["player_id"].to_list() == ["x"]


def test_victoire_is_best_10_wins_over_10():
    row = month_row([result(40, won=True), result(50, won=True), result(100)])
    assert row["victoire"] == 9.0 and row["wins"] == 2
    eleven = [result(10 + i, won=True) for i in range(11)]  # 10..20: 10 drops out
    row = month_row(eleven)
    assert row["victoire"] == sum(range(11, 21)) / 10 == 15.5
    assert row["wins"] == 11


def test_rank_indice_ties_share():
    out = monthly(
        results_frame([result(40, "a"), result(40, "b"), result(20, "c"), result(60, "d")]),
        NO_BLOCKS,
        OPTS,
    ).collect()
    assert out.select("player_id", "rank_indice").rows() == [
        ("d", 1),
        ("a", 2),
        ("b", 2),
        ("c", 4),
    ]


def test_rank_victoire_ranks_by_victoire_and_ties_share():
    won = [result(30, "a", won=True), result(50, "b", won=True), result(30, "c", won=True)]
    out = monthly(results_frame([*won, result(90, "d")]), NO_BLOCKS, OPTS).collect()
    ranks = dict(out.select("player_id", "rank_victoire").rows())
    assert ranks == {"b": 1, "a": 2, "c": 2, "d": 4}  # d: best Indice, no win
    assert dict(out.select("player_id", "rank_indice").rows())["d"] == 1


def test_pct_actuel_at_month_end_in_platform_time_zone():
    blocks = pl.LazyFrame(
        {
            "player_id": ["x", "x", "x"],
            "block_no": [1, 2, 3],
            # 30 Nov 22:30 UTC = 23:30 Paris (November); 23:30 UTC = 00:30 Paris (December)
            "ended_at": [
                datetime(2026, 11, 20, tzinfo=UTC),
                datetime(2026, 11, 30, 22, 30, tzinfo=UTC),
                datetime(2026, 11, 30, 23, 30, tzinfo=UTC),
            ],
            "pct_cumul": [80.0, 90.0, 10.0],
        },
        schema=BLOCK_SCHEMA,
    )
    row = month_row([result(40)], blocks)
    assert row["k"] == 2 and row["pct_actuel"] == 85.0 and row["representative"] is False
    # as of an earlier date (current month): latest data only
    row = month_row([result(40)], blocks, as_of=datetime(2026, 11, 25, tzinfo=UTC))
    assert row["k"] == 1 and row["pct_actuel"] == 80.0


def test_pct_actuel_default_as_of_is_latest_result():
    blocks = pl.LazyFrame(
        {
            "player_id": ["x", "y"],
            "block_no": [1, 1],
            "ended_at": [datetime(2026, 11, 3, tzinfo=UTC), datetime(2026, 11, 10, tzinfo=UTC)],
            "pct_cumul": [70.0, 60.0],
        },
        schema=BLOCK_SCHEMA,
    )
    rows = [result(40, "x"), result(30, "y")]
    assert month_row(rows, blocks, player="x")["pct_actuel"] == 70.0
    # months before the latest data are taken at their end
    october = month_row(
        [
            {
                **result(40, "x"),
                "month": "2026-10",
                "tournament_start": datetime(2026, 10, 30, tzinfo=UTC),
            }
        ],
        blocks,
        player="x",
    )
    assert october["k"] == 0 and october["pct_actuel"] is None


def test_daily_as_of_values():
    rows = [
        result(20, day=0),
        result(40, day=0),
        result(10, day=2, won=True),
        result(60, day=4, won=True),
        result(99, day=3, completed=False),  # not completed: no day row, no value
        result(5, player="y", day=1),
    ]
    out = daily(results_frame(rows), OPTS).collect()
    x = out.filter(pl.col("player_id") == "x")
    assert x.select("date", "indice", "victoire", "tournaments", "wins").rows() == [
        (date(2026, 11, 2), 3.0, 0.0, 2, 0),
        (date(2026, 11, 4), 3.5, 1.0, 3, 1),
        (date(2026, 11, 6), 6.5, 7.0, 4, 2),
    ]
    assert out.filter(pl.col("player_id") == "y")["indice"].to_list() == [0.25]
    # the day's last value is the month's
    month = monthly(results_frame(rows), NO_BLOCKS, OPTS).collect()
    assert month.filter(pl.col("player_id") == "x")["indice"].item() == 6.5


def test_daily_date_is_in_platform_time_zone():
    late = datetime(2026, 11, 2, 23, 30, tzinfo=UTC)  # 00:30 on 3 Nov in Paris
    out = daily(results_frame([result(20, start=late)]), OPTS).collect()
    assert out["date"].to_list() == [date(2026, 11, 3)]


@pytest.mark.parametrize("best, expected", [(20, 3.0), (2, 25.0)])
def test_indice_best_is_a_setting(best, expected):
    out = monthly(
        results_frame([result(10), result(20), result(30)]),
        NO_BLOCKS,
        SimultaneOptions(indice_best=best),
    ).collect()
    assert out["indice"].item() == expected


def test_daily_past_20_results_keeps_the_best_20():
    # day 0: 20 results of 10; day 1: a 5 (does not enter); day 2: a 30 (replaces a 10)
    rows = [result(10, day=0) for _ in range(20)]
    rows += [result(5, day=1), result(30, day=2)]
    # wins: 11 wins of 1..11 on day 0 and a win of 50 on day 3
    rows += [result(i, player="w", day=0, won=True) for i in range(1, 12)]
    rows += [result(50, player="w", day=3, won=True)]
    out = daily(results_frame(rows), OPTS).collect()
    x = out.filter(pl.col("player_id") == "x")
    assert x["indice"].to_list() == [10.0, 10.0, 11.0]
    assert x["tournaments"].to_list() == [20, 21, 22]
    w = out.filter(pl.col("player_id") == "w")
    assert w["victoire"].to_list() == [sum(range(2, 12)) / 10, (sum(range(3, 12)) + 50) / 10]
    assert w["wins"].to_list() == [11, 12]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 6), st.booleans(), st.sampled_from("ab")),
        min_size=1,
        max_size=40,
    )
)
def test_daily_matches_best_results_so_far(plays):
    opts = SimultaneOptions(indice_best=5, victoire_best=3)
    rows = [result(p, player=who, day=day, won=won) for p, day, won, who in plays]
    out = daily(results_frame(rows), opts).collect()
    for row in out.iter_rows(named=True):
        so_far = [
            (p, won)
            for p, day, won, who in plays
            if who == row["player_id"] and (NOV + timedelta(days=day)).date() <= row["date"]
        ]
        best = sorted((p for p, _ in so_far), reverse=True)[:5]
        best_won = sorted((p for p, won in so_far if won), reverse=True)[:3]
        assert row["indice"] == pytest.approx(sum(best) / 5)
        assert row["victoire"] == pytest.approx(sum(best_won) / 3)
        assert row["tournaments"] == len(so_far)
    month = monthly(results_frame(rows), NO_BLOCKS, opts).collect()
    last = out.group_by("player_id").agg(pl.col("indice").sort_by("date").last())
    assert dict(last.rows()) == pytest.approx(dict(month.select("player_id", "indice").rows()))


def test_indice_and_victoire_are_the_correctly_rounded_quotients():
    """27617 / 20 and 4814 / 10 are 1380.85 and 481.4 exactly as Python divides, in the monthly
    and in the daily table (a division by multiplying with 0.05 gives 1380.8500000000001)."""
    won = [result(p, day=i, won=True) for i, p in enumerate((1600, 1600, 1614))]
    others = [result(p, day=3 + i) for i, p in enumerate([1341] * 16 + [1347])]
    rows = won + others
    assert sum(r["points"] for r in rows) == 27617 and len(rows) == 20
    row = month_row(rows)
    assert (row["indice"], row["victoire"]) == (27617 / 20, 4814 / 10) == (1380.85, 481.4)
    last = daily(results_frame(rows), OPTS).collect().sort("date").row(-1, named=True)
    assert (last["indice"], last["victoire"]) == (1380.85, 481.4)
