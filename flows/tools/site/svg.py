"""Inline SVG charts, built for every player at once: the coordinates and the SVG elements of
all points come from column expressions (`markup` templates), grouped per player (no Python
loop over points). Coordinates are whole units of a 640 × 300 view box.

- `simultane_curves`: the "Performance Simultané" curve as the seed draws it: each 20-deal
  result a point (red in the window of % actuel, blue the 20th most recent result, grey out of
  the window), the green line the moving average (% actuel) as of each result. The window is
  the `in_window` column of `simultane_blocks` (not recomputed here).
- `elo_curves`: a Face-à-Face player's ELO after each rated match.

Each point is a circle with a `<title>` (the browser's tooltip), reachable by the keyboard.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from markupsafe import escape as html_escape

from flows.tools.chart import IN_WINDOW, NEXT_TO_LEAVE, OUT_OF_WINDOW
from flows.tools.site import markup
from flows.tools.site.fmt import escape, local_time, minute, number, text
from flows.tools.site.render import Block
from flows.tools.site.tables import Rows, grouped_rows

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 12, 34
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM


def curve_colour(window_results: int) -> pl.Expr:
    """Colour of each block (rows of `simultane_blocks`): red in the window, blue for the
    `window_results`-th most recent result (the oldest in the window) when the window is full,
    grey outside."""
    inside = pl.col("in_window").fill_null(False)
    full = inside.sum().over("player_id") == window_results
    oldest_inside = pl.col("block_no") == pl.col("block_no").filter(inside).min().over("player_id")
    return (
        pl.when(inside & full & oldest_inside)
        .then(pl.lit(NEXT_TO_LEAVE))
        .when(inside)
        .then(pl.lit(IN_WINDOW))
        .otherwise(pl.lit(OUT_OF_WINDOW))
    )


def _scale(value: pl.Expr, low: pl.Expr, high: pl.Expr, start: float, length: float) -> pl.Expr:
    """`value` placed between `start` and `start + length` as `low`..`high`, a whole unit."""
    span = high - low
    return (
        pl.when(span != 0)
        .then(start + (value - low) / span * length)
        .otherwise(start + length / 2)
        .round(0)
        .cast(pl.Int32)
    )


@dataclass
class Curves:
    """Charts of many players: `frames` (player_id, `_svg`: the chart up to its line: view
    box, grid, dates), `line` (the points of each player's line: the `points` of the template's
    `<polyline>`), `points` (each player's circles); the template closes the `<svg>`."""

    frames: pl.DataFrame
    line: Rows
    points: Rows

    def by_player(self) -> dict[str, dict]:
        """{player_id: what a page's template shows of the player's chart: `svg` (its opening,
        a `Block`), `line` (its line's points, or None), `points` (its circles)}."""
        line, points = self.line.blocks(), self.points.blocks()
        svgs = markup.texts(self.frames["_svg"])
        view, ends = svgs.view, svgs.ends.tolist()
        return {
            player: {
                "svg": Block(view[start:end]),
                "line": line.get(player),
                "points": points.get(player, ""),
            }
            for player, start, end in zip(
                self.frames["player_id"].to_list(), [0, *ends[:-1]], ends, strict=True
            )
        }


NO_CHART = {"svg": None, "line": None, "points": ""}


def _per_player(frame: pl.DataFrame, *aggs: pl.Expr) -> pl.DataFrame:
    """Aggregates of each player's rows put back on each row (`frame` sorted by player: a
    group-by in order and a gather, not a window per column)."""
    per = frame.group_by("player_id", maintain_order=True).agg(*aggs, pl.len().alias("_len"))
    at = np.repeat(np.arange(per.height), per["_len"].to_numpy())
    return pl.concat([frame, per.drop("player_id", "_len")[at]], how="horizontal")


def _point_open(radius: str, fill: pl.Expr, timezone: str) -> list:
    """The row format of a chart's point up to its tooltip's first words: the circle at
    (`_x`, `_y`), its colour, and the local day of `ended_at`."""
    day = minute(pl.col("ended_at"), timezone, "%Y-%m-%d")
    where = ["<circle cx=", text(pl.col("_x")), " cy=", text(pl.col("_y"))]
    return [*where, f" r={radius} fill=", fill, " tabindex=0><title>", day]


def simultane_curves(
    blocks: pl.DataFrame, words: dict, lang: str, timezone: str, window_results: int
) -> Curves:
    """The Performance Simultané curve of every player of `blocks` (sorted by player, block)."""
    frame = _placed_blocks(blocks, window_results)
    point = [
        *_point_open("4.5", pl.col("_colour"), timezone),
        f" — {words['pct_cumul']} ",
        number(pl.col("pct_cumul"), 1, lang),
        f" · {words['pct_actuel']} ",
        number(pl.col("pct_actuel"), 1, lang),
        f" ({words['block_no']} ",
        text(pl.col("block_no")),
        ")</title></circle>",
    ]
    points = grouped_rows(frame, ["player_id"], point)
    on_line = frame.filter(pl.col("pct_actuel").is_not_null())
    line = grouped_rows(on_line, ["player_id"], [text(pl.col("_x")), ",", text(pl.col("_ya")), " "])
    per_player = frame.group_by("player_id", maintain_order=True).agg(
        lo=pl.col("_lo").first(),
        hi=pl.col("_hi").first(),
        first=pl.col("ended_at").first(),
        last=pl.col("ended_at").last(),
    )
    return Curves(_svgs(per_player, words["curve"], timezone), line, points)


def _placed_blocks(blocks: pl.DataFrame, window_results: int) -> pl.DataFrame:
    """`blocks` with each point's place (`_x`, `_y`; `_ya`: the moving average's) in its
    player's chart (its value range `_lo`..`_hi`, its time range) and its colour."""
    inside = pl.col("in_window").fill_null(False)
    frame = blocks.with_columns(
        _t=pl.col("ended_at").dt.epoch("s").cast(pl.Float64),
        _low=pl.min_horizontal("pct_cumul", "pct_actuel", pl.lit(100.0)),
        _high=pl.max_horizontal("pct_cumul", "pct_actuel", pl.lit(100.0)),
    )
    frame = _per_player(
        frame,
        ((pl.col("_low").min() / 10).floor() * 10).alias("_lo"),
        ((pl.col("_high").max() / 10).ceil() * 10).alias("_hi"),
        pl.col("_t").min().alias("_t0"),
        pl.col("_t").max().alias("_t1"),
        inside.sum().alias("_inside"),
        pl.col("block_no").filter(inside).min().alias("_oldest"),
    ).with_columns(
        _hi=pl.when(pl.col("_hi") <= pl.col("_lo")).then(pl.col("_lo") + 10).otherwise("_hi"),
    )
    # the seed's colours: red in the window, blue its oldest when full, grey out of it
    colour = (
        pl.when(
            inside
            & (pl.col("_inside") == window_results)
            & (pl.col("block_no") == pl.col("_oldest"))
        )
        .then(pl.lit(NEXT_TO_LEAVE))
        .when(inside)
        .then(pl.lit(IN_WINDOW))
        .otherwise(pl.lit(OUT_OF_WINDOW))
    )
    frame = frame.with_columns(
        _colour=colour,
        _x=_scale(pl.col("_t"), pl.col("_t0"), pl.col("_t1"), LEFT, PLOT_W),
        _y=_scale(pl.col("pct_cumul"), pl.col("_hi"), pl.col("_lo"), TOP, PLOT_H),  # y down
        _ya=_scale(pl.col("pct_actuel"), pl.col("_hi"), pl.col("_lo"), TOP, PLOT_H),
    )
    return frame


def _grid(lo: float, hi: float, reference: float | None, step: float) -> str:
    """Horizontal lines every `step` (the reference value, 100 % or ELO 1600, dashed)."""
    parts = []
    value = lo
    while value <= hi + 1e-9:
        y = round(TOP + (hi - value) / (hi - lo) * PLOT_H)
        cls = "ref" if reference is not None and abs(value - reference) < 1e-9 else "grid"
        parts.append(
            f"<line class={cls} x1={LEFT} x2={WIDTH - RIGHT} y1={y} y2={y} />"
            f"<text class=tick x={LEFT - 6} y={y + 4} text-anchor=end>{value:.0f}</text>"
        )
        value += step
    return "".join(parts)


def _step(lo: float, hi: float) -> float:
    span = hi - lo
    for step in (5, 10, 20, 25, 50, 100, 200, 250, 500):
        if span / step <= 8:
            return step
    return 1000


def _svgs(
    per_player: pl.DataFrame, title: str, timezone: str, reference: float = 100.0
) -> pl.DataFrame:
    """player_id, `_svg`: each chart's opening (view box, the grid of its value range `lo`..
    `hi`, its first and last dates). The grid depends on the range only: it is drawn once per
    distinct range (a few dozen in a site) and joined."""
    ranges = per_player.select("lo", "hi").unique()
    grids = pl.DataFrame(
        {
            "lo": ranges["lo"],
            "hi": ranges["hi"],
            "_grid": [_grid(lo, hi, reference, _step(lo, hi)) for lo, hi in ranges.iter_rows()],
        },
        schema={"lo": ranges.schema["lo"], "hi": ranges.schema["hi"], "_grid": pl.String},
    )
    axis_y = HEIGHT - BOTTOM + 20
    day = "%Y-%m-%d"
    svg = pl.concat_str(
        pl.lit(
            f'<svg class=chart viewBox="0 0 {WIDTH} {HEIGHT}" role=group '
            f'aria-label="{html_escape(title)}" xmlns="http://www.w3.org/2000/svg">'
        ),
        pl.col("_grid"),
        pl.lit(f"<text class=tick x={LEFT} y={axis_y}>"),
        local_time(pl.col("first"), timezone, day),
        pl.lit(f"</text><text class=tick x={WIDTH - RIGHT} y={axis_y} text-anchor=end>"),
        local_time(pl.col("last"), timezone, day),
        pl.lit("</text>"),
    )
    return per_player.join(grids, on=["lo", "hi"], how="left", nulls_equal=True).select(
        "player_id", svg.alias("_svg")
    )


def elo_curves(elo: pl.DataFrame, words: dict, lang: str, timezone: str) -> Curves:
    """The ELO after each rated match of every player of `elo` (points with the match as
    tooltip)."""
    frame = elo.sort("player_id", "ended_at", "elo_seq").with_columns(
        _low=pl.min_horizontal("elo_before", "elo_after"),
        _high=pl.max_horizontal("elo_before", "elo_after"),
    )
    frame = _per_player(
        frame,
        ((pl.col("_low").min() / 10).floor() * 10).alias("_lo"),
        ((pl.col("_high").max() / 10).ceil() * 10).alias("_hi"),
        pl.len().cast(pl.Float64).alias("_n"),
    )
    sizes = frame.group_by("player_id", maintain_order=True).len()["len"].to_numpy()
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    frame = frame.with_columns(
        _i=pl.Series(np.arange(frame.height) - starts, dtype=pl.Float64),
        _hi=pl.when(pl.col("_hi") <= pl.col("_lo")).then(pl.col("_lo") + 10).otherwise("_hi"),
    )
    frame = frame.with_columns(
        _x=_scale(pl.col("_i"), pl.lit(0.0), pl.col("_n") - 1, LEFT, PLOT_W),
        _y=_scale(pl.col("elo_after"), pl.col("_hi"), pl.col("_lo"), TOP, PLOT_H),
    )
    point = [
        *_point_open("4", pl.lit(IN_WINDOW), timezone),
        " — ",
        escape(pl.col("match_id")),
        f" · {words['elo']} ",
        number(pl.col("elo_before"), 0, lang),
        " → ",
        number(pl.col("elo_after"), 0, lang),
        "</title></circle>",
    ]
    points = grouped_rows(frame, ["player_id"], point)
    line = grouped_rows(frame, ["player_id"], [text(pl.col("_x")), ",", text(pl.col("_y")), " "])
    per_player = frame.group_by("player_id", maintain_order=True).agg(
        lo=pl.col("_lo").first(),
        hi=pl.col("_hi").first(),
        first=pl.col("ended_at").first(),
        last=pl.col("ended_at").last(),
    )
    return Curves(_svgs(per_player, words["elo_over_time"], timezone, 1600.0), line, points)
