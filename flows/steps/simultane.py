"""Simultané steps: deal and tournament results of one bronze partition; the history tables
(blocks, % actuel, monthly and daily Indice/Victoire) of every month from a first one.

What depends on what: deal- and tournament-level results of a partition depend only on its
bronze (a tournament's rows share its start, hence its partition); a player's 20-deal blocks
and % actuel run over their whole history, so new deals change blocks ending at or after them;
Indice and Victoire are per month. A rebuild of partitions {P…} therefore recomputes their
deal-level results, and the history tables of every month from min(P…) − 1 on.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import polars as pl

from flows.steps.context import (
    StepContext,
    buckets,
    compact_bronze,
    in_bucket,
    rescored_partitions,
    resolved,
)
from flows.steps.isolate import failure_issues, isolated
from flows.steps.outputs import put_history, put_issues
from flows.storage.operations import Operation
from transforms.calendar import (
    RAW_MONTH,
    day_expr,
    end_of_day,
    month_expr,
    month_of,
    month_range,
    shift_month,
)
from transforms.issues import DATA_ISSUES_SCHEMA
from transforms.simultane.blocks import COLUMNS

TOURNAMENT = "tournament_id"


def month_step(ctx: StepContext, part: str) -> list[Operation]:
    """Deal and tournament results of one partition, in tournament batches of ≤ batch_rows."""
    from transforms.simultane.scoring import tournament_month
    from transforms.simultane.tournaments import score_tournaments

    opts = ctx.settings.simultane_options()
    tx = ctx.transaction()
    raw = ctx.bronze("simultane.deal", [part]).with_columns(tournament_month(opts).alias("month"))
    count = buckets(raw.select(pl.len()).collect().item(), ctx.settings.batch_rows)
    key = f"{RAW_MONTH}={part}"
    issue_parts = []
    for bucket in range(count):
        deals, superseded = resolved(
            raw.filter(in_bucket(TOURNAMENT, bucket, count)), "simultane.deal"
        )
        deals = deals.collect()

        def score(keys, deals=deals):
            rows = deals if keys is None else deals.filter(pl.col(TOURNAMENT).is_in(keys))
            tables, issues = score_tournaments({"simultane.deal": rows}, opts).collect()
            return (*tables.values(), issues)  # deal results, tournament results, issues

        units = deals[TOURNAMENT].unique().sort().to_list()
        parts, failures = isolated(units, score)
        deal_results = pl.concat([p[0] for p in parts]) if parts else None
        tournaments = pl.concat([p[1] for p in parts]) if parts else None
        months = dict(deals.group_by(TOURNAMENT).agg(pl.col("month").first()).iter_rows())
        issue_parts += [
            superseded.collect(),
            *[p[2] for p in parts],
            failure_issues(failures, TOURNAMENT, months),
        ]
        if deal_results is None:
            continue
        # written batch by batch: a partition never sits in memory whole
        write = tx.put if bucket == 0 else tx.add
        write("silver", "simultane_deal_results", key, deal_results)
        write("silver", "simultane_tournament_results", key, tournaments)
        tx.put_schema("silver", "simultane_deal_results", deal_results)
        tx.put_schema("silver", "simultane_tournament_results", tournaments)
        del deals, deal_results, tournaments
    compact_bronze(tx, "simultane", part)
    issues = pl.concat([i.select(*DATA_ISSUES_SCHEMA) for i in issue_parts])
    put_issues(tx, "simultane", part, issues)
    return tx.ops


@dataclasses.dataclass(frozen=True)
class HistoryPlan:
    """How the per-player history of a rebuild is cut: `shards` groups of players (by a
    stable hash of player_id), each a task of its own (a Dask worker), then one `finish`."""

    first: str  # daily and monthly change from this month
    first_block_month: str  # blocks change from this month (in_window moves with time)
    latest: datetime | None  # the as-of time of blocks (the date, else the latest deal)
    shards: int
    # the deal-result partitions the run rescored, whose players' blocks continue from the
    # published ones before their first changed deal; None: every block from the deals
    rescored: tuple[str, ...] | None = None


def history_plan(ctx: StepContext, first: str, parallelism: int = 1) -> HistoryPlan:
    """Count the history's rows (in this process: two small aggregates) and cut it into
    shards of at most batch_rows deals and batch_rows day x result rows, and at least
    `parallelism` (or setting cluster.history_shards) when there is more than one worker."""
    opts = ctx.settings.simultane_options()
    wh, pending = ctx.wh, list(ctx.pending)
    history = wh.scan("simultane_deal_results", pending=pending)
    rows, last = history.select(pl.len(), pl.col("played_at").max()).collect().row(0)
    as_of_ts = end_of_day(ctx.as_of, opts.timezone) if ctx.as_of else None
    latest = as_of_ts or last
    first_block_month = first
    if latest is not None:
        window_start = latest - timedelta(days=opts.window_days)
        first_block_month = min(first, month_of(window_start, opts.timezone))
    # daily compares each player's days with their results of the month (days x results rows
    # per player): enough shards keep that product under batch_rows each
    expansion = (
        wh.scan("simultane_tournament_results", pending=pending)
        .filter(pl.col("month") >= first)
        .with_columns(day_expr("tournament_start", opts.timezone).alias("_day"))
        .group_by("month", "player_id")
        .agg((pl.len() * pl.col("_day").n_unique()).alias("rows"))
        .select(pl.col("rows").sum())
        .collect()
        .item()
    )
    batch = ctx.settings.batch_rows
    wanted = ctx.settings.cluster.history_shards or (parallelism if parallelism > 1 else 1)
    shards = max(buckets(rows, batch), buckets(expansion or 0, batch), wanted)
    rescored = None
    if not ctx.from_scratch and wh.entries("simultane_blocks", pending=pending):
        rescored = tuple(rescored_partitions(ctx, "simultane_deal_results"))
        cut = _changed_deals(ctx, rescored).select(pl.col("played_at").min()).collect().item()
        if cut is not None:  # blocks change from the first changed deal
            first_block_month = min(first_block_month, month_of(cut, opts.timezone))
    return HistoryPlan(first, first_block_month, latest, shards, rescored)


def _changed_deals(ctx: StepContext, parts: tuple[str, ...]) -> pl.LazyFrame:
    """The scored human deals of the rescored partitions, as published before the run and as
    rescored (player_id, played_at): no other deal of the history changed."""
    wh, pending = ctx.wh, list(ctx.pending)
    if not parts:  # nothing rescored
        return pl.LazyFrame(schema={"player_id": pl.String, "played_at": pl.Datetime("us", "UTC")})
    table, parts = "simultane_deal_results", list(parts)
    frames = [
        wh.scan(table, parts, pending=p)
        for p in (pending, None)
        if wh.entries(table, parts, pending=p)
    ]  # as rescored, as published before
    if not frames:
        return _changed_deals(ctx, ())
    return pl.concat(
        [
            f.filter(~pl.col("is_bot") & pl.col("scored")).select("player_id", "played_at")
            for f in frames
        ]
    )


def history_shard(ctx: StepContext, plan: HistoryPlan, shard: int) -> list[Operation]:
    """Blocks (over each player's whole history) and daily rows of the players of one shard,
    written as that shard's files of every month they change."""
    from transforms.simultane.blocks import blocks
    from transforms.simultane.monthly import daily

    opts = ctx.settings.simultane_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    mine = in_bucket("player_id", shard, plan.shards)
    history = wh.scan("simultane_deal_results", pending=pending).select(DEAL_COLUMNS).filter(mine)
    if plan.rescored is None:
        block_rows = blocks(history, opts, plan.latest).collect()
    else:
        block_rows = _continued_blocks(ctx, plan, mine, history)
    tournaments = wh.scan("simultane_tournament_results", pending=pending).filter(
        (pl.col("month") >= plan.first) & mine
    )
    daily_rows = daily(tournaments, opts).collect()
    last = month_of(plan.latest, opts.timezone) if plan.latest is not None else None
    state_rows = block_states(block_rows, plan.first_block_month, last, opts)
    block_month = plan.first_block_month
    for table, rows, first in (
        ("simultane_blocks", block_rows, block_month),
        ("simultane_daily", daily_rows, plan.first),
        ("simultane_player_state", state_rows, block_month),
    ):
        rows = rows.filter(pl.col("month") >= first)
        order = ["month", "player_id", "date" if "date" in rows.columns else "block_no"]
        for (month,), part in rows.sort(order).group_by("month", maintain_order=True):
            if month is not None:
                tx.put("gold", table, shard_key(month, shard, plan.shards), part)
        if shard == 0:
            tx.put_schema("gold", table, rows)
    return tx.ops


STATE_COLUMNS = ["player_id", "block_no", "started_at", "ended_at", "pct_cumul", "pct_actuel", "k",
                 "representative"]  # fmt: skip


def block_states(blocks: pl.DataFrame, first: str, last: str | None, opts) -> pl.DataFrame:
    """simultane_player_state of every month from `first` to `last`: each player's last
    window_results + 1 blocks ending by the end of the month (what % actuel and the blocks
    after them read), `month` being the state's. `blocks`: every block of the players, or
    those of `first` on and each player's state before it."""
    keep = opts.window_results + 1
    ended = blocks.select(*STATE_COLUMNS, _month=month_expr("ended_at", opts.timezone))
    out = [
        ended.filter(pl.col("_month") <= month)
        .sort("player_id", "block_no")
        .group_by("player_id", maintain_order=True)
        .tail(keep)
        .select(*STATE_COLUMNS, month=pl.lit(month))
        for month in (month_range(first, last) if last and not blocks.is_empty() else [])
    ]
    frame = pl.concat(out) if out else None
    if frame is None:
        schema = {**blocks.select(*STATE_COLUMNS).schema, "month": pl.String}
        return pl.DataFrame(schema=schema)
    return frame


def _blocks_before(ctx: StepContext, plan: HistoryPlan, mine: pl.Expr, opts) -> pl.LazyFrame:
    """The published blocks a continuation reads: those of the months from
    plan.first_block_month on, and before them each player's last ones (their
    simultane_player_state at the end of the month before), or, with no state published,
    every block."""
    wh, pending = ctx.wh, list(ctx.pending)
    blocks = wh.scan("simultane_blocks", pending=pending)
    if not wh.entries("simultane_player_state", pending=pending):
        return blocks.drop("in_window").filter(mine)
    first = plan.first_block_month
    month = f"month={shift_month(first, -1)}"
    parts = [
        k for k in wh.partitions("simultane_player_state", pending) if k.split("/")[0] == month
    ]
    recent = [
        k
        for k in wh.partitions("simultane_blocks", pending)
        if k.startswith("month=") and k.split("/")[0] >= f"month={first}"
    ]
    frames = []
    if recent:
        frames.append(wh.scan("simultane_blocks", recent, pending=pending).drop("in_window"))
    if parts:
        state = wh.scan("simultane_player_state", parts, pending=pending).select(STATE_COLUMNS)
        frames.append(state.with_columns(month=month_expr("ended_at", opts.timezone)))
    if not frames:
        return blocks.drop("in_window").filter(mine).clear()
    columns = [c for c in COLUMNS if c != "in_window"]
    return pl.concat([f.select(columns) for f in frames]).filter(mine)


DEAL_COLUMNS = ["player_id", "is_bot", "scored", "played_at", "tournament_id", "deal_no", "pct"]


def _continued_blocks(
    ctx: StepContext, plan: HistoryPlan, mine: pl.Expr, history: pl.LazyFrame
) -> pl.DataFrame:
    """The blocks of one shard's players, continued from the published ones: a player's
    blocks that end before their first changed deal are kept; their later deals (after the
    last kept block) are cut into blocks numbered from there, whose % actuel reads the kept
    results; in_window is recomputed for every block as of the plan's date.

    A kept block's last deal is found by its time: when another deal of the player has that
    same time, which side of the block it falls on is not known without the deals before, and
    that player's blocks are recomputed from their first deal.
    """
    from transforms.simultane.blocks import block_results, in_window, with_actuel

    opts = ctx.settings.simultane_options()
    player, ended = "player_id", pl.col("ended_at")
    cuts = (
        _changed_deals(ctx, plan.rescored)
        .filter(mine)
        .group_by(player)
        .agg(pl.col("played_at").min().alias("_cut"))
    ).collect()
    published = _blocks_before(ctx, plan, mine, opts)
    kept = (
        published.join(cuts.lazy(), on=player, how="left")
        .filter(pl.col("_cut").is_null() | (ended < pl.col("_cut")))
        .drop("_cut")
        .collect()
    )
    done = cuts.join(
        kept.group_by(player).agg(pl.col("block_no").max().alias("blocks"), ended.max()),
        on=player,
        how="left",
    ).with_columns(pl.col("blocks").fill_null(0))
    if done.is_empty():  # no deal of these players changed: only in_window moves
        return in_window(kept.lazy(), kept.lazy(), opts, plan.latest).collect()
    scored = pl.col("scored") & ~pl.col("is_bot")
    since = done["ended_at"].min() if done["ended_at"].null_count() == 0 else None
    # the changed players' deals only (a predicate the scan applies as it reads), from the
    # earliest of their last kept blocks
    wanted = scored & pl.col(player).is_in(done[player].implode())
    after = (
        history.filter(wanted if since is None else wanted & (pl.col("played_at") >= since))
        .join(done.lazy().select(player, "ended_at"), on=player, how="inner")
        .filter(pl.col("ended_at").is_null() | (pl.col("played_at") >= pl.col("ended_at")))
        .collect()
    )
    at_end = pl.col("played_at") == pl.col("ended_at")
    tied = after.filter(at_end).group_by(player).len().filter(pl.col("len") > 1)[player]
    tail = after.filter(~at_end.fill_null(False) & ~pl.col(player).is_in(tied.implode()))
    again = history.filter(scored & pl.col(player).is_in(tied.implode())).collect()
    done = done.with_columns(
        pl.when(pl.col(player).is_in(tied.implode())).then(0).otherwise("blocks").alias("blocks")
    )
    kept = kept.filter(~pl.col(player).is_in(tied.implode()))
    deals = pl.concat([tail.select(DEAL_COLUMNS), again.select(DEAL_COLUMNS)])
    fresh = block_results(deals.lazy(), opts, done.lazy().select(player, "blocks")).collect()
    results = ["player_id", "block_no", "ended_at", "pct_cumul"]
    earlier = pl.concat([kept.select(results), fresh.select(results)])
    fresh = with_actuel(fresh.lazy(), earlier.lazy(), opts).collect()
    rows = pl.concat([kept, fresh], how="diagonal_relaxed")
    return in_window(rows.lazy(), earlier.lazy(), opts, plan.latest).collect()


def history_finish(
    ctx: StepContext, plan: HistoryPlan, shard_ops: list[Operation]
) -> list[Operation]:
    """The shards' files replace every month they change (earlier files of those months are
    unpublished first), then `simultane_monthly` over the whole blocks history and the new
    days (ranks need every player: one task)."""
    from transforms.simultane.monthly import monthly

    opts = ctx.settings.simultane_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    for table, first in (
        ("simultane_blocks", plan.first_block_month),
        ("simultane_daily", plan.first),
        ("simultane_player_state", plan.first_block_month),
    ):
        for key in wh.partitions(table, pending):
            month = key.split("/")[0].removeprefix("month=")
            if key.startswith("month=") and month >= first:
                tx.remove(table, key)
    tx.extend(shard_ops)
    view = tx.view()
    tournaments = wh.scan("simultane_tournament_results", pending=view).filter(
        pl.col("month") >= plan.first
    )
    block_rows = wh.scan("simultane_blocks", pending=view)
    daily_rows = wh.scan("simultane_daily", pending=view).filter(pl.col("month") >= plan.first)
    as_of_ts = end_of_day(ctx.as_of, opts.timezone) if ctx.as_of else None
    monthly_rows = monthly(tournaments, block_rows, opts, as_of_ts, daily_rows).collect()
    put_history(tx, "simultane_monthly", monthly_rows, plan.first, view)
    return tx.ops


def shard_key(month: str, shard: int, shards: int) -> str:
    """The partition of one month of one shard (`month=M` when there is one shard)."""
    return f"month={month}" if shards == 1 else f"month={month}/shard={shard:04d}"


def history_step(ctx: StepContext, first: str) -> list[Operation]:
    """Blocks, % actuel, monthly and daily tables of every month ≥ `first`, in this process
    (the flows of flows/nightly.py send the shards to workers instead)."""
    plan = history_plan(ctx, first)
    shard_ops = [op for shard in range(plan.shards) for op in history_shard(ctx, plan, shard)]
    return history_finish(ctx, plan, shard_ops)
