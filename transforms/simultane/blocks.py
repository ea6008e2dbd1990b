"""% cumul (blocks of 20 deals) and % actuel (moving average) of the Simultané (spec).

A player's scored deals in chronological order (played_at = finished_at else started_at; equal
times by tournament_id, then deal_no) are cut into non-overlapping blocks of `block_deals`
deals; each full block is one result dated by its last deal. The incomplete last block is
pending and not output. Deals that are not scored (no bot reference) have no P and are left
out of the blocks (**our reading**: they are not deals the player can be measured on).

% actuel as of t: the results dated in (t - window_days, t] (window_days x 24 h), of those the
`window_results` most recent; with k >= 3 of them drop one best and one worst and average the
k - 2 others, with k <= 2 the plain mean; `representative` = (k = window_results).
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from transforms.calendar import month_expr
from transforms.simultane.options import SimultaneOptions

PLAYER = "player_id"
TS = pl.Datetime("us", "UTC")


COLUMNS = ("player_id", "block_no", "started_at", "ended_at", "month", "pct_cumul", "pct_actuel",
           "k", "representative", "in_window")  # fmt: skip


def blocks(
    deal_results: pl.LazyFrame,
    opts: SimultaneOptions,
    as_of: datetime | None = None,
    numbered: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Table `simultane_blocks` (humans, one row per full block), from the full deal history.

    Columns: player_id, block_no (1, 2, ... per player), started_at (played_at of the block's
    first deal), ended_at (played_at of its last deal = the result's date), month (of ended_at
    in the platform time zone), pct_cumul (mean P of the block, unfinished = 0), pct_actuel (as
    of ended_at), k (results used for it), representative (k == window_results), in_window (the
    result is one of the <= window_results used for % actuel as of `as_of`, default the latest
    ended_at in the data). Sorted by player_id, block_no. `numbered`: the `numbered_deals` of
    `deal_results` when the caller has them already.
    """
    results = block_results(deal_results, opts, numbered=numbered).cache()  # used three times below
    return in_window(with_actuel(results, results, opts), results, opts, as_of)


