"""The "Performance Simultané" chart of one player, from the `simultane_blocks` table.

Every result (% cumul of a 20-deal block, at the block's date) is a point: red inside the
window of % actuel as of the latest result, blue for the 20th most recent result (the next
one to leave the window), grey outside the window (older than `window_days` days, or beyond
the `window_results` most recent). The green line is % actuel as of each result's date.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402  (after choosing the backend)
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

IN_WINDOW = "red"
NEXT_TO_LEAVE = "blue"
OUT_OF_WINDOW = "grey"
PCT_ACTUEL = "green"


def point_colours(
    blocks: pl.DataFrame, as_of, window_days: int = 45, window_results: int = 20
) -> list[str]:
    """Colour of each result of one player's `blocks`, in the frame's row order.

    The window as of `as_of` (a datetime like `ended_at`) holds the results with
    `as_of − window_days < ended_at ≤ as_of`, and of those the `window_results` most recent
    (later `ended_at` first, then higher `block_no`). **Decision**: blue marks the
    `window_results`-th most recent result only when the window is full; a result after
    `as_of` is outside the window (grey).
    """
    ranked = blocks.with_row_index("_row").with_columns(
        (
            (pl.col("ended_at") > as_of - timedelta(days=window_days))
            & (pl.col("ended_at") <= as_of)
        ).alias("_recent")
    )
    recent = ranked.filter("_recent").sort(
        ["ended_at", "block_no"], descending=[True, True], maintain_order=True
    )
    recent = recent.with_row_index("_age", offset=1).filter(pl.col("_age") <= window_results)
    colour = dict.fromkeys(ranked["_row"].to_list(), OUT_OF_WINDOW)
    for row, age in zip(recent["_row"].to_list(), recent["_age"].to_list(), strict=True):
        colour[row] = NEXT_TO_LEAVE if age == window_results else IN_WINDOW
    return [colour[row] for row in ranked["_row"].to_list()]


def chart_simultane(
    blocks: pl.DataFrame,
    player_id: str,
    out: Path,
    window_days: int = 45,
    window_results: int = 20,
    timezone: str = "Europe/Paris",
) -> Path:
    """Draw the player's curve as a PNG at `out` (folders created); returns `out`.

    Dates are shown in the platform's `timezone`.
    """
    mine = blocks.filter(pl.col("player_id") == player_id).sort("ended_at", "block_no")
    if mine.is_empty():
        raise ValueError(f"no results for player {player_id}")
    as_of = mine["ended_at"].max()
    colours = point_colours(mine, as_of, window_days, window_results)
    dates = mine["ended_at"].to_list()
    pct_cumul = mine["pct_cumul"].to_list()

    fig, ax = plt.subplots(figsize=(10, 5), dpi=100)
    ax.axhline(100, color="black", linewidth=0.6, linestyle=":", label="bot (100 %)")
    pct_actuel = mine["pct_actuel"].cast(pl.Float64).fill_null(float("nan")).to_list()
    ax.plot(dates, pct_actuel, color=PCT_ACTUEL, linewidth=2, label="% actuel")
    labels = {
        IN_WINDOW: "result in the window (% cumul of 20 deals)",
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
    ax.set_xlabel("date of the result (20th deal of the block)")
    ax.set_ylabel("% (100 = the bot)")
    locator = mdates.AutoDateLocator(tz=zone)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    plt.close(fig)
    return out
