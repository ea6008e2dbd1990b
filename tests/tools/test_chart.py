"""The "Performance Simultané" chart: colours from `in_window`, why nothing is drawn, the file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import matplotlib.pyplot as plt
import polars as pl
import pytest

from flows.tools import chart
from flows.tools.chart import chart_simultane, nothing_to_draw, point_colours

EVENING = datetime(2026, 9, 1, 19, tzinfo=UTC)


def blocks_of(player_id: str, dates: list[datetime], in_window: list[bool] | None = None):
    n = len(dates)
    return pl.DataFrame(
        {
            "player_id": [player_id] * n,
            "block_no": list(range(1, n + 1)),
            "ended_at": dates,
            "pct_cumul": [90.0 + (7 * k) % 23 for k in range(n)],
            "pct_actuel": [95.0 + k * 0.3 for k in range(n)],
            "in_window": in_window if in_window is not None else [True] * n,
        },
        schema_overrides={"ended_at": pl.Datetime("us", "UTC")},
    )


# block 1 on Aug 1, block 2 on Aug 10, blocks 3..24 daily from Sep 1 to Sep 22
DATES = [EVENING - timedelta(days=31), EVENING - timedelta(days=22)] + [
    EVENING + timedelta(days=k) for k in range(22)
]


def test_colours_follow_the_tables_in_window_and_blue_is_the_oldest_of_a_full_window():
    frame = blocks_of("P1", DATES, [False] * 4 + [True] * 20)
    assert point_colours(frame, window_results=20) == ["grey"] * 4 + ["blue"] + ["red"] * 19


def test_colours_no_blue_while_the_window_is_not_full():
    frame = blocks_of("P1", DATES[:5], [True] * 5)
    assert point_colours(frame, window_results=20) == ["red"] * 5


def test_colours_are_never_recomputed_from_dates():
    # the table says block 1 (31 days old) is out and block 3 in: the chart follows it even
    # though a 45-day window recomputed from the dates would say otherwise
    frame = blocks_of("P1", DATES[:3], [False, True, True])
    assert point_colours(frame, window_results=2) == ["grey", "blue", "red"]


def test_colours_equal_dates_lower_block_is_older():
    frame = blocks_of("P1", [EVENING] * 3, [True] * 3)
    assert point_colours(frame, window_results=3) == ["blue", "red", "red"]


def test_chart_writes_a_png(tmp_path):
    frame = pl.concat([blocks_of("P1", DATES), blocks_of("P2", DATES[:3])])
    out = chart_simultane(frame, "P1", tmp_path / "P1.png")
    assert out == tmp_path / "P1.png"
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000  # a drawn figure, not an empty canvas
    assert [p.name for p in tmp_path.iterdir()] == ["P1.png"]  # no temporary file left


def test_chart_writes_svg_when_the_name_ends_in_svg(tmp_path):
    out = chart_simultane(blocks_of("P1", DATES), "P1", tmp_path / "P1.SVG")
    root = ET.fromstring(out.read_bytes())
    assert root.tag.endswith("svg")


def test_the_legend_is_outside_the_axes_and_high_points_stay_visible(tmp_path, monkeypatch):
    # results at 125-131 % used to sit under the legend in the upper corner
    frame = blocks_of("P1", DATES).with_columns(
        pl.Series("pct_cumul", [125.0 + (k % 7) for k in range(len(DATES))])
    )
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to inspect it
    chart_simultane(frame, "P1", tmp_path / "P1.png")
    (fig,) = figures
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    legend_box = ax.get_legend().get_window_extent(renderer)
    assert legend_box.x0 >= axes_box.x1  # entirely right of the plotting area
    assert not legend_box.overlaps(axes_box)
    low, high = ax.get_ylim()
    assert low < 100 and high > 131  # every point inside the visible range
    assert fig.bbox.contains(legend_box.x1 - 1, legend_box.y0 + 1)  # and on the image
    plt.close(fig)


@pytest.mark.parametrize(
    "deals, is_bot, message",
    [
        (0, False, "no results for player P9"),
        (12, False, "P9 has 12 scored deals, no full block of 20 yet"),
        (1, False, "P9 has 1 scored deal, no full block of 20 yet"),
        (0, True, "P9 is the bot: the bot has no curve"),
    ],
)
def test_nothing_to_draw_says_why(tmp_path, deals, is_bot, message):
    assert nothing_to_draw("P9", deals, is_bot, 20).startswith(message)
    with pytest.raises(ValueError, match=f"^{message}"):
        chart_simultane(
            blocks_of("P1", DATES), "P9", tmp_path / "x.png", scored_deals=deals, is_bot=is_bot
        )
    assert not (tmp_path / "x.png").exists()


def test_no_folder_is_created(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        chart_simultane(blocks_of("P1", DATES), "P1", tmp_path / "new" / "x.png")
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"must end in \.png, \.svg, \.pdf"):
        chart_simultane(blocks_of("P1", DATES), "P1", tmp_path / "x.jpg")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    out = tmp_path / "P1.png"
    out.write_bytes(b"old")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(chart.os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        chart_simultane(blocks_of("P1", DATES), "P1", out)
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["P1.png"]
