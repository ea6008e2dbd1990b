"""Indice and Victoire per month and per day, % actuel at month end (spec/simultane.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

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
