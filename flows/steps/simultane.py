"""Simultané steps: deal and tournament results of one bronze partition; the history tables
(blocks, % actuel, monthly and daily Indice/Victoire) of every month from a first one.

What depends on what: deal- and tournament-level results of a partition depend only on its
bronze (a tournament's rows share its start, hence its partition); a player's 20-deal blocks
and % actuel run over their whole history, so new deals change blocks ending at or after them;
Indice and Victoire are per month. A rebuild of partitions {P…} therefore recomputes their
deal-level results, and the history tables of every month from min(P…) − 1 on. A nightly
continues the blocks from the published state at a month end before them (each player's last
blocks and open block: simultane_player_state, simultane_open_deals) and reads only the deal
partitions holding later deals (simultane_deal_span says which).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import polars as pl

from flows.steps.context import (
    COMPACT_FILES,
    StepContext,
    buckets,
    compact_bronze,
    in_bucket,
    partition_spans,
    rescored_partitions,
    resolved,
)
from flows.steps.delta import Delta, delta, kept_rows, put_rules, rules_digest
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
    month_start,
    shift_month,
)
from transforms.issues import DATA_ISSUES_SCHEMA
from transforms.simultane.blocks import COLUMNS

TOURNAMENT = "tournament_id"
SPAN = "simultane_deal_span"  # per deal-result partition: its rows and last deal times
OPEN = "simultane_open_deals"


SPAN_SOURCE = {"is_bot": pl.Boolean, "scored": pl.Boolean, "played_at": pl.Datetime("us", "UTC")}


def deal_span(deal_results: pl.DataFrame) -> pl.DataFrame:
    """One row: the deal results' count, last played_at, first and last played_at of a
    scored human deal (null when none)."""
    human = pl.col("played_at").filter(pl.col("scored") & ~pl.col("is_bot"))
    return deal_results.select(
        pl.len().cast(pl.Int64).alias("rows"),
        pl.col("played_at").max().alias("last_played_at"),
        human.min().alias("first_scored_at"),
        human.max().alias("last_scored_at"),
    )


def month_step(ctx: StepContext, part: str) -> list[Operation]:
    """Deal and tournament results of one partition, in tournament batches of ≤ batch_rows:
    of every tournament, or (a nightly's delivery, delta.py) of the tournaments its new
    bronze holds, the published rows of the others kept — in their files, the new rows added
    beside them, when no published row is of a rescored tournament (the partition is
    rewritten as one file once it holds more than COMPACT_FILES)."""
    from transforms.simultane.scoring import tournament_month
    from transforms.simultane.tournaments import score_tournaments

    opts = ctx.settings.simultane_options()
    digest = rules_digest(opts)
    change = delta(ctx, "simultane", part, TOURNAMENT, digest)
    tx = ctx.transaction()
    raw = ctx.bronze("simultane.deal", [part]).with_columns(tournament_month(opts).alias("month"))
    count = buckets(raw.select(pl.len()).collect().item(), ctx.settings.batch_rows)
    key = f"{RAW_MONTH}={part}"
    # a delivery of new tournaments only: the published files stay, the new rows are added
    added = change is not None and _only_new_units(ctx, key, change)
    kept: dict[str, pl.LazyFrame | None] = {}
    if change is not None:
        raw = change.bronze(ctx, "simultane.deal").with_columns(
            tournament_month(opts).alias("month")
        )
        if not added:
            kept = {table: kept_rows(ctx, table, part, change, TOURNAMENT) for table in RESULTS}
    issue_parts, spans, written = [], [], False
    if added:  # the span of the rows kept in their files
        published = ctx.wh.scan(RESULTS[0], [key], pending=list(ctx.pending))
        spans.append(deal_span(published.select(*SPAN_SOURCE).collect()))
    for bucket in range(count):
        mine = in_bucket(TOURNAMENT, bucket, count)
        deals, superseded = resolved(raw.filter(mine), "simultane.deal")
        deals = deals.collect()

        def score(keys, deals=deals):
            rows = deals if keys is None else deals.filter(pl.col(TOURNAMENT).is_in(keys))
            tables, issues = score_tournaments({"simultane.deal": rows}, opts).collect()
            return (*tables.values(), issues)  # deal results, tournament results, issues

        units = deals[TOURNAMENT].unique().sort().to_list()
        skip = change is not None and not units  # no rescored tournament in this bucket
        parts, failures = ([], []) if skip else isolated(units, score)
        scored = [[p[0] for p in parts], [p[1] for p in parts]]
        if change is not None:  # the published rows of the other tournaments
            for i, frame in enumerate(kept.values()):
                if frame is not None:
                    scored[i].insert(0, frame.filter(mine).collect())
        deal_results = pl.concat(scored[0]) if scored[0] else None
        tournaments = pl.concat(scored[1]) if scored[1] else None
        months = dict(deals.group_by(TOURNAMENT).agg(pl.col("month").first()).iter_rows())
        issue_parts += [
            superseded.collect(),
            *[p[2] for p in parts],
            failure_issues(failures, TOURNAMENT, months),
        ]
        if deal_results is None or (change is not None and not deal_results.height):
            continue
        spans.append(deal_span(deal_results))
        # written batch by batch: a partition never sits in memory whole
        write = tx.add if written or added else tx.put
        write("silver", "simultane_deal_results", key, deal_results)
        write("silver", "simultane_tournament_results", key, tournaments)
        tx.put_schema("silver", "simultane_deal_results", deal_results)
        tx.put_schema("silver", "simultane_tournament_results", tournaments)
        written = True
        del deals, deal_results, tournaments
    if change is not None and not written and not added:  # every tournament left out
        for table in RESULTS:
            tx.remove(table, key)
    for table in RESULTS if added else ():  # one file a delivery, up to COMPACT_FILES
        tx.compact("silver", table, key, max_files=COMPACT_FILES)
    span = pl.concat([deal_span(pl.DataFrame(schema=SPAN_SOURCE)), *spans]).select(
        pl.lit(part).alias(RAW_MONTH),
        pl.col("rows").sum(),
        pl.col("last_played_at").max(),
        pl.col("first_scored_at").min(),
        pl.col("last_scored_at").max(),
    )
    tx.put("silver", SPAN, key, span)
    tx.put_schema("silver", SPAN, span)
    compact_bronze(tx, "simultane", part)
    if change is not None:
        issue_parts.insert(0, change.kept_issues)
    issues = pl.concat([i.select(*DATA_ISSUES_SCHEMA) for i in issue_parts])
    put_issues(tx, "simultane", part, issues)
    put_rules(tx, "simultane", part, digest)
    return tx.ops


RESULTS = ("simultane_deal_results", "simultane_tournament_results")


def _only_new_units(ctx: StepContext, key: str, change: Delta) -> bool:
    """Whether the partition's published results (both tables have some) hold no row of
    the tournaments a nightly rescores: its rows are then kept in their files as they are."""
    pending = list(ctx.pending)
    for table in RESULTS:
        if not ctx.wh.entries(table, [key], pending=pending):
            return False
        rows = ctx.wh.scan(table, [key], pending=pending)
        if rows.select(change.changed().any()).collect().item():
            return False
    return True


@dataclasses.dataclass(frozen=True)
class HistoryPlan:
    """How the per-player history of a rebuild is cut: `shards` groups of players (by a
    stable hash of player_id), each a task of its own (a Dask worker), then one `finish`."""

    first: str  # daily and monthly change from this month
    first_block_month: str  # blocks change from this month (in_window moves with time)
    latest: datetime | None  # the as-of time of blocks (the date, else the latest deal)
    shards: int
    # the deal-result partitions the run rescored; None: every block from the deals
    rescored: tuple[str, ...] | None = None
    # the month end whose published state (blocks and open block) the blocks continue from,
    # and the deal-result partitions holding a scored deal after it; None: from every deal
    state_month: str | None = None
    after: tuple[str, ...] = ()
    first_open: str | None = None  # simultane_open_deals changes from this month


def history_plan(ctx: StepContext, first: str, parallelism: int = 1) -> HistoryPlan:
    """Count the history's rows (in this process: two small aggregates) and cut it into
    shards of at most batch_rows deals and batch_rows day x result rows, and at least
    `parallelism` (or setting cluster.history_shards) when there is more than one worker."""
    opts = ctx.settings.simultane_options()
    wh, pending = ctx.wh, list(ctx.pending)
    spans = _spans(ctx, pending)
    rows, last = spans.select(pl.col("rows").sum(), pl.col("last_played_at").max()).row(0)
    as_of_ts = end_of_day(ctx.as_of, opts.timezone) if ctx.as_of else None
    latest = as_of_ts or last
    first_block_month = first
    if latest is not None:
        window_start = latest - timedelta(days=opts.window_days)
        first_block_month = min(first, month_of(window_start, opts.timezone))
    # daily compares each player's days with their results of the month (days x results rows
    # per player): enough shards keep that product under batch_rows each
    expansion = (
        tournaments_from(ctx, first, pending)
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
    rescored, state_month, after = None, None, ()
    if not ctx.from_scratch and wh.entries("simultane_blocks", pending=pending):
        rescored = tuple(rescored_partitions(ctx, "simultane_deal_results"))
        # the first scored deal of the rescored partitions, as rescored or as published
        changed = [_spans(ctx, p, rescored) for p in (pending, None)]
        cut = pl.concat(changed).select(pl.col("first_scored_at").min()).item()
        if cut is not None:  # blocks change from the first changed deal
            first_block_month = min(first_block_month, month_of(cut, opts.timezone))
        # the state to continue from: the latest published month end before the first
        # changed deal and before the first rescored partition (its open block holds the
        # later deals of the partitions up to its month), from the month before the blocks
        # rewritten on (the blocks of those months complete it)
        point = cut if cut is not None else latest
        target = month_of(point, opts.timezone) if point is not None else None
        if cut is not None:
            target = shift_month(target, -1)
        if rescored and target is not None:
            target = min(target, shift_month(min(rescored).split("=", 1)[1], -1))
        floor = shift_month(first_block_month, -1)
        months = [m for m in wh.months(OPEN, pending) if target and floor <= m <= target]
        if months and wh.entries("simultane_player_state", pending=pending):
            state_month = months[-1]
            since = month_start(shift_month(state_month, 1), opts.timezone)
            after = tuple(_partitions_after(spans.filter(pl.col(RAW_MONTH) > state_month), since))
    first_open = first_block_month if state_month is None else shift_month(state_month, 1)
    return HistoryPlan(
        first, first_block_month, latest, shards, rescored, state_month, after, first_open
    )


SPAN_COLUMNS = {RAW_MONTH: pl.String, "rows": pl.Int64, "last_played_at": pl.Datetime("us", "UTC"),
                "first_scored_at": pl.Datetime("us", "UTC"),
                "last_scored_at": pl.Datetime("us", "UTC")}  # fmt: skip


def _spans(
    ctx: StepContext, pending: list[Operation] | None, parts: tuple[str, ...] | None = None
) -> pl.DataFrame:
    """simultane_deal_span of the partitions of simultane_deal_results (`parts`, or all) in a
    view (`pending`; None: as published), computed from the partition's rows where no span
    is published."""
    table = "simultane_deal_results"

    def compute(key: str) -> pl.DataFrame:
        rows = ctx.wh.scan(table, [key], pending=pending).select(*SPAN_SOURCE).collect()
        return deal_span(rows).select(pl.lit(key.split("=", 1)[1]).alias(RAW_MONTH), pl.all())

    return partition_spans(ctx, pending, table, SPAN, SPAN_COLUMNS, parts, compute)


def _partitions_after(spans: pl.DataFrame, since: datetime) -> list[str]:
    """The deal-result partitions (of their `_spans`) holding a scored human deal played
    from `since` on."""
    after = spans.filter(pl.col("last_scored_at") >= since)
    return [f"{RAW_MONTH}={m}" for m in after[RAW_MONTH].sort()]


def history_shard(ctx: StepContext, plan: HistoryPlan, shard: int) -> list[Operation]:
    """Blocks, open blocks (from the plan's state, else over each player's whole history),
    month-end states and daily rows of the players of one shard, written as that shard's
    files of every month they change."""
    from transforms.simultane.blocks import blocks, numbered_deals, open_deals
    from transforms.simultane.monthly import daily

    opts = ctx.settings.simultane_options()
    tx, pending = ctx.transaction(), list(ctx.pending)
    mine = in_bucket("player_id", shard, plan.shards)
    last = month_of(plan.latest, opts.timezone) if plan.latest is not None else None
    if plan.state_month is None:  # every player from their first deal
        history = _deals(ctx)
        deals = history.filter(mine).pipe(numbered_deals, opts).collect()
        block_rows = blocks(history.filter(mine), opts, plan.latest, deals.lazy()).collect()
    else:
        block_rows, deals = _continued_blocks(ctx, plan, mine)
    if last is not None and plan.first_open <= last:
        open_rows = open_deals(deals.lazy(), opts, plan.first_open, last).collect()
    else:
        open_rows = open_deals(deals.lazy(), opts, "0000-01", "0000-01").collect().clear()
    tournaments = tournaments_from(ctx, plan.first, pending).filter(mine)
    daily_rows = daily(tournaments, opts).collect()
    state_rows = block_states(block_rows, plan.first_block_month, last, opts)
    block_month = plan.first_block_month
    for table, rows, first in (
        ("simultane_blocks", block_rows, block_month),
        ("simultane_daily", daily_rows, plan.first),
        ("simultane_player_state", state_rows, block_month),
        (OPEN, open_rows, plan.first_open),
    ):
        rows = rows.filter(pl.col("month") >= first)
        order = ["month", "player_id", *[c for c in ("date", "block_no", "played_at",
                 "tournament_id", "deal_no") if c in rows.columns]]  # fmt: skip
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
    wh, pending, table = ctx.wh, list(ctx.pending), "simultane_blocks"
    first = plan.first_block_month
    before = shift_month(first, -1)
    parts = [k for k in wh.partitions("simultane_player_state", pending) if _month(k) == before]
    months = wh.months(table, pending)
    if not parts and months and months[0] < first:  # no state for the blocks before
        return wh.scan(table, pending=pending).drop("in_window").filter(mine)
    columns = [c for c in COLUMNS if c != "in_window"]
    frames = [_scan_months(ctx, table, lambda m: m >= first, pending).select(columns)]
    if parts:
        state = wh.scan("simultane_player_state", parts, pending=pending).select(STATE_COLUMNS)
        frames.append(
            state.with_columns(month=month_expr("ended_at", opts.timezone)).select(columns)
        )
    return pl.concat(frames).filter(mine)


DEAL_COLUMNS = ["player_id", "is_bot", "scored", "played_at", "tournament_id", "deal_no", "pct"]
DEAL_SCHEMA = {"player_id": pl.String, "is_bot": pl.Boolean, "scored": pl.Boolean,
               "played_at": pl.Datetime("us", "UTC"), "tournament_id": pl.String,
               "deal_no": pl.Int64, "pct": pl.Float64, RAW_MONTH: pl.String}  # fmt: skip


def _continued_blocks(
    ctx: StepContext, plan: HistoryPlan, mine: pl.Expr
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The blocks of one shard's players, continued from the published state at the end of
    plan.state_month (no deal up to then changed): the blocks ending by then are kept; the
    player's open block then (simultane_open_deals) and their deals played after it (in
    plan.after, the partitions that can hold one) are cut into blocks numbered from there,
    whose % actuel reads the kept results; in_window is recomputed for every block as of the
    plan's date. Also returns those deals, numbered (`numbered_deals`) from the open block."""
    from transforms.simultane.blocks import block_results, in_window, numbered_deals, with_actuel

    opts = ctx.settings.simultane_options()
    wh, pending, player = ctx.wh, list(ctx.pending), "player_id"
    month = plan.state_month
    kept = _blocks_before(ctx, plan, mine, opts).filter(pl.col("month") <= month).collect()
    done = kept.group_by(player).agg(pl.col("block_no").max().alias("blocks"))
    since = month_start(shift_month(month, 1), opts.timezone)
    frames = [
        wh.scan(OPEN, [k], pending=pending)
        .filter(mine)
        .select(
            player,
            pl.lit(False).alias("is_bot"),
            pl.lit(True).alias("scored"),
            "played_at",
            "tournament_id",
            "deal_no",
            "pct",
            RAW_MONTH,
        )
        for k in wh.partitions(OPEN, pending)
        if k.split("/")[0] == f"month={month}"
    ]
    if plan.after:
        frames.append(_deals(ctx, plan.after).filter(mine & (pl.col("played_at") >= since)))
    deals = (
        pl.concat(frames, how="vertical_relaxed").pipe(numbered_deals, opts).collect()
        if frames
        else numbered_deals(_deals(ctx, ()), opts).collect()
    )
    fresh = block_results(deals.lazy(), opts, done.lazy(), numbered=deals.lazy()).collect()
    results = ["player_id", "block_no", "ended_at", "pct_cumul"]
    earlier = pl.concat([kept.select(results), fresh.select(results)])
    fresh = with_actuel(fresh.lazy(), earlier.lazy(), opts).collect()
    rows = pl.concat([kept, fresh], how="diagonal_relaxed")
    return in_window(rows.lazy(), earlier.lazy(), opts, plan.latest).collect(), deals


def _deals(ctx: StepContext, parts: tuple[str, ...] | None = None) -> pl.LazyFrame:
    """The columns of simultane_deal_results blocks read (DEAL_COLUMNS) and each deal's
    raw_month (its partition), of some partitions (`parts`) or all."""
    wh, pending, table = ctx.wh, list(ctx.pending), "simultane_deal_results"
    keys = [k for k in wh.partitions(table, pending) if k.startswith(f"{RAW_MONTH}=")]
    frames = [
        wh.scan(table, [k], pending=pending).select(
            *DEAL_COLUMNS, pl.lit(k.split("=", 1)[1]).alias(RAW_MONTH)
        )
        for k in (keys if parts is None else parts)
    ]
    if not frames:  # no partition: no row, with the columns
        return pl.LazyFrame(schema=DEAL_SCHEMA)
    return pl.concat(frames)


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
        (OPEN, plan.first_open),
    ):
        for key in wh.partitions(table, pending):
            month = key.split("/")[0].removeprefix("month=")
            if key.startswith("month=") and month >= first:
                tx.remove(table, key)
    tx.extend(shard_ops)
    view = tx.view()
    tournaments = tournaments_from(ctx, plan.first, view)
    as_of_ts = end_of_day(ctx.as_of, opts.timezone) if ctx.as_of else None
    block_rows = _actuel_blocks(ctx, plan.first, as_of_ts, view)
    daily_rows = _scan_months(ctx, "simultane_daily", lambda m: m >= plan.first, view)
    monthly_rows = monthly(tournaments, block_rows, opts, as_of_ts, daily_rows).collect()
    put_history(tx, "simultane_monthly", monthly_rows, plan.first, view)
    return tx.ops