def numbered_deals(deal_results: pl.LazyFrame, opts: SimultaneOptions) -> pl.LazyFrame:
    """The scored human deals given (player_id and tournament_id Categorical, played_at,
    deal_no, pct, and raw_month when given), each with its block_no: its place in the
    player's chronological order cut into blocks of block_deals, numbered from 1 at the
    player's first deal given."""
    # Position of each deal in its player's chronological order: a rank within the player
    # (no global sort of the deals; (played_at, tournament_id, deal_no) is unique per player).
    # The ids are made Categorical first: each string is hashed once, the window and the
    # group-by then run on integer codes, and categoricals still compare lexically, so the
    # tie-break by tournament_id is the spec's.
    order = pl.struct("played_at", "tournament_id", "deal_no").rank("ordinal").over(PLAYER)
    raw = [c for c in ("raw_month",) if c in deal_results.collect_schema().names()]
    return (
        deal_results.filter(~pl.col("is_bot") & pl.col("scored"))
        .select(
            pl.col(PLAYER, "tournament_id").cast(pl.Categorical),
            "played_at",
            "deal_no",
            "pct",
            *raw,
        )
        .with_columns(block_no=((order.cast(pl.Int64) - 1) // opts.block_deals + 1))
    )


def block_results(
    deal_results: pl.LazyFrame,
    opts: SimultaneOptions,
    done: pl.LazyFrame | None = None,
    numbered: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The full blocks of the deals given (player_id, block_no, started_at, ended_at, month,
    pct_cumul). `done` (player_id, blocks): the deals given are, for the players it lists,
    those after their first `blocks` blocks, whose numbering continues from there.
    `numbered`: the `numbered_deals` of `deal_results` when the caller has them already."""
    deals = numbered_deals(deal_results, opts) if numbered is None else numbered
    results = (
        deals.group_by([PLAYER, "block_no"])
        .agg(
            pl.len().alias("_deals"),
            pl.col("played_at").min().alias("started_at"),
            pl.col("played_at").max().alias("ended_at"),
            # exact sum of P in fixed point (1e-9, the spec's comparison precision): float
            # sums depend on the order the streaming engine combines rows in, this does not
            ((pl.col("pct") * 1e9).round().cast(pl.Int64).sum() / pl.len() / 1e9).alias(
                "pct_cumul"
            ),
        )
        .filter(pl.col("_deals") == opts.block_deals)
        .drop("_deals")
        .with_columns(pl.col(PLAYER).cast(pl.String), month=month_expr("ended_at", opts.timezone))
    )
    if done is not None:
        results = results.join(
            done.select(PLAYER, pl.col("blocks").cast(pl.Int64)), on=PLAYER, how="left"
        ).with_columns(block_no=pl.col("block_no") + pl.col("blocks").fill_null(0))
    return results.select(PLAYER, "block_no", "started_at", "ended_at", "month", "pct_cumul")


OPEN_COLUMNS = ("player_id", "played_at", "tournament_id", "deal_no", "pct", "raw_month")


def open_deals(
    numbered: pl.LazyFrame, opts: SimultaneOptions, first: str, last: str
) -> pl.LazyFrame:
    """Each player's open block at the end of every month from `first` to `last`: their
    scored deals played by the month's end that come after their last full block ending by
    then (fewer than block_deals), and their deals played later of the tournaments whose
    raw_month (their partition) is that month or before: with them, the deals after that
    month end are those of the later partitions. `numbered`: the player's `numbered_deals`
    (with raw_month) from their first deal, or from one right after a full block.

    A deal is open from the earlier of its own month and its raw_month to the month before
    its block's end (to `last` while its block is not full). Columns: OPEN_COLUMNS
    (player_id and tournament_id as String), then month."""
    tz = opts.timezone

    def index(month: pl.Expr) -> pl.Expr:  # months as consecutive integers
        return month.str.slice(0, 4).cast(pl.Int32) * 12 + month.str.slice(5, 2).cast(pl.Int32) - 1

    def lit(month: str) -> pl.Expr:
        return index(pl.lit(month))

    block = [PLAYER, "block_no"]
    # per block first: only a block not full, or whose deals start (or are stored) in a month
    # before its end's and that ends after `first`, can have an open deal (most full blocks
    # start and end in one month); the deals of the others are not looked at one by one
    ends = (
        numbered.group_by(block)
        .agg(
            _full=pl.len() == opts.block_deals,
            _start=pl.col("played_at").min(),
            _end=pl.col("played_at").max(),
            _raw=pl.col("raw_month").min(),
        )
        .with_columns(_end_month=index(month_expr("_end", tz)))
        .filter(
            ~pl.col("_full")
            | (
                (
                    pl.min_horizontal(index(month_expr("_start", tz)), index(pl.col("_raw")))
                    < pl.col("_end_month")
                )
                & (pl.col("_end_month") > lit(first))
            )
        )
        .select(*block, "_full", "_end_month")
    )
    spans = (
        numbered.join(ends, on=block, how="inner")
        .with_columns(
            _from=pl.max_horizontal(
                pl.min_horizontal(index(month_expr("played_at", tz)), index(pl.col("raw_month"))),
                lit(first),
            ),
            _to=pl.min_horizontal(
                pl.when("_full").then(pl.col("_end_month") - 1).otherwise(lit(last)),
                lit(last),
            ),
        )
        .filter(pl.col("_from") <= pl.col("_to"))
    )
    month = pl.int_ranges("_from", pl.col("_to") + 1, dtype=pl.Int32)
    return (
        spans.with_columns(_month=month)
        .explode("_month")
        .select(
            pl.col(PLAYER).cast(pl.String),
            "played_at",
            pl.col("tournament_id").cast(pl.String),
            "deal_no",
            "pct",
            "raw_month",
            pl.format(
                "{}-{}",
                (pl.col("_month") // 12).cast(pl.String).str.zfill(4),
                (pl.col("_month") % 12 + 1).cast(pl.String).str.zfill(2),
            ).alias("month"),
        )
    )


def with_actuel(
    results: pl.LazyFrame, history: pl.LazyFrame, opts: SimultaneOptions
) -> pl.LazyFrame:
    """`results` with pct_actuel, k and representative as of each one's own date, from the
    player's results in `history` (which holds `results`, and before them at least the
    window_results + 1 results of the player that precede them, or all)."""
    own_dates = results.select(PLAYER, pl.col("ended_at").alias("as_of"), "block_no")
    actuel = pct_actuel_at(history, own_dates, opts)
    return results.join(actuel, on=[PLAYER, "block_no"], how="left")


def in_window(
    blocks: pl.LazyFrame,
    history: pl.LazyFrame,
    opts: SimultaneOptions,
    as_of: datetime | None = None,
) -> pl.LazyFrame:
    """`blocks` with in_window: the result is one of those % actuel uses as of `as_of`
    (default the latest result date of `history`). `history`: the players' results (player_id,
    block_no, ended_at): all of them, or all those dated after as_of - window_days and the
    window_results + 1 before them. Columns of COLUMNS, sorted by player_id, block_no."""
    if as_of is None:
        latest = history.select(pl.col("ended_at").max().alias("as_of"))
    else:
        latest = pl.LazyFrame({"as_of": [as_of]}, schema={"as_of": TS})
    window = (
        history.select(PLAYER)
        .unique()
        .join(latest, how="cross")
        .pipe(_window_bounds, history, opts)
        .select(PLAYER, "_first", "_hi")
    )
    return (
        blocks.join(window, on=PLAYER, how="left")
        .with_columns(
            in_window=pl.col("block_no")
            .is_between(pl.col("_first"), pl.col("_hi"))
            .fill_null(False)
        )
        .select(*COLUMNS)
        .sort([PLAYER, "block_no"])
    )


def _window_bounds(
    points: pl.LazyFrame, results: pl.LazyFrame, opts: SimultaneOptions
) -> pl.LazyFrame:
    """Add to each (player_id, as_of) the block_no range [_first, _hi] of its window.

    _hi = last block dated <= as_of; _lo = last block dated <= as_of - window (excluded);
    block numbers grow with the date, so the window is (_lo, _hi] cut to its last
    `window_results`. An empty window has _first > _hi.
    """
    last_by_date = (
        results.group_by([PLAYER, "ended_at"])
        .agg(pl.col("block_no").max().alias("_no"))
        .sort("ended_at")
    )
    sorted_points = points.with_columns(_since=pl.col("as_of") - pl.duration(days=opts.window_days))

    def last_block_before(frame: pl.LazyFrame, on: str, name: str) -> pl.LazyFrame:
        return (
            frame.sort(on)
            .join_asof(
                last_by_date.rename({"_no": name}),
                left_on=on,
                right_on="ended_at",
                by=PLAYER,
                strategy="backward",
                check_sortedness=False,  # both sides are sorted on the key just above
            )
            .drop("ended_at")
        )

    bounded = last_block_before(sorted_points, "as_of", "_hi")
    bounded = last_block_before(bounded, "_since", "_lo")
    hi = pl.col("_hi").fill_null(0)
    lo = pl.max_horizontal(pl.col("_lo").fill_null(0), hi - opts.window_results)
    return bounded.with_columns(_hi=hi, _first=lo + 1).drop("_lo", "_since")


def trimmed_mean(total: pl.Expr, best: pl.Expr, worst: pl.Expr, k: pl.Expr) -> pl.Expr:
    """% actuel of k results: drop one best and one worst when k >= 3, else the plain mean."""
    return (
        pl.when(k >= 3)
        .then((total - best - worst) / (k - 2))
        .when(k > 0)
        .then(total / k)
        .cast(pl.Float64)
    )


def pct_actuel_at(
    blocks: pl.LazyFrame, points: pl.LazyFrame, opts: SimultaneOptions
) -> pl.LazyFrame:
    """% actuel of each (player_id, as_of) of `points`, from the results of `blocks`.

    `blocks` needs player_id, block_no, ended_at, pct_cumul; `points` needs player_id and
    as_of (UTC datetime) and may carry other columns, which are kept. Adds pct_actuel (null
    when no result is in the window), k (results used) and representative (k ==
    window_results). Rows come back in the order of `points`.
    """
    width = opts.window_results
    results = blocks.select(PLAYER, "block_no", "ended_at", "pct_cumul")
    # The window is the block_no range [_first, _hi] (at most `width` blocks, numbered 1, 2, ...
    # per player): fetch the results _hi, _hi - 1, ... by shifting the player's sorted results
    # (a shift that crosses to another player lands below block 1, hence below _first).
    recent = results.sort([PLAYER, "block_no"]).select(
        PLAYER,
        pl.col("block_no").alias("_hi"),
        *[pl.col("pct_cumul").shift(o).alias(f"_r{o}") for o in range(width)],
    )
    used = [
        pl.when(pl.col("_hi") - o >= pl.col("_first")).then(pl.col(f"_r{o}")) for o in range(width)
    ]
    bounded = points.with_columns(_row=pl.int_range(pl.len(), dtype=pl.Int64)).pipe(
        _window_bounds, results, opts
    )
    k = (pl.col("_hi") - pl.col("_first") + 1).clip(lower_bound=0)
    return (
        bounded.join(recent, on=[PLAYER, "_hi"], how="left")
        .with_columns(
            pct_actuel=trimmed_mean(
                pl.sum_horizontal(used), pl.max_horizontal(used), pl.min_horizontal(used), k
            ),
            k=k,
            representative=k == width,
        )
        .sort("_row")
        .drop("_row", "_first", "_hi", *[f"_r{o}" for o in range(width)])
    )
