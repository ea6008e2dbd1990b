"""Inline SVG charts, built for every player at once: the coordinates and the SVG elements of
all points come from column expressions, grouped per player (no Python loop over points).

- `simultane_curves`: the "Performance Simultané" curve as the seed draws it: each 20-deal
  result a point (red in the window of % actuel, blue the 20th most recent result, grey out of
  the window), the green line the moving average (% actuel) as of each result. The window is
  the `in_window` column of `simultane_blocks` (not recomputed here).
- `elo_curves`: a Face-à-Face player's ELO after each rated match.

Each point has a `<title>` (the browser's tooltip) and a `data-block`/`data-match` attribute.
"""

from __future__ import annotations

import polars as pl
from markupsafe import escape as html_escape

from flows.chart import IN_WINDOW, NEXT_TO_LEAVE, OUT_OF_WINDOW, PCT_ACTUEL
from flows.site.fmt import escape, local_time, num

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
    span = high - low
    return (
        pl.when(span != 0)
        .then(start + (value - low) / span * length)
        .otherwise(start + length / 2)
        .round(1)
    )


def _coord(expr: pl.Expr) -> pl.Expr:
    return expr.round(1).cast(pl.String)


def simultane_curves(blocks: pl.DataFrame, words: dict, lang: str, timezone: str,
                     window_results: int) -> pl.DataFrame:  # fmt: skip
    """One row per player: player_id, svg (the curve's markup)."""
    if blocks.is_empty():
        return pl.DataFrame(schema={"player_id": pl.String, "svg": pl.String})
    t = pl.col("ended_at").dt.epoch("s").cast(pl.Float64)
    frame = blocks.sort("player_id", "block_no").with_columns(
        colour=curve_colour(window_results),
        _t=t,
    )
    values = pl.concat_list(pl.col("pct_cumul"), pl.col("pct_actuel"), pl.lit(100.0))
    frame = frame.with_columns(
        _lo=(values.list.min().min().over("player_id") / 10).floor() * 10,
        _hi=(values.list.max().max().over("player_id") / 10).ceil() * 10,
        _t0=pl.col("_t").min().over("player_id"),
        _t1=pl.col("_t").max().over("player_id"),
    ).with_columns(
        _hi=pl.when(pl.col("_hi") <= pl.col("_lo")).then(pl.col("_lo") + 10).otherwise("_hi"),
    )
    x = _scale(pl.col("_t"), pl.col("_t0"), pl.col("_t1"), LEFT, PLOT_W)
    y_of = lambda v: _scale(v, pl.col("_hi"), pl.col("_lo"), TOP, PLOT_H)  # noqa: E731 (y down)
    date = local_time(pl.col("ended_at"), timezone, "%Y-%m-%d")
    point = pl.concat_str(
        pl.lit('<circle class="point" r="4.5" cx="'),
        _coord(x),
        pl.lit('" cy="'),
        _coord(y_of(pl.col("pct_cumul"))),
        pl.lit('" fill="'),
        pl.col("colour"),
        pl.lit('" data-block="'),
        pl.col("block_no").cast(pl.String),
        pl.lit('" tabindex="0"><title>'),
        date,
        pl.lit(f" — {words['pct_cumul']} "),
        num(pl.col("pct_cumul"), 1, lang),
        pl.lit(f" · {words['pct_actuel']} "),
        num(pl.col("pct_actuel"), 1, lang),
        pl.lit(f" ({words['block_no']} "),
        pl.col("block_no").cast(pl.String),
        pl.lit(")</title></circle>"),
    )
    line_point = pl.when(pl.col("pct_actuel").is_not_null()).then(
        pl.concat_str(_coord(x), pl.lit(","), _coord(y_of(pl.col("pct_actuel"))))
    )
    order = pl.col("block_no")
    per_player = frame.group_by("player_id").agg(
        points=point.sort_by(order).str.join(""),
        line=line_point.sort_by(order).drop_nulls().str.join(" "),
        lo=pl.col("_lo").first(),
        hi=pl.col("_hi").first(),
        first=date.sort_by(order).first(),
        last=date.sort_by(order).last(),
    )
    return _svgs(per_player, words["curve"])


def _grid(lo: float, hi: float, reference: float | None, step: float) -> str:
    """Horizontal lines every `step` (the reference value, 100 % or ELO 1600, dashed)."""
    parts = []
    value = lo
    while value <= hi + 1e-9:
        y = TOP + (hi - value) / (hi - lo) * PLOT_H
        shown = f"{value:.0f}"
        cls = "ref" if reference is not None and abs(value - reference) < 1e-9 else "grid"
        parts.append(
            f'<line class="{cls}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{shown}</text>'
        )
        value += step
    return "".join(parts)