def _month(key: str) -> str:
    """The month of a `month=M[/shard=S]` or `raw_month=M` partition key ("" for another)."""
    head = key.split("/")[0]
    return head.split("=", 1)[1] if "=" in head else ""


def _scan_months(ctx: StepContext, table: str, keep, pending: list[Operation]) -> pl.LazyFrame:
    """The rows of a table's partitions whose month passes `keep` (and its `_schema`)."""
    parts = [k for k in ctx.wh.partitions(table, pending) if k.startswith("_") or keep(_month(k))]
    return ctx.wh.scan(table, parts, pending=pending)


def tournaments_from(ctx: StepContext, first: str, pending: list[Operation]) -> pl.LazyFrame:
    """simultane_tournament_results of the months from `first`, read from the partitions that
    can hold them (a tournament's raw month is at most one month before its published one)."""
    floor = shift_month(first, -1)
    rows = _scan_months(ctx, "simultane_tournament_results", lambda m: m >= floor, pending)
    return rows.filter(pl.col("month") >= first)


def _actuel_blocks(
    ctx: StepContext, first: str, as_of: datetime | None, view: list[Operation]
) -> pl.LazyFrame:
    """The blocks % actuel of the months from `first` reads (player_id, block_no, ended_at,
    pct_cumul): those of the months after `edge`, the month before the earliest start of
    their windows, and each player's last ones ending by then (simultane_player_state of
    `edge`); every block when that state is not published."""
    opts = ctx.settings.simultane_options()
    wh, columns = ctx.wh, ["player_id", "block_no", "ended_at", "pct_cumul"]
    months = wh.months("simultane_blocks", view)
    if months and as_of is None:  # monthly's as-of: the latest block's end
        newest = wh.scan("simultane_blocks", [f"month={months[-1]}"], pending=view)
        as_of = newest.select(pl.col("ended_at").max()).collect().item()
    if not months or as_of is None:
        return wh.scan("simultane_blocks", pending=view).select(columns)
    month_end = month_start(shift_month(first, 1), opts.timezone) - timedelta(microseconds=1)
    start = min(month_end, as_of) - timedelta(days=opts.window_days)
    edge = shift_month(month_of(start, opts.timezone), -1)
    state = [k for k in wh.partitions("simultane_player_state", view) if _month(k) == edge]
    if months[0] <= edge and not state:
        return wh.scan("simultane_blocks", pending=view).select(columns)
    recent = _scan_months(ctx, "simultane_blocks", lambda m: m > edge, view).select(columns)
    if not state:
        return recent
    return pl.concat(
        [recent, wh.scan("simultane_player_state", state, pending=view).select(columns)]
    )


def shard_key(month: str, shard: int, shards: int) -> str:
    """The partition of one month of one shard (`month=M` when there is one shard)."""
    return f"month={month}" if shards == 1 else f"month={month}/shard={shard:04d}"


def history_step(ctx: StepContext, first: str) -> list[Operation]:
    """Blocks, % actuel, monthly and daily tables of every month ≥ `first`, in this process
    (the flows of flows/nightly.py send the shards to workers instead)."""
    plan = history_plan(ctx, first)
    shard_ops = [op for shard in range(plan.shards) for op in history_shard(ctx, plan, shard)]
    return history_finish(ctx, plan, shard_ops)
