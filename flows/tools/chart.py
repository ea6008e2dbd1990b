"""The "Performance Simultané" chart of one player, from the `simultane_blocks` table.

Every result (% cumul of a block of `block_deals` deals, at the block's date) is a point: red
for a result in the window of % actuel, blue for the oldest result of a full window (the next
one to leave it), grey outside the window. Which results are in the window is the table's
`in_window` column (computed once, by `transforms/simultane/blocks.py`, with the run's
settings and as-of date): the chart never recomputes it. The green line is % actuel as of each
result's date.

When there is nothing to draw the chart says why (`nothing_to_draw`): an unknown player, the
bot (its deals are the reference, it has no % cumul), or a player whose deals do not yet make
a full block.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from transforms.option_checks import PLATFORM_TIMEZONE

IN_WINDOW = "red"
NEXT_TO_LEAVE = "blue"
OUT_OF_WINDOW = "grey"
PCT_ACTUEL = "green"
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def _matplotlib():
    """pyplot and matplotlib.dates, imported when a chart is drawn: importing matplotlib costs
    ~0.5 s, which every command that only needs the colours above (the site) paid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    return plt, mdates


def point_colours(blocks: pl.DataFrame, window_results: int = 20) -> list[str]:
    """Colour of each result of one player's `blocks`, in the frame's row order.

    Red when `in_window`; of those, when the window is full (`window_results` results), the
    oldest (earlier `ended_at`, then lower `block_no`) is blue; grey when not `in_window`.
    """
    ranked = blocks.with_row_index("_row")
    window = ranked.filter("in_window").sort(["ended_at", "block_no"])
    oldest = window["_row"][0] if window.height == window_results else None
    return [
        (NEXT_TO_LEAVE if row == oldest else IN_WINDOW) if inside else OUT_OF_WINDOW
        for row, inside in zip(ranked["_row"], ranked["in_window"], strict=True)
    ]


def nothing_to_draw(player_id: str, scored_deals: int, is_bot: bool, block_deals: int) -> str:
    """Why a player has no curve (the chart's one-line message)."""
    if is_bot:
        return f"{player_id} is the bot: the bot has no curve (its deals are the 100 % reference)"
    if scored_deals:
        plural = "s" if scored_deals > 1 else ""
        return (
            f"{player_id} has {scored_deals} scored deal{plural}, "
            f"no full block of {block_deals} yet"
        )
    return f"no results for player {player_id}"


def chart_simultane(
    blocks: pl.DataFrame,
    player_id: str,
    out: Path,
    *,
    scored_deals: int = 0,
    is_bot: bool = False,
    window_days: int = 45,
    window_results: int = 20,
    block_deals: int = 20,
    timezone: str = PLATFORM_TIMEZONE,
) -> Path:
    """Draw the player's curve at `out` (.png, .svg or .pdf, by its name); returns `out`.

    `blocks` holds `simultane_blocks` rows (other players' rows are ignored); `scored_deals`
    and `is_bot` only explain an empty curve. The folder of `out` must exist (none is
    created); nothing is written if drawing fails. Dates are shown in `timezone`. The
    window's size (`window_days`, `window_results`) is only written in the title.
    """
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"{out}: the name must end in {', '.join(FORMATS)}")
    if not out.absolute().parent.is_dir():
        raise ValueError(f"{out}: folder {out.absolute().parent} does not exist")
    mine = blocks.filter(pl.col("player_id") == player_id).sort("ended_at", "block_no")
    if mine.is_empty():
        raise ValueError(nothing_to_draw(player_id, scored_deals, is_bot, block_deals))
    as_of = mine["ended_at"].max()
    colours = point_colours(mine, window_results)
    dates = mine["ended_at"].to_list()
    pct_cumul = mine["pct_cumul"].to_list()

    plt, mdates = _matplotlib()
    fig, ax = plt.subplots(figsize=(11, 5), dpi=100)
    ax.axhline(100, color="black", linewidth=0.6, linestyle=":", label="bot (100 %)")
    pct_actuel = mine["pct_actuel"].cast(pl.Float64).fill_null(float("nan")).to_list()
    ax.plot(dates, pct_actuel, color=PCT_ACTUEL, linewidth=2, label="% actuel")
    labels = {
        IN_WINDOW: f"result in the window (% cumul of {block_deals} deals)",
        NEXT_TO_LEAVE: f"{window_results}th most recent result (next to leave)",
        OUT_OF_WINDOW: "result outside the window",
    }
    for colour, label in labels.items():
        picked = [i for i, c in enumerate(colours) if c == colour]
        if picked:
            ax.scatter(
                [dates[i] for i in picked],
                [pct_cumul[i] for i in picked],
                color=colour,
                s=36,
                zorder=3,
                label=label,
            )
    latest = mine["pct_actuel"][-1]
    shown = "—" if latest is None else f"{latest:.1f}"
    zone = ZoneInfo(timezone)
    local_as_of = as_of.astimezone(zone) if as_of.tzinfo else as_of
    ax.set_title(
        f"Performance Simultané — {player_id}\n% actuel {shown} as of {local_as_of:%Y-%m-%d}"
        f" (window: {window_days} days, {window_results} results)"
    )
    ax.set_xlabel(f"date of the result ({block_deals}th deal of the block)")
    ax.set_ylabel("% (100 = the bot)")
    ax.margins(y=0.08)
    locator = mdates.AutoDateLocator(tz=zone)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))
    ax.grid(True, alpha=0.3)
    # the legend sits right of the axes: it never hides a point, however high the results
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")
    data = io.BytesIO()
    try:
        fig.tight_layout()
        fig.savefig(data, format=fmt)
    finally:
        plt.close(fig)
    _write_whole(out, data.getvalue())
    return out


def chart_published_player(warehouse, player_id: str, out: Path, options) -> Path:
    """`chart_simultane` of a player of the published tables (`duplirank chart simultane`):
    their blocks, and how many deals they have scored (to say why there is nothing to draw).
    `options` are the run's `SimultaneOptions`."""
    from flows.tools.query import run_sql

    blocks = run_sql(
        warehouse,
        "select * from simultane_blocks where player_id = $player",
        {"player": player_id},
    )
    deals = run_sql(
        warehouse,
        "select count(*) filter (where not is_bot and scored) as scored,"
        " count(*) filter (where is_bot) as bot"
        " from simultane_deal_results where player_id = $player",
        {"player": player_id},
    )
    return chart_simultane(
        blocks,
        player_id,
        out,
        scored_deals=deals["scored"][0],
        is_bot=deals["bot"][0] > 0,
        window_days=options.window_days,
        window_results=options.window_results,
        block_deals=options.block_deals,
        timezone=options.timezone,
    )


def _write_whole(path: Path, data: bytes) -> None:
    """Write `path` through a temporary file beside it: a failed write leaves nothing behind
    (and an existing file as it was)."""
    with tempfile.NamedTemporaryFile(dir=path.absolute().parent, delete=False) as tmp:
        try:
            tmp.write(data)
            tmp.close()
            os.replace(tmp.name, path)
        except BaseException:
            Path(tmp.name).unlink(missing_ok=True)
            raise
