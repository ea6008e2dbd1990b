"""The "Performance Simultané" chart: colours of the points, and the PNG."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from flows.chart import chart_simultane, point_colours

EVENING = datetime(2026, 9, 1, 19, tzinfo=UTC)


def blocks_of(player_id: str, dates: list[datetime]) -> pl.DataFrame:
    n = len(dates)
    return pl.DataFrame(
        {
            "player_id": [player_id] * n,
            "block_no": list(range(1, n + 1)),
            "ended_at": dates,
            "pct_cumul": [90.0 + (7 * k) % 23 for k in range(n)],
            "pct_actuel": [95.0 + k * 0.3 for k in range(n)],
            "in_window": [True] * n,
        },
        schema_overrides={"ended_at": pl.Datetime("us", "UTC")},
    )


# block 1 on Aug 1, block 2 on Aug 10, blocks 3..24 daily from Sep 1 to Sep 22
DATES = [EVENING - timedelta(days=31), EVENING - timedelta(days=22)] + [
    EVENING + timedelta(days=k) for k in range(22)
]
P1 = blocks_of("P1", DATES)


def test_colours_as_of_the_latest_result():
    # window: after Aug 8 19:00 (45 days before Sep 22); block 1 is older; of the 23 left the
    # 20 most recent are blocks 5..24, block 5 being the 20th most recent (next to leave)
    assert point_colours(P1, DATES[-1]) == ["grey"] * 4 + ["blue"] + ["red"] * 19


def test_colours_as_of_an_earlier_date_few_results():
    # as of Sep 3: blocks 1..5 are in the window (fewer than 20: no blue), later ones are not
    assert point_colours(P1, DATES[4]) == ["red"] * 5 + ["grey"] * 19


def test_colours_window_bound_is_45_days_exclusive():
    first = EVENING
    frame = blocks_of("P1", [first, first + timedelta(days=10)])
    exactly = first + timedelta(days=45)
    assert point_colours(frame, exactly) == ["grey", "red"]
    assert point_colours(frame, exactly - timedelta(seconds=1)) == ["red", "red"]


def test_colours_equal_dates_later_block_is_more_recent():
    frame = blocks_of("P1", [EVENING] * 3)
    assert point_colours(frame, EVENING, window_results=2) == ["grey", "blue", "red"]


def test_chart_writes_a_png(tmp_path):
    frame = pl.concat([P1, blocks_of("P2", DATES[:3])])
    out = chart_simultane(frame, "P1", tmp_path / "charts" / "P1.png")
    assert out == tmp_path / "charts" / "P1.png"
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000  # a drawn figure, not an empty canvas


def test_chart_unknown_player(tmp_path):
    with pytest.raises(ValueError, match="^no results for player P9$"):
        chart_simultane(P1, "P9", tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