def _step(lo: float, hi: float) -> float:
    span = hi - lo
    for step in (5, 10, 20, 25, 50, 100, 200, 250, 500):
        if span / step <= 8:
            return step
    return 1000


def _svgs(per_player: pl.DataFrame, title: str, reference: float = 100.0,
          line_colour: str = PCT_ACTUEL) -> pl.DataFrame:  # fmt: skip
    """player_id, svg: each player's chart around its points (built on columns), its line
    (`x,y x,y …`, empty: none) and the grid of its value range `lo`..`hi`. The grid depends on
    the range only: it is drawn once per distinct range (a few dozen in a site) and joined."""
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
    line = pl.col("line").fill_null("")
    svg = pl.concat_str(
        pl.lit(f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" '
               f'aria-label="{html_escape(title)}" xmlns="http://www.w3.org/2000/svg">'),
        pl.col("_grid"),
        pl.lit(f'<text class="tick" x="{LEFT}" y="{axis_y}">'), pl.col("first"),
        pl.lit(f'</text><text class="tick" x="{WIDTH - RIGHT}" y="{axis_y}" text-anchor="end">'),
        pl.col("last"), pl.lit("</text>"),
        pl.when(line != "").then(pl.concat_str(
            pl.lit(f'<polyline class="line" fill="none" stroke="{line_colour}" '
                   'stroke-width="2.5" points="'), line, pl.lit('"/>'),
        )).otherwise(pl.lit("")),
        pl.col("points"), pl.lit("</svg>"),
    )  # fmt: skip
    return per_player.join(grids, on=["lo", "hi"], how="left", nulls_equal=True).select(
        "player_id", svg.alias("svg")
    )


def elo_curves(elo: pl.DataFrame, words: dict, lang: str, timezone: str) -> pl.DataFrame:
    """player_id -> svg of ELO after each rated match (points with the match as tooltip)."""
    if elo.is_empty():
        return pl.DataFrame(schema={"player_id": pl.String, "svg": pl.String})
    frame = elo.sort("player_id", "ended_at", "elo_seq").with_columns(
        _i=pl.int_range(pl.len()).over("player_id").cast(pl.Float64),
    )
    values = pl.concat_list(pl.col("elo_before"), pl.col("elo_after"))
    frame = frame.with_columns(
        _lo=(values.list.min().min().over("player_id") / 10).floor() * 10,
        _hi=(values.list.max().max().over("player_id") / 10).ceil() * 10,
        _n=pl.len().over("player_id").cast(pl.Float64),
    ).with_columns(
        _hi=pl.when(pl.col("_hi") <= pl.col("_lo")).then(pl.col("_lo") + 10).otherwise("_hi"),
    )
    x = _scale(pl.col("_i"), pl.lit(0.0), pl.col("_n") - 1, LEFT, PLOT_W)
    y = _scale(pl.col("elo_after"), pl.col("_hi"), pl.col("_lo"), TOP, PLOT_H)
    date = local_time(pl.col("ended_at"), timezone, "%Y-%m-%d")
    point = pl.concat_str(
        pl.lit('<circle class="point" r="4" cx="'),
        _coord(x),
        pl.lit('" cy="'),
        _coord(y),
        pl.lit(f'" fill="{IN_WINDOW}" data-match="'),
        escape(pl.col("match_id")),
        pl.lit('" tabindex="0"><title>'),
        date,
        pl.lit(" — "),
        escape(pl.col("match_id")),
        pl.lit(f" · {words['elo']} "),
        num(pl.col("elo_before"), 0, lang),
        pl.lit(" → "),
        num(pl.col("elo_after"), 0, lang),
        pl.lit("</title></circle>"),
    )
    order = pl.col("_i")
    per_player = frame.group_by("player_id").agg(
        points=point.sort_by(order).str.join(""),
        line=pl.concat_str(_coord(x), pl.lit(","), _coord(y)).sort_by(order).str.join(" "),
        lo=pl.col("_lo").first(),
        hi=pl.col("_hi").first(),
        first=date.sort_by(order).first(),
        last=date.sort_by(order).last(),
    )
    return _svgs(per_player, words["elo_over_time"], 1600.0, "#1f5fa8")
